package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hydra-lsp/hydra/checkers/agreement"
)

// TestBenchCheckerSmoke runs `hydra bench checker --json` on a corpus program, a heavy-set program
// and a short growth program, and checks that
// the one JSON object has every promised field, each a non-negative number, and that each
// measurement actually produced samples. It judges no timing.
func TestBenchCheckerSmoke(t *testing.T) {
	var out, errb bytes.Buffer
	code := benchCheckerMain([]string{"--json", "-q", "--programs", "1", "--reinvoke-samples", "1", "--clangd-samples", "2", "--checkpoint-every", "10",
		"--heavy-programs", "1", "--growth-lines", "120", "--growth-clangd-samples", "2", "--pace", "2ms"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if n := strings.Count(strings.TrimSpace(out.String()), "\n"); n != 0 {
		t.Fatalf("want one JSON line, got %d lines:\n%s", n+1, out.String())
	}
	var res map[string]any
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	for _, k := range []string{"incremental_median_ms", "incremental_p99_ms", "reinvoke_median_ms", "clangd_median_ms",
		"speedup_vs_reinvoke", "speedup_vs_clangd", "fork_ms", "checkpoint_prep_ms", "resume_ms", "checkpoint_private_kb",
		"cold_preamble_ms", "warm_preamble_ms"} {
		v, ok := res[k].(float64)
		if !ok {
			t.Errorf("field %s missing or not a number: %v", k, res[k])
			continue
		}
		if v < 0 {
			t.Errorf("field %s = %v is negative", k, v)
		}
	}
	for _, k := range []string{"incremental_samples", "reinvoke_samples", "clangd_samples", "fork_samples", "resume_samples", "checkpoint_samples"} {
		if v, _ := res[k].(float64); v <= 0 {
			t.Errorf("%s = %v: nothing measured", k, res[k])
		}
	}
	if res["programs"] != 2.0 {
		t.Errorf("programs = %v, want 2 (1 default, 1 heavy)", res["programs"])
	}
	// Issue 13's additions: the same keys per set, the latency split, the growth slopes.
	bySet, _ := res["by_set"].(map[string]any)
	for _, name := range []string{"default", "heavy"} {
		set, ok := bySet[name].(map[string]any)
		if !ok {
			t.Errorf("by_set.%s missing: %v", name, res["by_set"])
			continue
		}
		for k, v := range res {
			if _, isNum := v.(float64); isNum && k != "programs" {
				if _, ok := set[k].(float64); !ok {
					t.Errorf("by_set.%s.%s missing", name, k)
				}
			}
		}
	}
	for obj, keys := range map[string][]string{"breakdown_ms": {"driver", "ipc", "shim", "shim_faults_mean", "round_trip_raw", "round_trip_one_processor", "ipc_one_processor"}, "slope_ms_per_100_lines": {"hydra", "clangd"}} {
		m, _ := res[obj].(map[string]any)
		for _, k := range keys {
			if _, ok := m[k].(float64); !ok {
				t.Errorf("%s.%s missing or not a number: %v", obj, k, res[obj])
			}
		}
	}
	if bd, _ := res["breakdown_ms"].(map[string]any); bd["samples"] == 0.0 {
		t.Error("breakdown_ms from no samples")
	} else if rt, _ := bd["round_trip_one_processor"].(float64); rt <= 0 {
		t.Errorf("breakdown_ms.round_trip_one_processor = %v: nothing measured", bd["round_trip_one_processor"])
	}
	if res["pace_ms"] != 2.0 {
		t.Errorf("pace_ms = %v, want 2 (--pace 2ms)", res["pace_ms"])
	}
	// Every per-line sample lies either within the first chunks after a checkpoint or later.
	if ac, _ := res["after_checkpoint"].(map[string]any); ac["chunks"] != 5.0 {
		t.Errorf("after_checkpoint = %v, want chunks 5", res["after_checkpoint"])
	} else if a, l := ac["after_samples"].(float64), ac["later_samples"].(float64); a <= 0 || a+l != res["incremental_samples"] {
		t.Errorf("after_checkpoint: %v + %v samples, want some after a checkpoint and %v in all", a, l, res["incremental_samples"])
	}
	// The slowest lines, slowest first: the slowest is the maximum, each from a program measured.
	for name, r := range map[string]any{"top level": res, "by_set.default": bySet["default"], "by_set.heavy": bySet["heavy"]} {
		m, _ := r.(map[string]any)
		lines, _ := m["slowest_lines"].([]any)
		if want := min(10, m["incremental_samples"].(float64)); float64(len(lines)) != want {
			t.Errorf("%s: %d slowest_lines, want %v (--slowest defaults to 10)", name, len(lines), want)
			continue
		}
		ids := fmt.Sprint(m["program_ids"])
		prev := m["incremental_max_ms"].(float64)
		for k, l := range lines {
			sl, _ := l.(map[string]any)
			ms, _ := sl["ms"].(float64)
			if k == 0 && ms != prev || ms > prev {
				t.Errorf("%s: slowest_lines[%d].ms = %v after %v (max %v): not slowest first", name, k, ms, prev, m["incremental_max_ms"])
			}
			prev = ms
			// The text may be empty: a blank line is a chunk of its own.
			if p, _ := sl["program"].(string); p == "" || !strings.Contains(ids, p) || sl["line"].(float64) < 1 {
				t.Errorf("%s: slowest_lines[%d] = %v: not a line of %s", name, k, sl, ids)
			}
		}
	}
	// What the run was measured on: the load before and after (the idle-processor settings are
	// there where the machine has them).
	machine, _ := res["machine"].(map[string]any)
	for _, k := range []string{"load_average_start", "load_average_end"} {
		if la, _ := machine[k].([]any); len(la) != 3 {
			t.Errorf("machine.%s = %v, want three numbers", k, machine[k])
		}
	}
	t.Logf("%s", out.String())
}

func TestBenchCheckerUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := benchCheckerMain([]string{"--corpus", "/nonexistent.jsonl.gz"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "nonexistent") {
		t.Fatalf("missing corpus: exit %d, stderr %q", code, errb.String())
	}
	errb.Reset()
	if code := benchCheckerMain([]string{"extra"}, &out, &errb); code != 2 {
		t.Fatalf("stray argument: exit %d", code)
	}
	errb.Reset()
	if code := benchCheckerMain([]string{"--pace", "-1ms"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "--pace") {
		t.Fatalf("negative pace: exit %d, stderr %q", code, errb.String())
	}
	errb.Reset()
	if code := benchCheckerMain([]string{"--slowest", "-1"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "--slowest") {
		t.Fatalf("negative --slowest: exit %d, stderr %q", code, errb.String())
	}
}

func TestPickProgramsBalancesLanguages(t *testing.T) {
	var all []agreement.Program
	for i := 0; i < 10; i++ {
		all = append(all, agreement.Program{ID: fmt.Sprintf("c/%d.c", i), Lang: "c"})
	}
	for i := 0; i < 3; i++ {
		all = append(all, agreement.Program{ID: fmt.Sprintf("cpp/%d.cpp", i), Lang: "c++"})
	}
	tests := []struct {
		only string
		n    int
		want []string
	}{
		{"", 2, []string{"cpp/0.cpp", "c/0.c"}},
		{"", 4, []string{"cpp/0.cpp", "cpp/1.cpp", "c/0.c", "c/5.c"}},
		{"", 8, []string{"cpp/0.cpp", "cpp/1.cpp", "cpp/2.cpp", "c/0.c", "c/2.c", "c/4.c", "c/6.c", "c/8.c"}},
		{"c/", 2, []string{"c/0.c", "c/5.c"}},
		{"", 0, nil}, // all
	}
	for _, tt := range tests {
		var got []string
		for _, p := range pickPrograms(all, tt.only, tt.n) {
			got = append(got, p.ID)
		}
		if tt.n == 0 {
			if len(got) != len(all) {
				t.Errorf("n=0: %d programs, want all %d", len(got), len(all))
			}
			continue
		}
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("pickPrograms(%q, %d) = %v, want %v", tt.only, tt.n, got, tt.want)
		}
	}
}
