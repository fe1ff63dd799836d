package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hydra-lsp/hydra/engine"
	"github.com/hydra-lsp/hydra/engine/tracesvg"
)

func init() {
	commands["trace"] = command{
		summary: "draw a search's trace (hydra generate --json, bench --trace-dir) as an SVG picture",
		run:     func(args []string) int { return traceMain(args, os.Stderr) },
	}
}

// traceMain is `hydra trace TRACE.json -o FILE.svg`.
func traceMain(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("trace", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "the SVG file to write (default: TRACE with .svg for .json)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: hydra trace TRACE.json [-o FILE.svg]")
		fmt.Fprintln(stderr, "\nDraws the search of TRACE.json (hydra generate --json output, a hydra bench --trace-dir file")
		fmt.Fprintln(stderr, "or a bare {nodes, rollouts} trace): the search tree over the program's lines and, below it,")
		fmt.Fprintln(stderr, "the model's streaming against the checker's progress over time.\n\nflags:")
		fs.PrintDefaults()
	}
	// Flags may follow the file name.
	var files []string
	for rest := args; ; {
		if code, ok := parseFlags(fs, rest); !ok {
			return code
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(files) != 1 {
		fs.Usage()
		return 2
	}
	in := files[0]
	data, err := os.ReadFile(in)
	if err != nil {
		fmt.Fprintf(stderr, "hydra trace: %v\n", err)
		return 2
	}
	tr, err := tracesvg.Parse(data)
	if err != nil {
		fmt.Fprintf(stderr, "hydra trace: %s: %v\n", in, err)
		return 2
	}
	path := *out
	if path == "" {
		path = in[:len(in)-len(filepath.Ext(in))] + ".svg"
	}
	if err := writeTraceSVG(path, tr, filepath.Base(in)); err != nil {
		fmt.Fprintf(stderr, "hydra trace: %v\n", err)
		return 2
	}
	fmt.Fprintf(stderr, "hydra trace: wrote %s\n", path)
	return 0
}

// writeTraceSVG draws tr to path.
func writeTraceSVG(path string, tr *engine.Trace, title string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("trace picture: %w", err)
	}
	if err := tracesvg.Write(f, tr, title); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("trace picture %s: %w", path, err)
	}
	return f.Close()
}
