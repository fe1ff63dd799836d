package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hydra-lsp/hydra/checkers/tsbench"
)

// tsBenchCorpus copies rxjs's sources (scripts/install-deps.sh test) into a temporary directory
// and adds two files beside their originals, so that their imports resolve: benchOk.ts, a copy
// of internal/util/executeSchedule.ts (which imports other files), and benchBroken.ts,
// internal/util/argsArgArrayOrObject.ts with a type error put on line 3.
func tsBenchCorpus(t *testing.T) string {
	t.Helper()
	src, err := tsbench.FindCorpus()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := tsbench.CopyCorpus(src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	util := filepath.Join(dir, "internal", "util")
	ok, err := os.ReadFile(filepath.Join(util, "executeSchedule.ts"))
	if err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(filepath.Join(util, "argsArgArrayOrObject.ts"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(orig), "\n")
	broken := strings.Join(lines[:2], "") + "const benchBroken: number = 'not a number';\n" + strings.Join(lines[2:], "")
	for name, text := range map[string]string{"benchOk.ts": string(ok), "benchBroken.ts": broken} {
		if err := os.WriteFile(filepath.Join(util, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBenchCheckerTypeScript runs `hydra bench checker --lang typescript --json` on two files,
// one that checks and one with a type error on line 3, with two baseline samples each, and checks
// the one JSON object: every side (Hydra and the three baselines) has per-unit numbers in order
// (0 < median ≤ p90 ≤ max) and its ratio to Hydra, and every side's verdict on each file is the
// expected one, so that the sides agree. It judges no timing.
func TestBenchCheckerTypeScript(t *testing.T) {
	corpus := tsBenchCorpus(t)
	var out, errb bytes.Buffer
	code := benchCheckerMain([]string{"--lang", "typescript", "--json", "-q", "--corpus", corpus, "--only", "internal/util/bench",
		"--ts-files", "0", "--ts-min-lines", "0", "--ts-samples", "2"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if n := strings.Count(strings.TrimSpace(out.String()), "\n"); n != 0 {
		t.Fatalf("want one JSON line, got %d lines:\n%s", n+1, out.String())
	}
	var res tsbench.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	if res.Lang != "typescript" || res.Version == "" || res.CPUs <= 0 {
		t.Errorf("lang %q, version %q, cpus %d", res.Lang, res.Version, res.CPUs)
	}
	for _, name := range tsbench.Sides {
		s := res.Sides[name]
		if s == nil {
			t.Errorf("side %s missing: %s", name, out.String())
			continue
		}
		if s.Samples <= 0 || s.MedianMS <= 0 || s.P90MS < s.MedianMS || s.MaxMS < s.P90MS || s.Ratio <= 0 || s.What == "" {
			t.Errorf("side %s: %+v: want samples, 0 < median ≤ p90 ≤ max, a ratio and what it is", name, *s)
		}
		if name != tsbench.SideTsc && s.OpenMS <= 0 {
			t.Errorf("side %s: open_ms %v: the first unit was not timed", name, s.OpenMS)
		}
	}
	if h := res.Sides[tsbench.SideHydra]; h != nil && h.Ratio != 1 {
		t.Errorf("hydra's ratio to itself = %v", h.Ratio)
	}
	if res.SpeedupVsTsc <= 0 || res.SpeedupVsLSP <= 0 || res.SpeedupVsAPI <= 0 {
		t.Errorf("speedups %v %v %v: want each baseline's ratio", res.SpeedupVsTsc, res.SpeedupVsLSP, res.SpeedupVsAPI)
	}
	want := map[string]string{"internal/util/benchOk.ts": "ok", "internal/util/benchBroken.ts": "error at line 3 (TS2322)"}
	if len(res.Files) != len(want) {
		t.Fatalf("files %+v, want %v", res.Files, want)
	}
	for _, f := range res.Files {
		for _, name := range tsbench.Sides {
			if got := f.Verdicts[name]; got != want[f.File] {
				t.Errorf("%s: %s's verdict %q, want %q", f.File, name, got, want[f.File])
			}
		}
		if !f.Agree || f.Units < 2 {
			t.Errorf("%s: agree %v, %d units", f.File, f.Agree, f.Units)
		}
	}
	if !res.VerdictsAgree {
		t.Error("verdicts_agree is false")
	}
	if res.Units <= 0 || res.Sides[tsbench.SideHydra].Samples != res.Units {
		t.Errorf("units %d, hydra samples %d", res.Units, res.Sides[tsbench.SideHydra].Samples)
	}
	if la := res.LoadStart; la[0] < 0 {
		t.Errorf("load average %v", la)
	}
}

// TestBenchCheckerTypeScriptUsage: --help names --lang typescript; a missing compiler fails
// with the command that installs it; the Clang benchmark's own flags are refused with
// --lang typescript, and the TypeScript ones without it.
func TestBenchCheckerTypeScriptUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := benchCheckerMain([]string{"--help"}, &out, &errb); code != 0 || !strings.Contains(errb.String(), "--lang typescript") {
		t.Errorf("--help: exit %d, does not name --lang typescript:\n%s", code, errb.String())
	}
	errb.Reset()
	t.Setenv("HYDRA_TSC", filepath.Join(t.TempDir(), "tsc"))
	if code := benchCheckerMain([]string{"--lang", "typescript"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "scripts/install-deps.sh test installs it") {
		t.Errorf("missing tsc: exit %d, stderr %q", code, errb.String())
	}
	errb.Reset()
	if code := benchCheckerMain([]string{"--lang", "typescript", "--clangd-samples", "3"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "--clangd-samples") {
		t.Errorf("clang flag with --lang typescript: exit %d, stderr %q", code, errb.String())
	}
	errb.Reset()
	if code := benchCheckerMain([]string{"--ts-files", "3"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "--ts-files") {
		t.Errorf("--ts-files without --lang typescript: exit %d, stderr %q", code, errb.String())
	}
	errb.Reset()
	if code := benchCheckerMain([]string{"--lang", "rust"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "--lang") {
		t.Errorf("--lang rust: exit %d, stderr %q", code, errb.String())
	}
}
