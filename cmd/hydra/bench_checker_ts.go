package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/hydra-lsp/hydra/checkers/tsbench"
	"github.com/hydra-lsp/hydra/checkers/typescript"
)

// tsFlags are the flags of `hydra bench checker --lang typescript` of its own.
type tsFlags struct {
	files, samples, minLines, maxLines *int
}

// tsBenchFlags defines the TypeScript benchmark's own flags on fs.
func tsBenchFlags(fs *flag.FlagSet) tsFlags {
	return tsFlags{
		files:    fs.Int("ts-files", 4, "--lang typescript: files of the corpus to stream, spread evenly over those of --ts-min-lines to --ts-max-lines lines (0: all)"),
		samples:  fs.Int("ts-samples", 8, "--lang typescript: units per file each baseline checks, spread evenly, the last the whole file (0: every unit)"),
		minLines: fs.Int("ts-min-lines", 60, "--lang typescript: shortest file taken, in lines"),
		maxLines: fs.Int("ts-max-lines", 300, "--lang typescript: longest file taken, in lines"),
	}
}

// names are the flag names tsBenchFlags defines.
func (tsFlags) names() []string {
	return []string{"ts-files", "ts-samples", "ts-min-lines", "ts-max-lines"}
}

// setFlags returns those of names that were given on the command line, as --name.
func setFlags(fs *flag.FlagSet, names ...string) []string {
	var out []string
	fs.Visit(func(f *flag.Flag) {
		for _, n := range names {
			if f.Name == n {
				out = append(out, "--"+n)
			}
		}
	})
	return out
}

// benchCheckerTS is `hydra bench checker --lang typescript`: fs has been parsed; flags of the
// Clang benchmark other than those it shares are refused.
func benchCheckerTS(fs *flag.FlagSet, ts tsFlags, asJSON, quiet bool, corpus, only string, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintf(stderr, "hydra bench checker --lang typescript: %v\n", err)
		return 2
	}
	var clangOnly []string
	fs.VisitAll(func(f *flag.Flag) {
		switch f.Name {
		case "lang", "json", "q", "corpus", "only":
		default:
			if !strings.HasPrefix(f.Name, "ts-") {
				clangOnly = append(clangOnly, f.Name)
			}
		}
	})
	if bad := setFlags(fs, clangOnly...); len(bad) > 0 {
		return fail(fmt.Errorf("%s: only for the Clang checker (--lang c)", strings.Join(bad, ", ")))
	}
	if *ts.files < 0 || *ts.samples < 0 || *ts.minLines < 0 || *ts.maxLines < *ts.minLines {
		return fail(fmt.Errorf("--ts-files %d, --ts-samples %d, --ts-min-lines %d, --ts-max-lines %d: want counts of 0 or more, the least lines no more than the most",
			*ts.files, *ts.samples, *ts.minLines, *ts.maxLines))
	}
	compiler, err := typescript.FindCompiler("")
	if err != nil {
		return fail(fmt.Errorf("%w (scripts/install-deps.sh test installs it)", err))
	}
	if corpus == "" {
		if corpus, err = tsbench.FindCorpus(); err != nil {
			return fail(err)
		}
	} else if st, err := os.Stat(corpus); err != nil || !st.IsDir() {
		return fail(fmt.Errorf("--corpus %s: want a directory of .ts files", corpus))
	}
	corpus, _ = filepath.Abs(corpus)
	files, err := tsbench.PickFiles(corpus, only, *ts.minLines, *ts.maxLines, *ts.files)
	if err != nil {
		return fail(err)
	}
	if len(files) == 0 {
		return fail(fmt.Errorf("no .ts file under %s of %d to %d lines whose path contains %q", corpus, *ts.minLines, *ts.maxLines, only))
	}
	ck, err := typescript.New(typescript.Options{Compiler: compiler})
	if err != nil {
		return fail(err)
	}
	defer ck.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := tsbench.Config{Checker: ck, Compiler: compiler, Corpus: corpus, Files: files, Samples: *ts.samples,
		Log: func(string, ...any) {}}
	if !quiet {
		cfg.Log = func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
	}
	res, err := tsbench.Run(ctx, cfg)
	if err != nil {
		return fail(err)
	}
	if err := printResult(stdout, res, asJSON); err != nil {
		return fail(err)
	}
	return 0
}
