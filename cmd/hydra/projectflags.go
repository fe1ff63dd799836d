package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/hydra-lsp/hydra/checkers/clang/compiledb"
)

// projectOpts are the options every command that checks a file takes to find its flags.
type projectOpts struct {
	dir     string // --compile-commands-dir: the only place the database is looked for
	verbose bool   // say where the flags came from
}

// register adds --compile-commands-dir and --verbose to fs.
func (o *projectOpts) register(fs *flag.FlagSet) {
	fs.StringVar(&o.dir, "compile-commands-dir", "", "`DIR` holding compile_commands.json or compile_flags.txt (default: the nearest one walking up from the file, as clangd looks, also in build/)")
	fs.BoolVar(&o.verbose, "verbose", false, "say where the compile flags came from and what was left out of them")
}

// flags are file's compile flags for the checker: the compilation database's (found as clangd
// finds it, or in --compile-commands-dir), sanitized (checkers/clang/compiledb: nothing in a
// workspace's files may make Hydra write a file, load code or run a program), then the user's
// own flags (after "--"), which are the user's word and passed as they are. What the database
// gave that was left out is said on stderr; with --verbose also where the flags came from.
func (o *projectOpts) flags(file string, user []string, stderr io.Writer) ([]string, error) {
	f, err := compiledb.Find(file, o.dir, nil)
	if err != nil {
		return nil, err
	}
	for _, p := range f.Problems {
		fmt.Fprintf(stderr, "hydra: %s\n", p)
	}
	if msg := f.Report(); msg != "" {
		fmt.Fprintf(stderr, "hydra: %s\n", msg)
	}
	db, dropped := compiledb.OtherLanguageStandard(f.Args, strings.EqualFold(filepath.Ext(file), ".c"))
	if len(dropped) > 0 {
		fmt.Fprintf(stderr, "hydra: %s: %s names another language's standard; checking %s without it\n", f.Source, strings.Join(dropped, " "), file)
	}
	if o.verbose {
		switch {
		case f.Source != "":
			fmt.Fprintf(stderr, "hydra: compile flags for %s from %s: %s\n", file, f.Source, strings.Join(db, " "))
		default:
			fmt.Fprintf(stderr, "hydra: no compilation database for %s (looked from its directory up, as clangd does); no project flags\n", file)
		}
		if len(user) > 0 {
			fmt.Fprintf(stderr, "hydra: flags given after --: %s\n", strings.Join(user, " "))
		}
	}
	return append(db, user...), nil
}

// droppedFlagPrinter tells on w each flag the checker left out because Clang does not take it
// as GCC does (clang.Options.OnDroppedFlag); nil w tells nothing.
func droppedFlagPrinter(w io.Writer) func(flag, why string) {
	if w == nil {
		return nil
	}
	return func(flag, why string) {
		fmt.Fprintf(w, "hydra: %s is left out of checking: %s\n", flag, why)
	}
}
