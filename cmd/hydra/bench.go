package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/hydra-lsp/hydra/checkers/clang"
	"github.com/hydra-lsp/hydra/cmd/hydra/internal/bench"
	"github.com/hydra-lsp/hydra/engine/model"
	"github.com/hydra-lsp/hydra/engine/sim"
	"github.com/hydra-lsp/hydra/policy"
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
	return benchMain(args, os.Stdout, os.Stderr)
}

// benchMain is `hydra bench` with its outputs as parameters (for tests).
func benchMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		tasks       = fs.Int("tasks", 20, "number of tasks, drawn by --seed from both sources (0: all)")
		seed        = fs.Int64("seed", 1, "seed of the task draw and of the simulated model")
		policies    = fs.String("policies", strings.Join(benchOrder, ","), "comma-separated policies to compare: "+strings.Join(policy.Names(), ", "))
		asJSON      = fs.Bool("json", false, "print one JSON object instead of the table")
		withRuns    = fs.Bool("runs", false, "with --json: include every run")
		traceDir    = fs.String("trace-dir", "", "write each run's result and search tree to DIR/TASK.POLICY.json")
		modelURL    = fs.String("model-url", "", "a real OpenAI-compatible server (API base, e.g. http://localhost:8000/v1) instead of the simulated model")
		modelName   = fs.String("model", "", "model name for --model-url (default: the simulated model's)")
		plotFile    = fs.String("plot", "", "write box plots of tokens and latency per policy to this .svg or .png file")
		timeScale   = fs.Float64("time-scale", 1, "simulated model: multiply its latencies (0.1 = ten times faster)")
		profile     = fs.String("profile", "gpt-oss-120b", "simulated model: latency profile (gpt-oss-120b: 7 ms/token; qwen32b)")
		errorRate   = fs.Float64("error-rate", -1, "simulated model: share of tasks whose first attempt has a static error (default the paper's 0.17)")
		fixProb     = fs.Float64("fix-prob", -1, "simulated model: chance that a retry which regenerates a fault's root fixes it (default 0.7)")
		newFault    = fs.Float64("new-fault-rate", -1, "simulated model: chance that a retry makes a new fault, scaled by the share regenerated (default 0.17)")
		only        = fs.String("task", "", "run only these tasks (comma-separated ids, e.g. CPP/17); overrides --tasks and --source")
		source      = fs.String("source", "", "only tasks of this source: humaneval-x or thealgorithms")
		parallel    = fs.Int("parallel", 1, "tasks run at once (latencies are cleanest with 1)")
		maxAttempts = fs.Int("max-attempts", 8, "attempts per search")
		maxTokens   = fs.Int("max-tokens", 8192, "output tokens per completion request (the longest corpus program is about 8,000 tokens)")
	)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: hydra bench [--tasks N] [--seed S] [--policies a,b,...] [--json] [--model-url URL]
                   [--plot FILE.svg|png] [--time-scale X] [flags]
       hydra bench checker [flags]   (the checker's own benchmark)

Runs repair policies side by side on the same tasks and seeds, with the real Clang checker,
against the SIMULATED model of engine/sim (a stand-in, not a real model; its assumptions are
printed with the results) or a real server (--model-url). Every result is checked again on its
own: static correctness with clang, functional correctness (HumanEval-X) by running the task's
tests in a sandbox. Reports latency and output tokens (mean, p50, p75) for all tasks and for the
tasks that hit a static error, ratios against post-hoc repair, and checkpoint reuse.

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
	var names []string
	for _, p := range strings.Split(*policies, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if _, err := policy.ByName(p); err != nil {
			fmt.Fprintf(stderr, "hydra bench: --policies: %v\n", err)
			return 2
		}
		names = append(names, p)
	}
	if len(names) == 0 {
		fmt.Fprintln(stderr, "hydra bench: --policies names no policy")
		return 2
	}
	if *timeScale < 0 || *tasks < 0 || *maxAttempts < 1 {
		fmt.Fprintln(stderr, "hydra bench: --time-scale and --tasks must not be negative, --max-attempts at least 1")
		return 2
	}
	if *plotFile != "" && !strings.HasSuffix(*plotFile, ".svg") && !strings.HasSuffix(*plotFile, ".png") {
		fmt.Fprintf(stderr, "hydra bench: --plot %s: want a .svg or .png file name\n", *plotFile)
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var ids []string
	if *only != "" {
		ids = strings.Split(*only, ",")
	}
	simTasks, err := bench.LoadTasks(bench.TaskOptions{N: *tasks, Seed: *seed, Source: *source, IDs: ids})
	if err != nil {
		fmt.Fprintf(stderr, "hydra bench: %v\n", err)
		return 2
	}
	cfg := bench.Config{Tasks: len(simTasks), Seed: *seed, Policies: names, ModelURL: *modelURL, Model: *modelName,
		TimeScale: *timeScale, Parallel: *parallel, MaxAttempts: *maxAttempts, MaxTokens: *maxTokens, KeepRuns: *withRuns, TraceDir: *traceDir}

	ck, err := clang.New(clang.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "hydra bench: %v\n", err)
		return 2
	}
	defer ck.Close()
	env := bench.Env{Checker: ck, Tasks: bench.FromSim(simTasks)}

	var describe func() map[string]any
	if *modelURL != "" {
		c, err := model.NewClient(*modelURL)
		if err != nil {
			fmt.Fprintf(stderr, "hydra bench: --model-url: %v\n", err)
			return 2
		}
		env.Generator = func(string) model.Generator { return c }
		describe = func() map[string]any {
			return map[string]any{"model": *modelName, "real_model": true, "url": c.BaseURL(),
				"notes": []string{"a real OpenAI-compatible server; latencies include its queueing"}}
		}
	} else {
		opts := sim.DefaultOptions()
		p, ok := sim.Profiles[*profile]
		if !ok {
			fmt.Fprintf(stderr, "hydra bench: --profile %q: unknown (known: gpt-oss-120b, qwen32b)\n", *profile)
			return 2
		}
		opts.Profile, opts.Seed, opts.TimeScale = p, *seed, *timeScale
		if *errorRate >= 0 {
			opts.ErrorRate = *errorRate
		}
		if *fixProb >= 0 {
			opts.FixProb = *fixProb
		}
		if *newFault >= 0 {
			opts.NewFaultRate = *newFault
		}
		fmt.Fprintf(stderr, "hydra bench: simulated model (a stand-in, not a real model): planning faults for %d tasks with clang…\n", len(simTasks))
		sm, err := bench.NewSimModel(ctx, opts, simTasks, 2)
		if err != nil {
			fmt.Fprintf(stderr, "hydra bench: %v\n", err)
			return 2
		}
		defer sm.Close()
		if cfg.Model == "" {
			cfg.Model = sim.ModelName
		}
		env.Generator = sm.Generator
		describe = sm.Describe
	}

	runs, err := bench.Execute(ctx, cfg, env, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "hydra bench: %v\n", err)
		return 2
	}
	rep := bench.NewReport(cfg, describe(), runs)
	if *plotFile != "" {
		if err := bench.WritePlot(*plotFile, rep, runs); err != nil {
			fmt.Fprintf(stderr, "hydra bench: %v\n", err)
			return 2
		}
		fmt.Fprintf(stderr, "hydra bench: plot written to %s\n", *plotFile)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "hydra bench: %v\n", err)
			return 2
		}
	} else if err := rep.WriteTable(stdout); err != nil {
		fmt.Fprintf(stderr, "hydra bench: %v\n", err)
		return 2
	}
	failures := 0
	for _, p := range names {
		failures += rep.Policies[p].All.Failures
	}
	if failures > 0 {
		fmt.Fprintf(stderr, "hydra bench: %d runs failed on infrastructure errors (see the runs with --json --runs)\n", failures)
		return 1
	}
	return 0
}
