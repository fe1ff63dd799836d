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
// language is dropped, and returned: compile_flags.txt gives one set of flags for every file, so
// its -std=c++17 cannot be meant for a C file, and clang refuses the pair ("invalid argument
// '-std=c++17' not allowed with 'C'"; clangd shows that error and parses on, clangd/clangd#431).
func withLanguage(flags []string, lang string) (out []string, dropped []string) {
	isC := lang == "c"
	hasX, hasStd := false, false
	kept := make([]string, 0, len(flags))
	for _, f := range flags {
		if f == "-x" || (strings.HasPrefix(f, "-x") && len(f) > 2) {
			hasX = true
		}
		if v, ok := stdValue(f); ok {
			if cxx, known := stdIsCXX(v); known && cxx == isC {
				dropped = append(dropped, f)
				continue
			}
			hasStd = true
		}
		kept = append(kept, f)
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

// stdValue is the standard a -std=/--std= flag names.
func stdValue(f string) (string, bool) {
	for _, p := range []string{"-std=", "--std="} {
		if strings.HasPrefix(f, p) {
			return strings.TrimPrefix(f, p), true
		}
	}
	return "", false
}

// stdIsCXX says whether standard v (c17, gnu++20, iso9899:1999, …) is C++'s; known is false for
// the others (OpenCL's cl2.0, CUDA, HIP), which are left alone.
func stdIsCXX(v string) (cxx, known bool) {
	switch {
	case strings.HasPrefix(v, "c++"), strings.HasPrefix(v, "gnu++"):
		return true, true
	case strings.HasPrefix(v, "c") && len(v) > 1 && v[1] >= '0' && v[1] <= '9',
		strings.HasPrefix(v, "gnu") && len(v) > 3 && v[3] >= '0' && v[3] <= '9',
		strings.HasPrefix(v, "iso9899:"):
		return false, true
	}
	return false, false
}
