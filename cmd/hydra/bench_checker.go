package main

import (
	"cmp"
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
	"time"

	"github.com/hydra-lsp/hydra/checkers/agreement"
	"github.com/hydra-lsp/hydra/checkers/benchmark"
	"github.com/hydra-lsp/hydra/checkers/clang"
	"github.com/hydra-lsp/hydra/checkers/tsbench"
	"github.com/hydra-lsp/hydra/sim"
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
		corpus   = fs.String("corpus", "", "thealgorithms-corpus.jsonl.gz (default: ../shared/data/ next to the repository); with --lang typescript a directory of .ts files (default: "+tsbench.CorpusDir+" in the repository)")
		programs = fs.Int("programs", 6, "programs of the corpus to stream, spread evenly over it")
		only     = fs.String("only", "", "comma-free substring: only corpus programs whose id contains it")
		reinvoke = fs.Int("reinvoke-samples", 4, "prefix lengths per program re-checked by whole-file clang")
		clangdN  = fs.Int("clangd-samples", 12, "didChange growths per program sent to clangd")
		noClangd = fs.Bool("no-clangd", false, "skip clangd")
		every    = fs.Int("checkpoint-every", 25, "take a checkpoint every N chunks")
		pace     = fs.Duration("pace", 0, "pause this long before each chunk, as a model leaves between lines (0: each chunk as soon as the previous one has its event)")
		quiet    = fs.Bool("q", false, "no progress log on stderr")
		set      = fs.String("set", "all", "program set: default (corpus programs), heavy (<bits/stdc++.h> + a competitive-programming template around the corpus's C++ programs), or all")
		heavyN   = fs.Int("heavy-programs", 3, "programs in the heavy set")
		growthN  = fs.Int("growth-lines", 2000, "length of the long program for slope_ms_per_100_lines (0: skip)")
		growthCd = fs.Int("growth-clangd-samples", 8, "prefix lengths of the long program sent to clangd")
		plotPath = fs.String("plot", "", "write the growth chart (per-line cost against prefix length) to this .png or .svg file")
		levers   = fs.Bool("levers", false, "also measure the levers side by side (spin before blocking, hand-written protocol lines, malloc_trim before fork, room in Clang's folding sets, dead stack dropped before each fork, generational malloc, bucket heads beside Clang's folding sets, one file entry for every chunk, huge pages after the first fork, a shared-memory ring, checkpoint placement)")
		noSplit  = fs.Bool("no-breakdown", false, "skip the raw-protocol baseline that splits a line's latency (breakdown_ms)")
		slowest  = fs.Int("slowest", 10, "list the N slowest lines, at the top level and for each set (slowest_lines; 0: none)")
		langName = fs.String("lang", "c", "the checker to measure: c (C/C++, the Clang checker) or typescript (the TypeScript checker, on rxjs's sources: see below)")
		ts       = tsBenchFlags(fs)
	)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: hydra bench checker [--json] [flags]\n\nMeasures the incremental checker's per-line latency against re-running clang on the growing\nprefix and against clangd, plus fork, resume, checkpoint memory and the <bits/stdc++.h>\npreamble cold and warm; a heavy program set (<bits/stdc++.h> and a competitive-programming\ntemplate) beside the default one (by_set); where a line's time goes (breakdown_ms); the growth\nwith program length (slope_ms_per_100_lines, --plot); with --levers, the levers side by side.\nA benchmark: it prints numbers, it does not judge them.\n\nWith --lang typescript it streams TypeScript files (--ts-files of the rxjs sources that\nscripts/install-deps.sh test unpacks, or --corpus DIR), unit by unit, into the TypeScript checker\nand times each unit against three baselines on the same prefixes: re-running `tsc -p` (tsc),\nTypeScript 7's language server `tsc --lsp --stdio` with didChange and a pull diagnostic (lsp), and\nthe compiler API re-checking each prefix in a fresh snapshot with nothing reused (api_fresh); it\nprints each side's median, p90 and max, the ratios baseline/hydra, and every side's verdict on\neach file. Of the flags below it takes --json, -q, --corpus, --only and the --ts-* ones.\n\nflags:")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hydra bench checker: unexpected arguments %q\n", fs.Args())
		return 2
	}
	switch *langName {
	case "typescript", "ts":
		return benchCheckerTS(fs, ts, *asJSON, *quiet, *corpus, *only, stdout, stderr)
	case "c", "c++":
		if bad := setFlags(fs, ts.names()...); len(bad) > 0 {
			fmt.Fprintf(stderr, "hydra bench checker: %s: only with --lang typescript\n", strings.Join(bad, ", "))
			return 2
		}
	default:
		fmt.Fprintf(stderr, "hydra bench checker: --lang %q: want c or typescript\n", *langName)
		return 2
	}
	if *slowest < 0 {
		fmt.Fprintf(stderr, "hydra bench checker: --slowest %d: want 0 or more\n", *slowest)
		return 2
	}
	if *pace < 0 {
		fmt.Fprintf(stderr, "hydra bench checker: --pace %v: want a pause of 0 or more\n", *pace)
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
	if *set != "all" && *set != "default" && *set != "heavy" {
		fmt.Fprintf(stderr, "hydra bench checker: --set %q: want default, heavy or all\n", *set)
		return 2
	}
	progs := pickPrograms(all, *only, *programs)
	if len(progs) == 0 {
		return fail(fmt.Errorf("no corpus program matches %q", *only))
	}
	cl, err := agreement.ClangPath()
	if err != nil {
		return fail(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var heavy []agreement.Program
	if *set != "default" || *growthN > 0 {
		if heavy, err = benchmark.Heavy(ctx, cl, all, max(*heavyN, 4), 6000); err != nil {
			return fail(err)
		}
	}
	var sets []benchmark.Set
	if *set != "heavy" {
		sets = append(sets, benchmark.Set{Name: "default", Programs: progs})
	}
	if *set != "default" {
		if len(heavy) == 0 {
			return fail(fmt.Errorf("no heavy-set program compiles"))
		}
		sets = append(sets, benchmark.Set{Name: "heavy", Programs: heavy[:min(*heavyN, len(heavy))]})
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
	cfg := benchmark.Config{Checker: ch, Clang: cl, Clangd: clangd, Programs: progs, Sets: sets,
		ReinvokeSamples: *reinvoke, ClangdSamples: *clangdN, CheckpointEvery: *every, Pace: *pace, Slowest: *slowest}
	if !*noSplit {
		cfg.Shim, cfg.Spin = ch.ShimPath(), clang.DefaultSpin
	}
	cfg.Log = func(string, ...any) {}
	if !*quiet {
		cfg.Log = func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
	}
	res, err := benchmark.Run(ctx, cfg)
	if err != nil {
		return fail(err)
	}
	if *growthN > 0 {
		long, err := benchmark.Long(ctx, cl, heavy, *growthN)
		if err != nil {
			return fail(err)
		}
		cfg.Log("growth: %s, %d bytes", long.ID, len(long.Text))
		g, err := benchmark.MeasureGrowth(ctx, cfg, long, *growthCd)
		if err != nil {
			return fail(fmt.Errorf("growth: %w", err))
		}
		sl := g.Slopes()
		res.Growth, res.SlopeMSPer100Lines = g, &sl
		if *plotPath != "" {
			if err := g.Plot(*plotPath); err != nil {
				return fail(fmt.Errorf("plot: %w", err))
			}
		}
	} else if *plotPath != "" {
		return fail(fmt.Errorf("--plot needs the growth measurement (--growth-lines > 0)"))
	}
	if *levers {
		// One checker per lever setting that differs from the default checker's options, all
		// closed when the command returns.
		var leverCheckers []*clang.Checker
		defer func() {
			for _, c := range leverCheckers {
				c.Close()
			}
		}()
		var leverErr error
		lever := func(o clang.Options) *clang.Checker {
			c, err := clang.New(o)
			if err != nil {
				leverErr = cmp.Or(leverErr, err)
				return nil
			}
			leverCheckers = append(leverCheckers, c)
			return c
		}
		noTrim := lever(clang.Options{Env: []string{"HYDRA_SHIM_NO_TRIM=1"}})
		plainJSON := lever(clang.Options{PlainJSON: true})
		noSpin := lever(clang.Options{Spin: -1})
		spinLong := lever(clang.Options{Spin: 300 * time.Microsecond})
		noGrow := lever(clang.Options{Env: []string{"HYDRA_SHIM_NO_GROW_SETS=1"}})
		keepStack := lever(clang.Options{Env: []string{"HYDRA_SHIM_KEEP_STACK=1"}})
		glibcMalloc := lever(clang.Options{Env: []string{"HYDRA_SHIM_GLIBC_MALLOC=1"}})
		plainSets := lever(clang.Options{Env: []string{"HYDRA_SHIM_PLAIN_FOLDING_SETS=1"}})
		filePerChunk := lever(clang.Options{Env: []string{"HYDRA_SHIM_FILE_PER_CHUNK=1"}})
		hugeAfterFork := lever(clang.Options{Env: []string{"HYDRA_SHIM_HUGE_PAGES_AFTER_FORK=1"}})
		socketOnly := lever(clang.Options{SocketOnly: true})
		if leverErr != nil {
			return fail(leverErr)
		}
		runs := []benchmark.LeverRun{
			{Name: "spin before blocking, backing off", Setting: "off", Checker: noSpin, CheckpointEvery: *every},
			{Name: "spin before blocking, backing off", Setting: "50 µs (default)", Checker: ch, CheckpointEvery: *every},
			{Name: "spin before blocking, backing off", Setting: "300 µs", Checker: spinLong, CheckpointEvery: *every},
			{Name: "hand-written submit and progress lines", Setting: "off (encoding/json)", Checker: plainJSON, CheckpointEvery: *every},
			{Name: "hand-written submit and progress lines", Setting: "on", Checker: ch, CheckpointEvery: *every},
			{Name: "malloc_trim before fork", Setting: "off", Checker: noTrim, CheckpointEvery: *every},
			{Name: "malloc_trim before fork", Setting: "on", Checker: ch, CheckpointEvery: *every},
			{Name: "room in Clang's folding sets before the first fork", Setting: "off", Checker: noGrow, CheckpointEvery: *every},
			{Name: "room in Clang's folding sets before the first fork", Setting: "on (default)", Checker: ch, CheckpointEvery: *every},
			{Name: "dead stack dropped before each fork", Setting: "off", Checker: keepStack, CheckpointEvery: *every},
			{Name: "dead stack dropped before each fork", Setting: "on (default)", Checker: ch, CheckpointEvery: *every},
			{Name: "malloc", Setting: "glibc's", Checker: glibcMalloc, CheckpointEvery: *every},
			{Name: "malloc", Setting: "generational (default)", Checker: ch, CheckpointEvery: *every},
			{Name: "bucket heads of Clang's folding sets beside the table after a fork", Setting: "off", Checker: plainSets, CheckpointEvery: *every},
			{Name: "bucket heads of Clang's folding sets beside the table after a fork", Setting: "on (default)", Checker: ch, CheckpointEvery: *every},
			{Name: "one file entry for every chunk", Setting: "off (a file per chunk)", Checker: filePerChunk, CheckpointEvery: *every},
			{Name: "one file entry for every chunk", Setting: "on (default)", Checker: ch, CheckpointEvery: *every},
			{Name: "transparent huge pages for the shim's malloc", Setting: "always", Checker: hugeAfterFork, CheckpointEvery: *every},
			{Name: "transparent huge pages for the shim's malloc", Setting: "until the first fork (default)", Checker: ch, CheckpointEvery: *every},
			{Name: "chunks and events through a shared-memory ring", Setting: "off (the socket alone)", Checker: socketOnly, CheckpointEvery: *every},
			{Name: "chunks and events through a shared-memory ring", Setting: "on (default)", Checker: ch, CheckpointEvery: *every},
			{Name: "checkpoint placement", Setting: "preamble only", Checker: ch, CheckpointEvery: 1 << 30},
			{Name: "checkpoint placement", Setting: "preamble + every 100 chunks", Checker: ch, CheckpointEvery: 100},
		}
		var lp []agreement.Program
		for _, st := range sets {
			lp = append(lp, st.Programs...)
		}
		if res.Levers, err = benchmark.MeasureLevers(ctx, cfg, runs, lp); err != nil {
			return fail(err)
		}
	}
	if err := printResult(stdout, res, *asJSON); err != nil {
		return fail(err)
	}
	return 0
}

// printResult prints a benchmark's result as one JSON line (oneLine) or indented.
func printResult(w io.Writer, res any, oneLine bool) error {
	var out []byte
	var err error
	if oneLine {
		out, err = json.Marshal(res)
	} else {
		out, err = json.MarshalIndent(res, "", "  ")
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", out)
	return err
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
