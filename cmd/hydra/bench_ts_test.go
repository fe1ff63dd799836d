package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"testing"
)

// TestBenchTypeScriptTasks runs `hydra bench --tasks humaneval-ts` small: TokPol, local-first,
// fixed and post-hoc repair against the simulated model on three HumanEval tasks in TypeScript,
// every first attempt with a fault (checked with tsc), with the TypeScript checker and the
// functional check (tsc, then node in the sandbox). Every shipped task's reference compiles and
// passes its tests, and a repair that regenerates a fault's root always works here, so every
// repairing policy must end statically and functionally correct; unconstrained generation keeps
// the fault.
func TestBenchTypeScriptTasks(t *testing.T) {
	if testing.Short() {
		t.Skip("the benchmark run takes a minute; run without -short")
	}
	sandboxHere(t)
	cmd := exec.Command(hydraBin, "bench", "--tasks", "humaneval-ts", "--task",
		"HumanEval_55_fib,HumanEval_0_has_close_elements,HumanEval_106_f", "--error-rate", "1", "--fix-prob", "1",
		"--new-fault-rate", "0", "--time-scale", "0.05", "--policies", "tokpol,local-first,fixed,posthoc,unconstrained",
		"--concurrency", "2", "--json", "--runs")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hydra bench: %v\nstderr:\n%s", err, stderr.String())
	}
	var rep struct {
		Erroring []string `json:"erroring_tasks"`
		Runs     []struct {
			Task       string `json:"task"`
			Policy     string `json:"policy"`
			StaticOK   bool   `json:"static_ok"`
			Functional *bool  `json:"functional"`
			Attempts   int    `json:"attempts"`
			Err        string `json:"err"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, stdout.String())
	}
	if len(rep.Runs) != 15 {
		t.Fatalf("%d runs, want 3 tasks x 5 policies", len(rep.Runs))
	}
	if len(rep.Erroring) == 0 {
		t.Fatal("no task hit a static error at error rate 1: the faults were not planned")
	}
	erroring := map[string]bool{}
	for _, id := range rep.Erroring {
		erroring[id] = true
	}
	for _, r := range rep.Runs {
		if r.Err != "" || r.Functional == nil {
			t.Errorf("%s %s: error %q, functional check run: %v", r.Task, r.Policy, r.Err, r.Functional != nil)
			continue
		}
		if r.Policy == "unconstrained" {
			if erroring[r.Task] && (r.StaticOK || *r.Functional) {
				t.Errorf("%s: unconstrained generation kept no fault: static %v functional %v", r.Task, r.StaticOK, *r.Functional)
			}
			continue
		}
		if !r.StaticOK || !*r.Functional {
			t.Errorf("%s %s: static %v functional %v after %d attempts, want both correct", r.Task, r.Policy, r.StaticOK, *r.Functional, r.Attempts)
		}
		if erroring[r.Task] && r.Attempts < 2 {
			t.Errorf("%s %s: %d attempts on a task whose first attempt had a fault", r.Task, r.Policy, r.Attempts)
		}
	}
}

// TestBenchLangFlag: --lang typescript takes the TypeScript tasks, as --tasks humaneval-ts and
// --source humaneval-ts do, and refuses a C/C++ set or an unknown language.
func TestBenchLangFlag(t *testing.T) {
	for _, tc := range []struct {
		lang, tasks, source, want string
		bad                       bool
	}{
		{"typescript", "20", "", "humaneval-ts", false},
		{"typescript", "humaneval-ts", "", "humaneval-ts", false},
		{"c", "humaneval-ts", "", "humaneval-ts", false},
		{"c", "5", "humaneval-ts", "humaneval-ts", false},
		{"c", "20", "", "", false},
		{"typescript", "humaneval-x", "", "", true},
		{"typescript", "20", "thealgorithms", "", true},
		{"rust", "20", "", "", true},
	} {
		f := benchFlags{lang: tc.lang, tasks: tc.tasks, source: tc.source}
		o, err := f.taskOptions()
		if (err != nil) != tc.bad || !tc.bad && o.Source != tc.want {
			t.Errorf("--lang %s --tasks %s --source %q: source %q, error %v; want source %q, error %v",
				tc.lang, tc.tasks, tc.source, o.Source, err, tc.want, tc.bad)
		}
	}
}
