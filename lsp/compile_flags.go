package lsp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// Compile flags are found as clangd finds them: walking up from the file's directory, the
// first directory holding compile_commands.json (or build/compile_commands.json) or
// compile_flags.txt gives them. Every directory looked at is watched with fsnotify, so that
// creating, changing or removing one of those files reloads the flags (and re-warms the
// preamble checkpoints built with the old ones).

// Names of the compilation databases.
const (
	compileCommandsName = "compile_commands.json"
	compileFlagsName    = "compile_flags.txt"
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

	mu      sync.Mutex
	cache   map[string]flagSet // by file path
	watcher *fsnotify.Watcher  // nil when fsnotify is unavailable
	watched map[string]bool
	closed  bool
}

func newFlagStore(logf func(string, ...any), onChange func()) *flagStore {
	fs := &flagStore{logf: logf, onChange: onChange, cache: map[string]flagSet{}, watched: map[string]bool{}}
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

// lookupLocked walks up from path's directory to the first compilation database.
func (fs *flagStore) lookupLocked(path string) flagSet {
	if path == "" {
		return flagSet{}
	}
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		fs.addWatchLocked(dir)
		fs.addWatchLocked(filepath.Join(dir, "build"))
		for _, cand := range []string{filepath.Join(dir, compileCommandsName), filepath.Join(dir, "build", compileCommandsName)} {
			if data, err := os.ReadFile(cand); err == nil {
				flags, err := flagsFromCommands(data, path)
				if err != nil {
					fs.logf("%s: %v", cand, err)
					continue
				}
				return flagSet{Flags: flags, Source: cand}
			}
		}
		cand := filepath.Join(dir, compileFlagsName)
		if data, err := os.ReadFile(cand); err == nil {
			return flagSet{Flags: flagsFromFlagsTxt(data, dir), Source: cand}
		}
		if parent := filepath.Dir(dir); parent == dir {
			return flagSet{}
		}
	}
}

// flagsFromFlagsTxt parses compile_flags.txt: one flag per line, paths relative to its dir.
func flagsFromFlagsTxt(data []byte, dir string) []string {
	var args []string
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			args = append(args, line)
		}
	}
	return absolutize(args, dir)
}

// compileCommand is one entry of compile_commands.json.
type compileCommand struct {
	Directory string   `json:"directory"`
	File      string   `json:"file"`
	Command   string   `json:"command"`
	Arguments []string `json:"arguments"`
}

// flagsFromCommands picks path's entry (else one from the same directory, else the first, as
// clangd's interpolation falls back to a neighbour) and keeps the flags that matter for
// checking: the compiler, the input, the output and dependency-file options are dropped.
func flagsFromCommands(data []byte, path string) ([]string, error) {
	var cmds []compileCommand
	if err := json.Unmarshal(data, &cmds); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if len(cmds) == 0 {
		return nil, fmt.Errorf("no entries")
	}
	abs := func(c compileCommand) string {
		if filepath.IsAbs(c.File) {
			return filepath.Clean(c.File)
		}
		return filepath.Join(c.Directory, c.File)
	}
	pick := -1
	for i, c := range cmds {
		if abs(c) == filepath.Clean(path) {
			pick = i
			break
		}
	}
	if pick < 0 {
		for i, c := range cmds {
			if filepath.Dir(abs(c)) == filepath.Dir(path) {
				pick = i
				break
			}
		}
	}
	if pick < 0 {
		pick = 0
	}
	c := cmds[pick]
	args := c.Arguments
	if len(args) == 0 {
		args = splitCommand(c.Command)
	}
	if len(args) > 0 {
		args = args[1:] // the compiler
	}
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-c" || a == "-MD" || a == "-MMD" || a == "-MP" || a == "--":
		case a == "-o" || a == "-MF" || a == "-MT" || a == "-MQ":
			i++
		case strings.HasPrefix(a, "-o") && len(a) > 2:
		case a == c.File || (!strings.HasPrefix(a, "-") && filepath.Join(c.Directory, a) == abs(c)):
		default:
			out = append(out, a)
		}
	}
	return absolutize(out, c.Directory), nil
}

// splitCommand splits a shell command line (quotes and backslashes, no expansions).
func splitCommand(s string) []string {
	var args []string
	var cur strings.Builder
	inArg := false
	var quote rune
	esc := false
	for _, r := range s {
		switch {
		case esc:
			cur.WriteRune(r)
			esc = false
		case r == '\\' && quote != '\'':
			esc = true
			inArg = true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote = r
			inArg = true
		case r == ' ' || r == '\t' || r == '\n':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args
}

// pathFlags take a path, joined (-Ifoo) or as the next argument (-I foo).
var pathFlags = []string{"-I", "-iquote", "-isystem", "-idirafter", "-include", "-imacros", "--include-directory="}

// absolutize makes the paths of include options absolute against dir.
func absolutize(args []string, dir string) []string {
	out := make([]string, 0, len(args))
	fix := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		matched := false
		for _, f := range pathFlags {
			if a == f && i+1 < len(args) {
				out = append(out, a, fix(args[i+1]))
				i++
				matched = true
				break
			}
			if strings.HasPrefix(a, f) && len(a) > len(f) {
				out = append(out, f+fix(a[len(f):]))
				matched = true
				break
			}
		}
		if !matched {
			out = append(out, a)
		}
	}
	return out
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
