package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hydra-lsp/hydra/cmd/hydra/internal/sandbox"
	"github.com/hydra-lsp/hydra/sim"
)

// benchJSON is the contract of `hydra bench --json`.
type benchJSON struct {
	Simulator map[string]any                           `json:"simulator"`
	Policies  map[string]map[string]map[string]float64 `json:"policies"`
	VsPostHoc map[string]map[string]float64            `json:"vs_posthoc"`
	Erroring  []string                                 `json:"erroring_tasks"`
}

// TestBenchRunsEveryPolicyWithConsistentFigures is the CI benchmark: every policy on a few
// tasks against the simulated model (sped up 20x), with the real Clang checker. It checks that
// the run completes and that its figures are complete and consistent, never how fast it was.
// The simulator is set so that a repair which regenerates a fault's root always works and
// retries make no new faults: then every policy that can reach the root must end with a
// compiling program, so static correctness can be compared without luck.
func TestBenchRunsEveryPolicyWithConsistentFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("the benchmark run takes a minute or two; run without -short")
	}
	bin := hydraBin
	plot := filepath.Join(t.TempDir(), "bench.svg")
	args := []string{"bench", "--tasks", "6", "--seed", "3", "--error-rate", "0.5", "--fix-prob", "1",
		"--new-fault-rate", "0", "--time-scale", "0.05", "--max-attempts", "8", "--json", "--plot", plot}
	if !sandboxHere(t) {
		args = append(args, "--run-tests=false")
	}
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hydra bench: %v\nstderr:\n%s", err, stderr.String())
	}
	var rep benchJSON
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("--json output is not one JSON object: %v\n%s", err, stdout.String())
	}
	if real, ok := rep.Simulator["real_model"].(bool); !ok || real {
		t.Errorf("the simulator does not state that it is not a real model: %v", rep.Simulator)
	}
	if _, ok := rep.Simulator["notes"]; !ok {
		t.Error("the simulator's assumptions are missing")
	}
	if len(rep.Erroring) == 0 {
		t.Fatal("no task hit a static error at error rate 0.5: nothing to compare")
	}
	fields := []string{"tasks", "latency_mean_s", "latency_p50_s", "latency_p75_s", "tokens_mean",
		"tokens_p50", "tokens_p75", "static_correct", "functional_correct"}
	for _, p := range benchOrder {
		for _, scope := range []string{"all", "erroring"} {
			m, ok := rep.Policies[p][scope]
			if !ok {
				t.Fatalf("policies.%s.%s missing", p, scope)
			}
			for _, f := range fields {
				v, ok := m[f]
				if !ok {
					t.Errorf("policies.%s.%s.%s missing", p, scope, f)
				}
				if v < 0 || (strings.Contains(f, "correct") && v > 1) {
					t.Errorf("policies.%s.%s.%s = %v out of range", p, scope, f, v)
				}
			}
			if m["latency_p50_s"] > m["latency_p75_s"] || m["tokens_p50"] > m["tokens_p75"] {
				t.Errorf("policies.%s.%s: p50 above p75: %v", p, scope, m)
			}
		}
		if all, e := rep.Policies[p]["all"], rep.Policies[p]["erroring"]; all["tasks"] != 6 || e["tasks"] != float64(len(rep.Erroring)) {
			t.Errorf("%s: %v tasks in all, %v erroring; want 6 and %d", p, all["tasks"], e["tasks"], len(rep.Erroring))
		}
		if p != "unconstrained" && rep.Policies[p]["all"]["tokens_mean"] <= 0 {
			t.Errorf("%s generated no tokens", p)
		}
	}
	post := rep.Policies["posthoc"]["erroring"]["static_correct"]
	for _, p := range []string{"tokpol", "local-first", "fixed", "uncertainty", "parallel", "random"} {
		if got := rep.Policies[p]["erroring"]["static_correct"]; got < post {
			t.Errorf("%s: static correctness %v on erroring tasks, below post-hoc's %v", p, got, post)
		}
	}
	// Unconstrained generation never repairs: on tasks whose first program has an error it
	// cannot be statically correct, which shows the erroring split is real.
	if got := rep.Policies["unconstrained"]["erroring"]["static_correct"]; got != 0 {
		t.Errorf("unconstrained static correctness on erroring tasks = %v, want 0", got)
	}
	if _, ok := rep.VsPostHoc["tokpol"]; !ok {
		t.Error("no comparison with post-hoc repair")
	}
	if info, err := os.Stat(plot); err != nil || info.Size() == 0 {
		t.Errorf("plot not written: %v", err)
	}
	t.Logf("stderr tail:\n%s", tail(stderr.String(), 600))
}

func TestBenchRejectsBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--policies", "tokpol,greedy"}, `unknown policy "greedy"`},
		{[]string{"--plot", "x.gif"}, "want a .svg or .png"},
		{[]string{"--time-scale", "-1"}, "must not be negative"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"--sim", "local=0.1,speed=2"}, `unknown simulator parameter "speed"`},
		{[]string{"--sim", "local=0.7,far=0.6"}, "add up to more than 1"},
		{[]string{"--sim", "fix=1.2"}, "fix=1.2 is not in [0, 1]"},
		{[]string{"--sim", "fix"}, "is not name=value"},
		{[]string{"--sweep", "local=0.1/0.9,far=0.6"}, "more than 1 together"},
		{[]string{"--sweep", "local=0.1", "--model-url", "http://127.0.0.1:1/v1"}, "cannot run against --model-url"},
		{[]string{"--tasks", "no-such-set"}, "is not a number, a set"},
		{[]string{"--concurrency", "0"}, "--concurrency at least 1"},
		{[]string{"--json", "--markdown"}, "exclude each other"},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		if code := benchMain(tc.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("bench %v: exit %d, stderr %q; want 2 and %q", tc.args, code, errb.String(), tc.want)
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// TestBenchTalksToAServerGivenByURL runs the --model-url path against the simulated model
// served over HTTP like any OpenAI-compatible server (a stand-in for a real one).
func TestBenchTalksToAServerGivenByURL(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the checker; run without -short")
	}
	opts := sim.DefaultOptions()
	opts.TimeScale = 0
	opts.ErrorRate = 1
	srv, err := sim.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	// The model's programs are run (HumanEval-X's tests, in the sandbox) only with --run-tests.
	runs := []bool{false, true}
	if !sandboxHere(t) {
		runs = runs[:1]
	}
	for _, runTests := range runs {
		var stdout, stderr bytes.Buffer
		args := []string{"--model-url", hs.URL + "/v1", "--model", sim.ModelName, "--tasks", "2", "--source", "humaneval-x",
			"--policies", "tokpol,posthoc", "--json"}
		if runTests {
			args = append(args, "--run-tests")
		}
		code := benchMain(args, &stdout, &stderr)
		if code != 0 {
			t.Fatalf("run tests %v: exit %d\n%s", runTests, code, stderr.String())
		}
		var rep struct {
			benchJSON
			Policies map[string]map[string]map[string]float64 `json:"policies"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		// The server names itself the simulator in /v1/models: real_model comes from that, not
		// from --model-url.
		if real, ok := rep.Simulator["real_model"].(bool); !ok || real || rep.Simulator["url"] == nil {
			t.Errorf("model description %v: want real_model false (the server is the simulator) and its URL", rep.Simulator)
		}
		for _, p := range []string{"tokpol", "posthoc"} {
			if m := rep.Policies[p]["all"]; m["tasks"] != 2 || m["tokens_mean"] <= 0 || m["attempts_mean"] < 1 {
				t.Errorf("%s: %v", p, m)
			}
			want := 0.0
			if runTests {
				want = 2
			}
			if got := rep.Policies[p]["all"]["functional_tasks"]; got != want {
				t.Errorf("run tests %v: %s: functional checks on %v tasks, want %v", runTests, p, got, want)
			}
		}
		if said := strings.Contains(stderr.String(), "only parsed, not run"); said == runTests {
			t.Errorf("run tests %v: stderr says the programs are only parsed: %v\n%s", runTests, said, stderr.String())
		}
	}
}

// sandboxHere says whether the sandbox for generated code can run here. Only in a chroot, where
// bubblewrap cannot make one (sandbox.InChroot), may it not: the test then runs without the
// functional check and says so; anywhere else an unavailable sandbox fails the test.
func sandboxHere(t *testing.T) bool {
	t.Helper()
	err := (&sandbox.Sandbox{}).Available(context.Background())
	if err == nil {
		return true
	}
	if !sandbox.InChroot() {
		t.Fatal(err)
	}
	t.Logf("this machine is a chroot, where bubblewrap cannot make a sandbox: the functional check is left out (%v)", err)
	return false
}
