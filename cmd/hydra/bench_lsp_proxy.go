package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/hydra-lsp/hydra/checkers/lang"
	"github.com/hydra-lsp/hydra/cmd/hydra/internal/proxybench"
)

// benchLSPProxyMain is `hydra bench lsp-proxy` (bench.go dispatches to it) with its outputs as
// parameters.
func benchLSPProxyMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench lsp-proxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		n        = fs.Int("requests", 200, "requests of each kind (hover, definition, completion) to each server")
		asJSON   = fs.Bool("json", false, "print one JSON array instead of the table")
		clangd   = fs.String("clangd", "", "clangd binary (default clangd-19, then clangd, on $PATH)")
		hydraBin = fs.String("hydra", "", "hydra binary to run as `hydra lsp` (default: this one)")
	)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: hydra bench lsp-proxy [--requests N] [--json]\n\nSends the same hover, definition and completion requests, on the same document, to clangd\ndirectly and to `hydra lsp` with clangd behind it, interleaved in one run, and prints the\nmedian latencies side by side with what Hydra adds. A benchmark: it prints numbers, it does\nnot judge them.\n\nflags:")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "hydra bench lsp-proxy: %v\n", err)
		return 2
	}
	if fs.NArg() > 0 || *n < 1 {
		return fail(fmt.Errorf("unexpected arguments %q or --requests %d", fs.Args(), *n))
	}
	o := proxybench.Options{Clangd: *clangd, Hydra: *hydraBin, Requests: *n, Log: io.Discard}
	if o.Clangd == "" {
		p, _, err := lang.C.LanguageServer()
		if err != nil {
			return fail(err)
		}
		o.Clangd = p
	}
	if o.Hydra == "" {
		exe, err := os.Executable()
		if err != nil {
			return fail(err)
		}
		o.Hydra = exe
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rows, err := proxybench.Run(ctx, o)
	if err != nil {
		return fail(err)
	}
	if *asJSON {
		b, _ := json.Marshal(rows)
		fmt.Fprintln(stdout, string(b))
		return 0
	}
	fmt.Fprintf(stdout, "clangd (%s) directly vs behind `hydra lsp`: %d requests of each kind to each, interleaved\n\n", o.Clangd, *n)
	fmt.Fprintf(stdout, "%-24s %8s %12s %14s %11s %14s %12s %14s\n", "request", "results", "direct p50", "via hydra p50", "added p50", "paired added", "direct p90", "via hydra p90")
	for _, r := range rows {
		fmt.Fprintf(stdout, "%-24s %8d %9.3f ms %11.3f ms %+8.3f ms %+11.3f ms %9.3f ms %11.3f ms\n", r.Method, r.Results,
			r.DirectP50, r.ProxyP50, r.AddedP50, r.PairedAddedP50, r.DirectP90, r.ProxyP90)
	}
	return 0
}
