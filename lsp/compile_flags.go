package lsp

import (
	"path/filepath"
	"strings"
	"sync"

	"github.com/fsnotify/fsnotify"

	"github.com/hydra-lsp/hydra/checkers/clang/compiledb"
)

// Compile flags are found as clangd finds them (checkers/clang/compiledb): walking up from the
// file's directory, the first directory holding compile_commands.json (or
// build/compile_commands.json) or compile_flags.txt gives them, sanitized: nothing in them can
// make Hydra write a file, load code or run a program. Every directory looked at is watched with fsnotify, so that
// creating, changing or removing one of those files reloads the flags (and re-warms the
// preamble checkpoints built with the old ones).

// Names of the compilation databases.
const (
	compileCommandsName = compiledb.CommandsName
	compileFlagsName    = compiledb.FlagsName
)

// flagSet is the flags for one file and where they came from.
type flagSet struct {
	Flags  []string
	Source string // the database's path, or "" for the defaults
}

// flagStore caches flags per file and watches the directories it looked in.
type flagStore struct {
	logf     func(string, ...any)
	onChange func()
	// tell shows the user, once per database, which of its options were left out.
	tell func(string)

	mu      sync.Mutex
	cache   map[string]flagSet // by file path
	watcher *fsnotify.Watcher  // nil when fsnotify is unavailable
	watched map[string]bool
	told    map[string]bool // databases whose dropped options were told
	closed  bool
}

func newFlagStore(logf func(string, ...any), onChange func()) *flagStore {
	fs := &flagStore{logf: logf, onChange: onChange, cache: map[string]flagSet{}, watched: map[string]bool{}, told: map[string]bool{}}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		logf("compile flags will not be reloaded on change: %v", err)
		return fs
	}
	fs.watcher = w
	go fs.watch()
	return fs
}

func (fs *flagStore) watch() {
	for {
		select {
		case ev, ok := <-fs.watcher.Events:
			if !ok {
				return
			}
			base := filepath.Base(ev.Name)
			if base != compileCommandsName && base != compileFlagsName && base != "build" {
				continue
			}
			fs.mu.Lock()
			fs.cache = map[string]flagSet{}
			if base == "build" && ev.Has(fsnotify.Create) {
				fs.addWatchLocked(ev.Name)
			}
			fs.mu.Unlock()
			fs.logf("compile flags: %s changed (%s); reloading", ev.Name, ev.Op)
			if fs.onChange != nil {
				fs.onChange()
			}
		case err, ok := <-fs.watcher.Errors:
			if !ok {
				return
			}
			fs.logf("compile flags watcher: %v", err)
		}
	}
}

func (fs *flagStore) addWatchLocked(dir string) {
	if fs.watcher == nil || fs.watched[dir] || fs.closed {
		return
	}
	if err := fs.watcher.Add(dir); err != nil {
		return // a directory that does not exist or cannot be read is simply not watched
	}
	fs.watched[dir] = true
}

func (fs *flagStore) close() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.closed = true
	if fs.watcher != nil {
		fs.watcher.Close()
	}
}

// forFile returns the flags for the file at path (language "c" or "cpp"), from the cache or
// from the nearest compilation database.
func (fs *flagStore) forFile(path, lang string) flagSet {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	key := lang + "\x00" + path
	if f, ok := fs.cache[key]; ok {
		return f
	}
	f := fs.lookupLocked(path)
	var dropped []string
	f.Flags, dropped = withLanguage(f.Flags, lang)
	if len(dropped) > 0 {
		fs.logf("%s: %s names another language's standard; checking %s without it", f.Source, strings.Join(dropped, " "), path)
	}
	fs.cache[key] = f
	return f
}

// lookupLocked finds path's flags in the nearest compilation database (compiledb.Find, which
// also sanitizes them), watching every directory it looks in; what it left out is told once per
// database (tell).
func (fs *flagStore) lookupLocked(path string) flagSet {
	if path == "" {
		return flagSet{}
	}
	f, err := compiledb.Find(path, "", fs.addWatchLocked)
	if err != nil {
		fs.logf("compile flags for %s: %v", path, err)
	}
	for _, p := range f.Problems {
		fs.logf("compile flags: %s", p)
	}
	if f.Source != "" {
		fs.logf("compile flags for %s from %s: %s", path, f.Source, strings.Join(f.Args, " "))
	}
	if msg := f.Report(); msg != "" {
		fs.tellOnceLocked(f.Source, msg)
	}
	return flagSet{Flags: f.Args, Source: f.Source}
}

// tellOnce tells the user msg, the first time for key.
func (fs *flagStore) tellOnce(key, msg string) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.tellOnceLocked(key, msg)
}

func (fs *flagStore) tellOnceLocked(key, msg string) {
	if fs.told[key] {
		return
	}
	fs.told[key] = true
	fs.logf("%s", msg)
	if fs.tell != nil {
		go fs.tell(msg) // not under fs.mu: it writes to the client
	}
}

// withLanguage makes sure the flags name the language and a standard: -x from the document's
// language (clangd's languageId), and a default -std when none is given. A standard of the other
// language is dropped, and returned (compiledb.OtherLanguageStandard).
func withLanguage(flags []string, lang string) (out []string, dropped []string) {
	isC := lang == "c"
	kept, dropped := compiledb.OtherLanguageStandard(flags, isC)
	hasX, hasStd := false, false
	for _, f := range kept {
		if f == "-x" || (strings.HasPrefix(f, "-x") && len(f) > 2) {
			hasX = true
		}
		if _, ok := compiledb.StdValue(f); ok {
			hasStd = true
		}
	}
	var pre []string
	if !hasX {
		if isC {
			pre = append(pre, "-xc")
		} else {
			pre = append(pre, "-xc++")
		}
	}
	if !hasStd {
		if isC {
			pre = append(pre, "-std=c17")
		} else {
			pre = append(pre, "-std=c++17")
		}
	}
	return append(pre, kept...), dropped
}
