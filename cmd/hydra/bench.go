package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/hydra-lsp/hydra/checkers/lang"
	"github.com/hydra-lsp/hydra/cmd/hydra/internal/bench"
	"github.com/hydra-lsp/hydra/cmd/hydra/internal/sandbox"
	"github.com/hydra-lsp/hydra/engine"
	"github.com/hydra-lsp/hydra/engine/model"
	"github.com/hydra-lsp/hydra/policy"
	"github.com/hydra-lsp/hydra/sim"
)

func init() {
	commands["bench"] = command{
		summary: "compare repair policies side by side (simulated model or --model-url); 'bench checker' for the checker",
		run:     runBench,
	}
}

// benchOrder is the default set of policies, Hydra's first and the baselines last.
var benchOrder = []string{"tokpol", "local-first", "fixed", "uncertainty", "parallel", "random", "lockstep", "posthoc", "unconstrained"}

func runBench(args []string) int {
	if len(args) > 0 && args[0] == "checker" {
		return runBenchChecker(args[1:])
	}
	if len(args) > 0 && args[0] == "lsp-proxy" {
		return benchLSPProxyMain(args[1:], os.Stdout, os.Stderr)
	}
	return benchMain(args, os.Stdout, os.Stderr)
}

// benchFlags are `hydra bench`'s flags.
type benchFlags struct {
	tasks, only, source, lang    string
	seed                         int64
	policies                     string
	asJSON, markdown, withRuns   bool
	traceDir, resume             string
	modelURL, modelName          string
	plotFile                     string
	timeScale                    float64
	profile                      string
	simSpec, sweep               string
	errorRate, fixProb, newFault float64
	concurrency                  int
	maxAttempts, maxTokens       int
	// runTests: --run-tests; runTestsSet says it was given (its default depends on the model).
	runTests, runTestsSet bool
}

// errUsage marks a bad command line (exit 2).
var errUsage = errors.New("usage")

// benchMain is `hydra bench` with its outputs as parameters (for tests).
func benchMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f benchFlags
	fs.StringVar(&f.tasks, "tasks", "20", "the tasks: a number drawn by --seed from both C/C++ sources (0 or all: every task), a set by name (humaneval-x, thealgorithms; humaneval-ts: HumanEval in TypeScript, checked with tsc), or a JSONL file of your own (one {id, lang, prompt, solution, test} per line)")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the task draw and of the simulated model")
	fs.StringVar(&f.policies, "policies", strings.Join(benchOrder, ","), "comma-separated policies to compare: "+strings.Join(policy.Names(), ", "))
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object instead of the table")
	fs.BoolVar(&f.markdown, "markdown", false, "print Markdown tables (as docs/POLICIES.md holds them) instead of the plain table")
	fs.BoolVar(&f.withRuns, "runs", false, "with --json: include every run")
	fs.StringVar(&f.traceDir, "trace-dir", "", "write each run's result and search tree to DIR/TASK.POLICY.json")
	fs.StringVar(&f.resume, "resume", "", "write each run to DIR as it ends, and skip the runs DIR already holds (resume an interrupted benchmark)")
	fs.StringVar(&f.modelURL, "model-url", "", "an OpenAI-compatible server (API base, e.g. http://localhost:8000/v1) instead of the simulated model")
	fs.StringVar(&f.modelName, "model", "", "model name for --model-url (default: the simulated model's)")
	fs.StringVar(&f.plotFile, "plot", "", "write box plots of tokens and latency per policy (with --sweep: heatmaps of TokPol's paired ratios) to this .svg or .png file")
	fs.Float64Var(&f.timeScale, "time-scale", 1, "simulated model: multiply its latencies (0.1 = ten times faster)")
	fs.StringVar(&f.profile, "profile", "gpt-oss-120b", "simulated model: latency profile (gpt-oss-120b: 7 ms/token; qwen32b)")
	fs.StringVar(&f.simSpec, "sim", "", "simulated model's parameters, e.g. local=0.1,far=0.6,fix=0.5,logprob-auc=0.6,new-fault=0.17 (names: "+strings.Join(sim.ParamNames(), ", ")+")")
	fs.StringVar(&f.sweep, "sweep", "", "run every policy on the same tasks at each point of a grid of simulator parameters, e.g. local=0.1/0.3,far=0.35/0.6 ('default': "+defaultSweep+")")
	fs.Float64Var(&f.errorRate, "error-rate", -1, "simulated model: same as --sim error-rate=R")
	fs.Float64Var(&f.fixProb, "fix-prob", -1, "simulated model: same as --sim fix=P")
	fs.Float64Var(&f.newFault, "new-fault-rate", -1, "simulated model: same as --sim new-fault=R")
	fs.StringVar(&f.only, "task", "", "run only these tasks (comma-separated ids, e.g. CPP/17); overrides --tasks and --source")
	fs.StringVar(&f.lang, "lang", "c", "the tasks' language: c (C/C++: HumanEval-X and TheAlgorithms, the Clang checker) or typescript (HumanEval in TypeScript, the TypeScript checker; same as --source humaneval-ts)")
	fs.StringVar(&f.source, "source", "", "only tasks of this source: humaneval-x, thealgorithms or humaneval-ts (with --tasks N: N of them)")
	fs.IntVar(&f.concurrency, "concurrency", 8, "tasks run at once (each task's policies run one after the other)")
	fs.IntVar(&f.maxAttempts, "max-attempts", engine.DefaultBudget().MaxAttempts, "attempts per search, the same for every policy; the default is the budget hydra generate and the language server use (a search ends without a compiling program only when its budget is spent: these attempts, or attempts × --max-tokens output tokens)")
	fs.IntVar(&f.maxTokens, "max-tokens", 8192, "output tokens per completion request (the longest corpus program is about 8,000 tokens)")
	fs.BoolVar(&f.runTests, "run-tests", false, "functional check: compile and run HumanEval-X's tests (TypeScript: tsc, then node) on the generated code, in the bubblewrap sandbox (default on with the simulated model, off with --model-url)")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: hydra bench [--lang c|typescript] [--tasks N|humaneval-x|thealgorithms|humaneval-ts|FILE.jsonl] [--seed S] [--policies a,b,...]
                   [--sim k=v,...] [--sweep k=v1/v2,...] [--json|--markdown] [--model-url URL]
                   [--concurrency N] [--resume DIR] [--plot FILE.svg|png] [--time-scale X] [--run-tests] [flags]
       hydra bench checker [flags]   (the checker's own benchmark)
       hydra bench lsp-proxy [flags] (clangd directly vs behind hydra lsp)

Runs repair policies side by side on the same tasks and seeds, with the real Clang checker
(the TypeScript compiler's for --lang typescript: HumanEval in TypeScript), against the SIMULATED model of sim (a
stand-in, not a real model; its parameters and assumptions are printed with the results) or a
server (--model-url). Every result is checked again on its own: static correctness with clang
(tsc --noEmit for TypeScript; parsing only), and functional correctness (HumanEval-X, HumanEval
in TypeScript) by compiling and running the task's tests in a bubblewrap sandbox (no network, no
host files but /usr, its own PID namespace, CPU, memory, process and time limits). That runs
generated code: with --model-url only when --run-tests is given. Reports latency, output tokens and repair overhead (tokens beyond
the task's unconstrained run) for all tasks and for those that hit a static error, TokPol's
paired ratios against local-first, fixed and post-hoc with 95% bootstrap intervals, and
checkpoint reuse. --sweep repeats this over a grid of simulator parameters.

`)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hydra bench: unexpected arguments %q\n", fs.Args())
		return 2
	}
	fs.Visit(func(fl *flag.Flag) { f.runTestsSet = f.runTestsSet || fl.Name == "run-tests" })
	err := f.run(stdout, stderr)
	switch {
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "hydra bench: %v\n", err)
		return 2
	case errors.Is(err, errInfraFailures):
		fmt.Fprintf(stderr, "hydra bench: %v\n", err)
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "hydra bench: %v\n", err)
		return 2
	}
	return 0
}

// defaultSweep is the grid --sweep default runs: the root-cause distance classes across and
// beyond the paper's ranges, at two repair probabilities.
const defaultSweep = "local=0.1/0.3/0.5,far=0.2/0.35/0.6"

var errInfraFailures = errors.New("runs failed on infrastructure errors (see the runs with --json --runs)")

func usagef(format string, a ...any) error { return wrapUsage{fmt.Errorf(format, a...)} }

// wrapUsage carries a usage error's message; errors.Is(err, errUsage) holds for it.
type wrapUsage struct{ err error }

func (w wrapUsage) Error() string        { return w.err.Error() }
func (w wrapUsage) Is(target error) bool { return target == errUsage }
func (w wrapUsage) Unwrap() error        { return w.err }

// taskOptions reads --tasks, --source, --task, --lang and --seed.
func (f *benchFlags) taskOptions() (bench.TaskOptions, error) {
	o := bench.TaskOptions{Seed: f.seed, Source: f.source}
	switch f.lang {
	case "c", "":
	case "typescript":
		if f.source != "" && f.source != sim.SourceHumanEvalTS {
			return o, usagef("--lang typescript and --source %s name different sets", f.source)
		}
		o.Source = sim.SourceHumanEvalTS
	default:
		return o, usagef("--lang %q: want c or typescript", f.lang)
	}
	if f.only != "" {
		o.IDs = strings.Split(f.only, ",")
		return o, nil
	}
	switch v := strings.TrimSpace(f.tasks); {
	case v == "all":
	case v == "humaneval-x" || v == "thealgorithms" || v == sim.SourceHumanEvalTS:
		if o.Source != "" && o.Source != v {
			return o, usagef("--tasks %s and --source %s (or --lang typescript) name different sets", v, o.Source)
		}
		o.Source = v
	default:
		n, err := strconv.Atoi(v)
		if err == nil {
			if n < 0 {
				return o, usagef("--tasks %d is negative", n)
			}
			o.N = n
			break
		}
		if _, serr := os.Stat(v); serr != nil {
			return o, usagef("--tasks %q is not a number, a set (humaneval-x, thealgorithms, humaneval-ts, all) or a file: %v", v, serr)
		}
		if o.Source == sim.SourceHumanEvalTS {
			return o, usagef("--tasks %s: a task file names its tasks' language itself (lang), without --lang or --source", v)
		}
		o.File = v
	}
	return o, nil
}

// simOptions are the simulated model's options from the flags.
func (f *benchFlags) simOptions() (sim.Options, error) {
	opts := sim.DefaultOptions()
	p, ok := sim.Profiles[f.profile]
	if !ok {
		return opts, usagef("--profile %q: unknown (known: gpt-oss-120b, qwen32b)", f.profile)
	}
	opts.Profile, opts.Seed, opts.TimeScale = p, f.seed, f.timeScale
	for name, v := range map[string]float64{"error-rate": f.errorRate, "fix": f.fixProb, "new-fault": f.newFault} {
		if v >= 0 {
			if err := opts.SetParam(name, v); err != nil {
				return opts, usagef("%v", err)
			}
		}
	}
	if err := opts.SetParams(f.simSpec); err != nil {
		return opts, usagef("--sim: %v", err)
	}
	return opts, nil
}

func (f *benchFlags) run(stdout, stderr io.Writer) error {
	var names []string
	for _, p := range strings.Split(f.policies, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if _, err := policy.ByName(p); err != nil {
			return usagef("--policies: %v", err)
		}
		names = append(names, p)
	}
	if len(names) == 0 {
		return usagef("--policies names no policy")
	}
	if f.timeScale < 0 || f.maxAttempts < 1 || f.concurrency < 1 {
		return usagef("--time-scale must not be negative, --max-attempts and --concurrency at least 1")
	}
	if f.plotFile != "" && !strings.HasSuffix(f.plotFile, ".svg") && !strings.HasSuffix(f.plotFile, ".png") {
		return usagef("--plot %s: want a .svg or .png file name", f.plotFile)
	}
	if f.asJSON && f.markdown {
		return usagef("--json and --markdown exclude each other")
	}
	to, err := f.taskOptions()
	if err != nil {
		return err
	}
	opts, err := f.simOptions()
	if err != nil {
		return err
	}
	var axes []bench.Axis
	if f.sweep != "" {
		if f.modelURL != "" {
			return usagef("--sweep varies the simulated model's parameters; it cannot run against --model-url")
		}
		if f.resume != "" {
			return usagef("--sweep does not take --resume")
		}
		spec := f.sweep
		if spec == "default" {
			spec = defaultSweep
		}
		known := func(n string) bool { return opts.SetParam(n, opts.Param(n)) == nil }
		if axes, err = bench.ParseGrid(spec, known); err != nil {
			return usagef("--sweep: %v", err)
		}
		for _, pt := range bench.Points(axes) {
			o := opts
			for k, v := range pt {
				_ = o.SetParam(k, v)
			}
			if o.LocalFrac+o.FarFrac > 1 {
				return usagef("--sweep: a cell has local=%v and far=%v, more than 1 together", o.LocalFrac, o.FarFrac)
			}
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// Model output is run only when asked: --run-tests, on by default only for the simulated
	// model (whose programs are the corpus's own solutions with injected faults).
	execute := f.modelURL == ""
	if f.runTestsSet {
		execute = f.runTests
	}
	if execute {
		if err := (&sandbox.Sandbox{}).Available(ctx); err != nil {
			return fmt.Errorf("the functional check needs its sandbox (--run-tests=false skips it): %w", err)
		}
	} else if f.modelURL != "" {
		fmt.Fprintln(stderr, "hydra bench: the model's programs are only parsed, not run (--run-tests runs HumanEval-X's tests on them in the sandbox)")
	}

	simTasks, err := bench.LoadTasks(to)
	if err != nil {
		return usagef("%v", err)
	}
	cfg := bench.Config{Tasks: len(simTasks), Seed: f.seed, Policies: names, ModelURL: f.modelURL, Model: f.modelName,
		TimeScale: f.timeScale, Parallel: f.concurrency, MaxAttempts: f.maxAttempts, MaxTokens: f.maxTokens, KeepRuns: f.withRuns, TraceDir: f.traceDir}
	// One checker for the run: the tasks' language's (the language seam, checkers/lang).
	l := lang.ForFile(simTasks[0].Filename())
	for _, t := range simTasks {
		if lang.ForFile(t.Filename()) != l {
			return usagef("the tasks mix languages (%s and %s): run each language on its own", l.Name, lang.ForFile(t.Filename()).Name)
		}
	}
	ck, err := l.NewChecker(lang.CheckerOptions{})
	if err != nil {
		return err
	}
	defer ck.Close()
	env := bench.Env{Checker: ck, Tasks: bench.FromSim(simTasks), Verifier: &bench.Verifier{Execute: execute}}

	if axes != nil {
		return f.runSweep(ctx, cfg, env, opts, axes, simTasks, stdout, stderr)
	}

	var describe func() map[string]any
	if f.modelURL != "" {
		c, err := model.NewClient(f.modelURL)
		if err != nil {
			return usagef("--model-url: %v", err)
		}
		served, err := bench.ServerModels(ctx, c.BaseURL())
		if err != nil {
			return fmt.Errorf("--model-url: %w", err)
		}
		real := bench.IsRealModel(served)
		if cfg.Model == "" && len(served) == 1 {
			for id := range served {
				cfg.Model = id
			}
		}
		env.Generator = func(string) model.Generator { return c }
		describe = func() map[string]any {
			note := "a real OpenAI-compatible server, as its /v1/models says; latencies include its queueing"
			if !real {
				note = "the server names itself a stand-in in /v1/models: NOT a real model"
			}
			return map[string]any{"model": cfg.Model, "real_model": real, "url": c.BaseURL(), "served_models": served,
				"notes": []string{note}}
		}
	} else {
		fmt.Fprintf(stderr, "hydra bench: simulated model (a stand-in, not a real model): planning faults for %d %s tasks with its compiler…\n", len(simTasks), l.Name)
		sm, err := bench.NewSimModel(ctx, opts, simTasks, 2)
		if err != nil {
			return err
		}
		defer sm.Close()
		if cfg.Model == "" {
			cfg.Model = sim.ModelName
		}
		env.Generator = sm.Generator
		describe = sm.Describe
	}
	if f.resume != "" {
		rd, err := bench.OpenRunDir(f.resume)
		if err != nil {
			return err
		}
		bind := map[string]any{"config": cfg, "sim": opts.Params(), "profile": opts.Profile.Name, "tasks": taskIDs(simTasks)}
		if f.modelURL != "" {
			bind["sim"] = nil
		}
		if err := rd.Bind(bind); err != nil {
			return usagef("--resume: %v", err)
		}
		if env.Done, err = rd.Load(); err != nil {
			return err
		}
		if len(env.Done) > 0 {
			fmt.Fprintf(stderr, "hydra bench: resuming: %d runs already in %s\n", len(env.Done), f.resume)
		}
		env.OnRun = func(r bench.Run) {
			if err := rd.Save(r); err != nil {
				fmt.Fprintf(stderr, "hydra bench: %v\n", err)
			}
		}
	}

	runs, err := bench.Execute(ctx, cfg, env, stderr)
	if err != nil {
		return err
	}
	rep := bench.NewReport(cfg, describe(), runs)
	if f.plotFile != "" {
		if err := bench.WritePlot(f.plotFile, rep, runs); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "hydra bench: plot written to %s\n", f.plotFile)
	}
	switch {
	case f.asJSON:
		if err := writeJSON(stdout, rep); err != nil {
			return err
		}
	case f.markdown:
		if err := rep.WriteMarkdown(stdout); err != nil {
			return err
		}
	default:
		if err := rep.WriteTable(stdout); err != nil {
			return err
		}
	}
	failures := 0
	for _, p := range names {
		failures += rep.Policies[p].All.Failures
	}
	if failures > 0 {
		return fmt.Errorf("%d %w", failures, errInfraFailures)
	}
	return nil
}

func taskIDs(ts []sim.Task) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

// runSweep runs every policy on the same tasks at each point of the grid and reports the cells.
func (f *benchFlags) runSweep(ctx context.Context, cfg bench.Config, env bench.Env, base sim.Options, axes []bench.Axis,
	tasks []sim.Task, stdout, stderr io.Writer) error {
	if cfg.Model == "" {
		cfg.Model = sim.ModelName
	}
	sw := &bench.Sweep{Axes: axes, Config: cfg}
	points := bench.Points(axes)
	failures := 0
	for i, pt := range points {
		o := base
		for k, v := range pt {
			_ = o.SetParam(k, v)
		}
		fmt.Fprintf(stderr, "hydra bench: sweep cell %d of %d: %v (simulated model, a stand-in)\n", i+1, len(points), pt)
		sm, err := bench.NewSimModel(ctx, o, tasks, 2)
		if err != nil {
			return err
		}
		env.Generator = sm.Generator
		runs, err := bench.Execute(ctx, cfg, env, stderr)
		if err != nil {
			sm.Close()
			return err
		}
		rep := bench.NewReport(cfg, sm.Describe(), runs)
		if i == 0 {
			sw.Simulator = sm.Describe()
		}
		sm.Close()
		sw.Cells = append(sw.Cells, bench.NewCell(o.Params(), rep))
		for _, p := range cfg.Policies {
			failures += rep.Policies[p].All.Failures
		}
	}
	sw.Correct()
	if f.plotFile != "" {
		if err := sw.WriteHeatmap(f.plotFile); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "hydra bench: heatmap written to %s\n", f.plotFile)
	}
	switch {
	case f.asJSON:
		if err := writeJSON(stdout, sw); err != nil {
			return err
		}
	default:
		if err := sw.WriteMarkdown(stdout); err != nil {
			return err
		}
	}
	if failures > 0 {
		return fmt.Errorf("%d %w", failures, errInfraFailures)
	}
	return nil
}

// writeJSON writes v as one indented JSON object.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
