// Package compiledb finds a C or C++ file's compile flags in its project's compilation database
// as clangd does, and keeps of them only what changes how the code is parsed. Call Find.
//
// A workspace's files come with any clone, so nothing in them is trusted: the compiler a
// database names is never run, a response file is read only inside the project, and every
// option that writes a file, loads code or runs a program is dropped in every spelling
// (Sanitize). The Clang checker clears the same outputs once more on the invocation it builds
// (checkers/clang/shim/invocation.cpp), and drops the options Clang itself does not take (GCC's).
package compiledb

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Names of the compilation databases.
const (
	CommandsName = "compile_commands.json"
	FlagsName    = "compile_flags.txt"
)

// maxDatabase bounds what is read of a database (a large project's is tens of megabytes).
const maxDatabase = 512 << 20

// Flags are the compile flags for one file and where they came from.
type Flags struct {
	Args    []string  // the kept flags: no compiler, no input, nothing that writes or loads
	Source  string    // the database's path; "" when none was found
	Dropped []Dropped // what Sanitize left out
	// Problems are databases that were found but could not be used (unreadable, malformed,
	// empty): the search went on past them.
	Problems []string
}

// Report is the message that tells the user which of the database's options were left out,
// or "" when none worth telling was.
func (f Flags) Report() string { return Report(f.Source, f.Dropped) }

// Find returns the flags for file from its compilation database. Without dir, as clangd looks:
// from the file's directory up to the root, in each directory D the first of
// D/compile_commands.json, D/build/compile_commands.json and D/compile_flags.txt. With dir (an
// explicit --compile-commands-dir), only dir/compile_commands.json and dir/compile_flags.txt.
// visit, when not nil, is called with every directory looked in (for watching them). No
// database gives empty Flags and no error; an explicit dir without one is an error.
func Find(file, dir string, visit func(dir string)) (Flags, error) {
	if visit == nil {
		visit = func(string) {}
	}
	var problems []string
	try := func(d string, build bool) (Flags, bool) {
		visit(d)
		cands := []string{filepath.Join(d, CommandsName)}
		if build {
			visit(filepath.Join(d, "build"))
			cands = append(cands, filepath.Join(d, "build", CommandsName))
		}
		for _, c := range cands {
			f, err := fromCommands(c, d, file)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			return f, true
		}
		f, err := fromFlagsTxt(filepath.Join(d, FlagsName))
		if err == nil {
			return f, true
		}
		if !errors.Is(err, os.ErrNotExist) {
			problems = append(problems, err.Error())
		}
		return Flags{}, false
	}
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return Flags{}, fmt.Errorf("compile commands dir %s: %w", dir, err)
		}
		if f, ok := try(abs, false); ok {
			f.Problems = problems
			return f, nil
		}
		if len(problems) > 0 {
			return Flags{Problems: problems}, fmt.Errorf("compile commands dir %s: %s", dir, strings.Join(problems, "; "))
		}
		return Flags{}, fmt.Errorf("compile commands dir %s: no %s or %s there", dir, CommandsName, FlagsName)
	}
	if file == "" {
		return Flags{}, nil
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return Flags{}, fmt.Errorf("%s: %w", file, err)
	}
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		if f, ok := try(d, true); ok {
			f.Problems = problems
			return f, nil
		}
		if filepath.Dir(d) == d {
			return Flags{Problems: problems}, nil
		}
	}
}

// readDatabase reads a database file, refusing what is not a regular file or is too large.
func readDatabase(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	if st.Size() > maxDatabase {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d read", path, st.Size(), maxDatabase)
	}
	return os.ReadFile(path)
}

// fromFlagsTxt reads compile_flags.txt: one flag per line, paths relative to its directory.
func fromFlagsTxt(path string) (Flags, error) {
	data, err := readDatabase(path)
	if err != nil {
		return Flags{}, err
	}
	var args []string
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			args = append(args, line)
		}
	}
	dir := filepath.Dir(path)
	kept, dropped := Sanitize(args, dir, dir)
	return Flags{Args: kept, Source: path, Dropped: dropped}, nil
}

// command is one entry of compile_commands.json.
type command struct {
	Directory string   `json:"directory"`
	File      string   `json:"file"`
	Command   string   `json:"command"`
	Arguments []string `json:"arguments"`
}

// path is the entry's file, absolute.
func (c command) path(base string) string {
	dir := c.Directory
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(base, dir)
	}
	if filepath.IsAbs(c.File) {
		return filepath.Clean(c.File)
	}
	return filepath.Join(dir, c.File)
}

// fromCommands reads compile_commands.json at path, whose project is root, and takes file's
// entry: its own, else the one clangd's interpolation would take in spirit (the same language,
// the nearest directory), its compiler and inputs removed and the rest sanitized.
func fromCommands(path, root, file string) (Flags, error) {
	data, err := readDatabase(path)
	if err != nil {
		return Flags{}, err
	}
	var cmds []command
	if err := json.Unmarshal(data, &cmds); err != nil {
		return Flags{}, fmt.Errorf("%s: parse: %w", path, err)
	}
	if len(cmds) == 0 {
		return Flags{}, fmt.Errorf("%s: no entries", path)
	}
	base := filepath.Dir(path)
	c := cmds[pick(cmds, base, file)]
	args := c.Arguments
	if len(args) == 0 {
		args = SplitCommand(c.Command)
	}
	if len(args) > 0 {
		args = args[1:] // the compiler: never run, never looked at
	}
	dir := c.Directory
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(base, dir)
	}
	// The entry's own input is not an option; drop it before Sanitize counts it.
	self := c.path(base)
	in := args[:0:0]
	for _, a := range args {
		if !strings.HasPrefix(a, "-") && (a == c.File || filepath.Join(dir, a) == self) {
			continue
		}
		in = append(in, a)
	}
	kept, dropped := Sanitize(in, dir, root)
	return Flags{Args: kept, Source: path, Dropped: dropped}, nil
}

// pick chooses file's entry among cmds: the file's own; else the entry of the same language
// (C or C++, by extension) whose directory shares the longest prefix with the file's; else the
// entry with the longest shared directory.
func pick(cmds []command, base, file string) int {
	abs := filepath.Clean(file)
	best, bestScore := 0, -1
	for i, c := range cmds {
		p := c.path(base)
		if p == abs {
			return i
		}
		score := sharedPrefix(filepath.Dir(p), filepath.Dir(abs))
		if isCXX(p) == isCXX(abs) {
			score += 1 << 20
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	return best
}

// sharedPrefix is how many leading path elements a and b share.
func sharedPrefix(a, b string) int {
	as := strings.Split(a, string(filepath.Separator))
	bs := strings.Split(b, string(filepath.Separator))
	n := 0
	for n < len(as) && n < len(bs) && as[n] == bs[n] {
		n++
	}
	return n
}

// isCXX says whether a file is C++ by its extension (a header counts as C++, as in clangd).
func isCXX(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".c", ".i":
		return false
	}
	return true
}
