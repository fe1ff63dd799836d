package bench

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func boolp(b bool) *bool { return &b }

func sampleRuns() []Run {
	mk := func(task, pol string, sec float64, tok int, hit, static bool, fn *bool) Run {
		return Run{Task: task, Policy: pol, Latency: time.Duration(sec * float64(time.Second)), Tokens: tok,
			HitError: hit, StaticOK: static, Functional: fn, Attempts: 1, PromptTokens: 100, CachedPromptTokens: 50}
	}
	return []Run{
		mk("a", "tokpol", 1, 100, false, true, boolp(true)),
		mk("b", "tokpol", 2, 150, true, true, boolp(false)),
		mk("c", "tokpol", 1, 120, false, true, nil),
		mk("a", "posthoc", 1, 100, false, true, boolp(true)),
		mk("b", "posthoc", 4, 300, true, false, boolp(false)),
		mk("c", "posthoc", 1, 120, false, true, nil),
		mk("a", "unconstrained", 0.5, 100, false, true, boolp(true)),
		mk("b", "unconstrained", 1, 100, true, false, boolp(false)),
		mk("c", "unconstrained", 1.5, 120, false, true, nil),
	}
}

func TestReportSplitsErroringTasksAndComparesWithPostHoc(t *testing.T) {
	cfg := Config{Tasks: 3, Seed: 1, Policies: []string{"tokpol", "posthoc", "unconstrained"}}
	r := NewReport(cfg, map[string]any{"name": "stand-in"}, sampleRuns())
	if len(r.ErroringTasks) != 1 || r.ErroringTasks[0] != "b" {
		t.Fatalf("erroring tasks %v, want [b]", r.ErroringTasks)
	}
	tp := r.Policies["tokpol"]
	if tp.All.Tasks != 3 || tp.Erroring.Tasks != 1 {
		t.Errorf("tokpol tasks all=%d erroring=%d", tp.All.Tasks, tp.Erroring.Tasks)
	}
	if math.Abs(tp.All.TokensMean-370.0/3) > 1e-9 || tp.All.TokensP50 != 120 || tp.All.StaticCorrect != 1 {
		t.Errorf("tokpol all = %+v", tp.All)
	}
	if tp.All.FunctionalTasks != 2 || tp.All.FunctionalCorrect != 0.5 {
		t.Errorf("functional %v of %d, want 0.5 of 2", tp.All.FunctionalCorrect, tp.All.FunctionalTasks)
	}
	if got := r.Policies["posthoc"].Erroring.StaticCorrect; got != 0 {
		t.Errorf("posthoc erroring static = %v, want 0", got)
	}
	v := r.VsPostHoc["tokpol"]
	if math.Abs(v.TokensChange-(-0.5)) > 1e-9 || math.Abs(v.LatencyChange-(-0.5)) > 1e-9 {
		t.Errorf("tokpol vs posthoc %+v, want -50%% both", v)
	}
	// Error-free tasks a and c: tokpol mean latency 1 s vs unconstrained 1 s.
	if got := r.ErrorFreeVsUnconstrained["tokpol"]; math.Abs(got) > 1e-9 {
		t.Errorf("error-free latency change %v, want 0", got)
	}
	if r.Policies["tokpol"].All.PromptCacheHit != 0.5 {
		t.Errorf("prompt cache hit %v, want 0.5", r.Policies["tokpol"].All.PromptCacheHit)
	}
}

func TestReportJSONHasTheContractFields(t *testing.T) {
	cfg := Config{Tasks: 3, Seed: 1, Policies: []string{"tokpol", "posthoc", "unconstrained"}}
	data, err := json.Marshal(NewReport(cfg, map[string]any{"name": "stand-in"}, sampleRuns()))
	if err != nil {
		t.Fatal(err)
	}
	var obj struct {
		Simulator map[string]any                           `json:"simulator"`
		Policies  map[string]map[string]map[string]float64 `json:"policies"`
	}
	if err := json.Unmarshal(data, &obj); err != nil {
		t.Fatal(err)
	}
	if obj.Simulator["name"] != "stand-in" {
		t.Errorf("simulator = %v", obj.Simulator)
	}
	for _, p := range cfg.Policies {
		for _, scope := range []string{"all", "erroring"} {
			m, ok := obj.Policies[p][scope]
			if !ok {
				t.Fatalf("policies.%s.%s missing", p, scope)
			}
			for _, k := range []string{"tasks", "latency_mean_s", "latency_p50_s", "latency_p75_s", "tokens_mean",
				"tokens_p50", "tokens_p75", "static_correct", "functional_correct"} {
				if _, ok := m[k]; !ok {
					t.Errorf("policies.%s.%s.%s missing", p, scope, k)
				}
			}
		}
	}
}

func TestTableAndPlotAreWritten(t *testing.T) {
	cfg := Config{Tasks: 3, Seed: 1, Policies: []string{"tokpol", "posthoc", "unconstrained"}}
	r := NewReport(cfg, map[string]any{"name": "stand-in"}, sampleRuns())
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"stand-in", "Tasks that hit a static error (1)", "All tasks (3)", "tokpol", "-50%", "66.7%"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	for _, name := range []string{"p.svg", "p.png"} {
		path := filepath.Join(t.TempDir(), name)
		if err := WritePlot(path, r, sampleRuns()); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if name == "p.svg" && !bytes.Contains(data, []byte("<svg")) || name == "p.png" && !bytes.HasPrefix(data, []byte("\x89PNG")) {
			t.Errorf("%s is not an image (%d bytes)", name, len(data))
		}
	}
	if err := WritePlot(filepath.Join(t.TempDir(), "p.gif"), r, sampleRuns()); err == nil {
		t.Error("no error for a .gif plot")
	}
}
