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

	"github.com/hydra-lsp/hydra/engine"
)

func knownParams(n string) bool {
	return n == "local" || n == "far" || n == "fix" || n == "logprob-auc"
}

func TestParseGridAndPoints(t *testing.T) {
	axes, err := ParseGrid("local=0.1/0.3, far=0.6,fix=0.5/0.7/0.9", knownParams)
	if err != nil {
		t.Fatal(err)
	}
	if len(axes) != 3 || axes[0].Name != "local" || len(axes[2].Values) != 3 || axes[1].Values[0] != 0.6 {
		t.Fatalf("axes = %+v", axes)
	}
	pts := Points(axes)
	if len(pts) != 6 {
		t.Fatalf("%d points, want 2x1x3", len(pts))
	}
	if pts[0]["local"] != 0.1 || pts[0]["fix"] != 0.5 || pts[1]["fix"] != 0.7 || pts[5]["local"] != 0.3 || pts[5]["fix"] != 0.9 {
		t.Errorf("points in the wrong order: %v", pts)
	}
	for _, bad := range []struct{ spec, want string }{
		{"", "names no parameter"},
		{"local", "want name=v1/v2"},
		{"speed=0.1", "unknown simulator parameter"},
		{"local=0.1/x", "not a number"},
		{"local=1.5", "not a number in [0, 1]"},
		{"local=0.1,local=0.2", "given twice"},
	} {
		if _, err := ParseGrid(bad.spec, knownParams); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ParseGrid(%q) = %v, want an error with %q", bad.spec, err, bad.want)
		}
	}
}

func TestPairedRatioIsTheGeometricMeanWithAnIntervalAroundIt(t *testing.T) {
	a := []float64{50, 100, 200, 80, 0}
	b := []float64{100, 200, 400, 160, 10} // every ratio 0.5; the zero pair is left out
	iv := PairedRatio(a, b, 1)
	if iv.Tasks != 4 || math.Abs(iv.Ratio-0.5) > 1e-12 || math.Abs(iv.Lo-0.5) > 1e-12 || math.Abs(iv.Hi-0.5) > 1e-12 {
		t.Errorf("constant ratio 0.5: %+v", iv)
	}
	a = []float64{1, 2, 4, 1, 2, 4, 1, 2}
	b = []float64{2, 2, 2, 2, 2, 2, 2, 2}
	iv = PairedRatio(a, b, 1)
	if !(iv.Lo < iv.Ratio && iv.Ratio < iv.Hi) || iv.Lo <= 0.4 || iv.Hi >= 2.1 {
		t.Errorf("varied ratios: %+v, want lo < ratio < hi within the data", iv)
	}
	if again := PairedRatio(a, b, 1); again.Lo != iv.Lo || again.Hi != iv.Hi || again.Ratio != iv.Ratio || again.P != iv.P {
		t.Errorf("the interval is not reproducible: %+v then %+v", iv, again)
	}
}

// TestSweepJSONContract: --json of a sweep is {"cells":[{"sim":{…},"policies":{NAME:{"all":M,
// "erroring":M}}}]}, with M the metrics of a plain report, and TokPol's paired ratios per cell.
func TestSweepJSONContract(t *testing.T) {
	runs := sampleRuns()
	for i := range runs {
		if runs[i].Policy == "posthoc" {
			r := runs[i]
			r.Policy = "local-first"
			runs = append(runs, r)
		}
	}
	cfg := Config{Tasks: 3, Policies: []string{"tokpol", "local-first", "posthoc"}}
	rep := NewReport(cfg, map[string]any{"model": "m", "real_model": false}, runs)
	axes := []Axis{{Name: "local", Values: []float64{0.1, 0.3}}, {Name: "far", Values: []float64{0.6}}}
	sw := &Sweep{Axes: axes, Config: cfg}
	for _, p := range Points(axes) {
		sw.Cells = append(sw.Cells, NewCell(map[string]float64{"local": p["local"], "far": p["far"], "fix": 0.5}, rep))
	}
	data, err := json.Marshal(sw)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Cells []struct {
			Sim      map[string]float64                       `json:"sim"`
			Policies map[string]map[string]map[string]float64 `json:"policies"`
			Paired   []map[string]any                         `json:"paired"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Cells) != 2 || got.Cells[1].Sim["local"] != 0.3 || got.Cells[1].Sim["fix"] != 0.5 {
		t.Fatalf("cells = %+v", got.Cells)
	}
	for _, c := range got.Cells {
		for _, p := range cfg.Policies {
			for _, scope := range []string{"all", "erroring"} {
				m, ok := c.Policies[p][scope]
				if !ok {
					t.Fatalf("cell %v: policies.%s.%s missing", c.Sim, p, scope)
				}
				for _, f := range []string{"tasks", "tokens_mean", "latency_mean_s", "static_correct", "repair_overhead_tokens_mean"} {
					if _, ok := m[f]; !ok {
						t.Errorf("cell %v: policies.%s.%s.%s missing", c.Sim, p, scope, f)
					}
				}
			}
		}
		if len(c.Paired) != 2 || c.Paired[0]["b"] != "local-first" || c.Paired[1]["b"] != "posthoc" {
			t.Errorf("cell %v: paired = %v", c.Sim, c.Paired)
		}
	}
	// TokPol used 150 tokens where local-first used 300 on the one erroring task.
	if p := sw.Cells[0].Paired[0]; math.Abs(p.Tokens.Ratio-0.5) > 1e-9 || verdict(p.Tokens) != "wins" {
		t.Errorf("tokpol/local-first = %+v (%s)", p.Tokens, verdict(p.Tokens))
	}
	var md bytes.Buffer
	if err := sw.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| local | far | erroring |") || strings.Count(md.String(), "\n") != 4 {
		t.Errorf("markdown:\n%s", md.String())
	}
	path := filepath.Join(t.TempDir(), "heat.svg")
	if err := sw.WriteHeatmap(path); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(svg), "TokPol/local-first") || !strings.Contains(string(svg), "0.50") {
		t.Errorf("heatmap does not show the ratios: %v", err)
	}
}

func TestRepairOverheadIsTokensBeyondTheUnconstrainedRun(t *testing.T) {
	runs := append(sampleRuns(),
		Run{Task: "a", Policy: "unconstrained", Tokens: 90},
		Run{Task: "b", Policy: "unconstrained", Tokens: 100, HitError: true},
		Run{Task: "c", Policy: "unconstrained", Tokens: 120})
	rep := NewReport(Config{Policies: []string{"tokpol", "posthoc", "unconstrained"}}, nil, runs)
	if got := rep.Policies["tokpol"].Erroring.RepairOverheadMean; got != 50 {
		t.Errorf("tokpol overhead on the erroring task = %v, want 150-100", got)
	}
	if got := rep.Policies["posthoc"].All.RepairOverheadMean; math.Abs(got-(10+200+0)/3.0) > 1e-9 {
		t.Errorf("posthoc overhead over all tasks = %v", got)
	}
}

func TestRunDirResumesOnlyTheSameConfiguration(t *testing.T) {
	dir := t.TempDir()
	d, err := OpenRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Bind(map[string]any{"tasks": 3}); err != nil {
		t.Fatal(err)
	}
	ok := Run{Task: "CPP/1", Policy: "tokpol:q=0.8", Tokens: 42, Latency: time.Second}
	broken := Run{Task: "c/x.c", Policy: "posthoc", Err: "server gone"}
	for _, r := range []Run{ok, broken} {
		if err := d.Save(r); err != nil {
			t.Fatal(err)
		}
	}
	again, _ := OpenRunDir(dir)
	if err := again.Bind(map[string]any{"tasks": 3}); err != nil {
		t.Errorf("same configuration refused: %v", err)
	}
	if err := again.Bind(map[string]any{"tasks": 4}); err == nil || !strings.Contains(err.Error(), "another configuration") {
		t.Errorf("another configuration: %v", err)
	}
	done, err := again.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != 1 || done[RunKey("CPP/1", "tokpol:q=0.8")].Tokens != 42 {
		t.Errorf("loaded %v; want the one run without an error", done)
	}
}

func TestIsRealModelReadsWhatTheServerSays(t *testing.T) {
	for _, tc := range []struct {
		models map[string]string
		want   bool
	}{
		{map[string]string{"Qwen/Qwen2.5-Coder-32B-Instruct": "vllm"}, true},
		{map[string]string{"hydra-simulated-model": "hydra (simulated, not a real model)"}, false},
		{map[string]string{"scripted-stand-in": "hydra-tests"}, false},
		{map[string]string{"x": "someone's stand-in"}, false},
		{map[string]string{}, false},
	} {
		if got := IsRealModel(tc.models); got != tc.want {
			t.Errorf("IsRealModel(%v) = %v", tc.models, got)
		}
	}
}

func TestCheckerLagIsTheTimeFromStreamToAcceptance(t *testing.T) {
	tr := &engine.Trace{
		Rollouts: []engine.TraceRollout{{ID: 1, Stream: []engine.TracePoint{{AtMS: 10, Off: 100}, {AtMS: 20, Off: 200}, {AtMS: 30, Off: 300}}}},
		Nodes: []engine.TraceNode{
			{ID: 0, Kind: "root", Off: 50},
			{ID: 1, Kind: "progress", Rollout: 1, Off: 150, AtMS: 35}, // streamed by 20 ms: 15 ms behind
			{ID: 2, Kind: "progress", Rollout: 1, Off: 300, AtMS: 35}, // streamed at 30 ms: 5 ms behind
			{ID: 3, Kind: "error", Rollout: 1, Off: 310, AtMS: 90},    // errors do not count
		},
	}
	if got := checkerLag(tr); math.Abs(got-10) > 1e-9 {
		t.Errorf("checker lag = %v ms, want (15 + 5) / 2", got)
	}
	if checkerLag(nil) != 0 {
		t.Error("no trace, yet a lag")
	}
}

func TestTaskFileOfTheUsersOwn(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "tasks.jsonl")
	os.WriteFile(good, []byte(`{"id": "mine/1", "lang": "c++", "prompt": "int f() {\n", "solution": "  return 1;\n}\n"}

{"id": "mine/2", "lang": "c", "prompt": "int g(void) {\n", "solution": "  return 2;\n}\n", "test": "int main(void) { return g() != 2; }\n"}
`), 0o644)
	ts, err := LoadTasks(TaskOptions{File: good})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].ID != "mine/1" || ts[1].Test == "" || ts[0].Source != "file" {
		t.Errorf("tasks = %+v", ts)
	}
	for _, bad := range []struct{ text, want string }{
		{`{"id": "x", "lang": "c++"}`, "needs an id and a prompt"},
		{`{"id": "x", "lang": "rust", "prompt": "fn"}`, `lang "rust" is not c, c++ or typescript`},
		{`{"id": "x", "lang": "c", "prompt": "a"}` + "\n" + `{"id": "x", "lang": "c", "prompt": "b"}`, "appears twice"},
		{`not json`, "tasks.jsonl:1"},
		{``, "no tasks"},
	} {
		os.WriteFile(good, []byte(bad.text), 0o644)
		if _, err := LoadTasks(TaskOptions{File: good}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v, want an error with %q", bad.text, err, bad.want)
		}
	}
}
