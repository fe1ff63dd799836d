package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/hydra-lsp/hydra/checkers/agreement"
	"github.com/hydra-lsp/hydra/checkers/benchmark"
	"github.com/hydra-lsp/hydra/checkers/clang"
	"github.com/hydra-lsp/hydra/engine/sim"
)

// runBenchChecker is `hydra bench checker` (bench.go dispatches to it).
func runBenchChecker(args []string) int {
	return benchCheckerMain(args, os.Stdout, os.Stderr)
}

// benchCheckerMain is `hydra bench checker` with its outputs as parameters.
func benchCheckerMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench checker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		asJSON   = fs.Bool("json", false, "print one JSON object (the default prints it indented, with a log on stderr)")
		corpus   = fs.String("corpus", "", "thealgorithms-corpus.jsonl.gz (default: ../shared/data/ next to the repository)")
		programs = fs.Int("programs", 6, "programs of the corpus to stream, spread evenly over it")
		only     = fs.String("only", "", "comma-free substring: only corpus programs whose id contains it")
		reinvoke = fs.Int("reinvoke-samples", 4, "prefix lengths per program re-checked by whole-file clang")
		clangdN  = fs.Int("clangd-samples", 12, "didChange growths per program sent to clangd")
		noClangd = fs.Bool("no-clangd", false, "skip clangd")
		every    = fs.Int("checkpoint-every", 25, "take a checkpoint every N chunks")
		quiet    = fs.Bool("q", false, "no progress log on stderr")
	)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: hydra bench checker [--json] [flags]\n\nMeasures the incremental checker's per-line latency against re-running clang on the growing\nprefix and against clangd, plus fork, resume, checkpoint memory and the <bits/stdc++.h>\npreamble cold and warm. A benchmark: it prints numbers, it does not judge them.\n\nflags:")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hydra bench checker: unexpected arguments %q\n", fs.Args())
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "hydra bench checker: %v\n", err)
		return 2
	}
	path := *corpus
	if path == "" {
		dir, err := sim.DataDir()
		if err != nil {
			return fail(fmt.Errorf("%w; pass --corpus", err))
		}
		path = filepath.Join(dir, sim.TheAlgorithmsFile)
	}
	all, err := agreement.LoadCorpus(path)
	if err != nil {
		return fail(err)
	}
	progs := pickPrograms(all, *only, *programs)
	if len(progs) == 0 {
		return fail(fmt.Errorf("no corpus program matches %q", *only))
	}
	cl, err := agreement.ClangPath()
	if err != nil {
		return fail(err)
	}
	clangd := ""
	if !*noClangd {
		if clangd, err = exec.LookPath("clangd-19"); err != nil {
			return fail(fmt.Errorf("clangd-19 not found (install Debian's clangd-19, or pass --no-clangd): %w", err))
		}
	}
	ch, err := clang.New(clang.Options{})
	if err != nil {
		return fail(err)
	}
	defer ch.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := benchmark.Config{Checker: ch, Clang: cl, Clangd: clangd, Programs: progs,
		ReinvokeSamples: *reinvoke, ClangdSamples: *clangdN, CheckpointEvery: *every}
	if !*quiet {
		cfg.Log = func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
	}
	res, err := benchmark.Run(ctx, cfg)
	if err != nil {
		return fail(err)
	}
	var out []byte
	if *asJSON {
		out, err = json.Marshal(res)
	} else {
		out, err = json.MarshalIndent(res, "", "  ")
	}
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(stdout, "%s\n", out)
	return 0
}

// pickPrograms takes n programs whose id contains only: as many C++ as C programs (C++ first
// when n is odd), each spread evenly over the corpus's programs of its language.
func pickPrograms(all []agreement.Program, only string, n int) []agreement.Program {
	byLang := map[string][]agreement.Program{}
	total := 0
	for _, p := range all {
		if only == "" || strings.Contains(p.ID, only) {
			byLang[p.Lang] = append(byLang[p.Lang], p)
			total++
		}
	}
	if n <= 0 || n >= total {
		var out []agreement.Program
		for _, p := range all {
			if only == "" || strings.Contains(p.ID, only) {
				out = append(out, p)
			}
		}
		return out
	}
	want := map[string]int{"c++": (n + 1) / 2, "c": n / 2}
	// A language with too few programs leaves its share to the other.
	for lang, other := range map[string]string{"c": "c++", "c++": "c"} {
		if short := want[lang] - len(byLang[lang]); short > 0 {
			want[lang] -= short
			want[other] += short
		}
	}
	var out []agreement.Program
	for _, lang := range []string{"c++", "c"} {
		ps, k := byLang[lang], want[lang]
		for i := 0; i < k; i++ {
			out = append(out, ps[i*len(ps)/k])
		}
	}
	return out
}
