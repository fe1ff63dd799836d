// Package tsbench is the TypeScript checker's benchmark (issue 36, "Benchmarks"): it streams
// real TypeScript files, unit by unit (the units of the TypeScript chunker, checkers/lang's
// TypeScript syntax), into Hydra's TypeScript checker and times each unit, side by side in one
// run with three baselines on the same growing prefixes:
//
//   - tsc: re-running `tsc -p` (TypeScript's own command line compiler) on the prefix written to
//     disk, under a generated tsconfig.json with the options Hydra applies;
//   - lsp: the editor's TypeScript language server (`tsc --lsp --stdio`), the prefix grown by an
//     incremental didChange and its diagnostics pulled with textDocument/diagnostic;
//   - api_fresh: the compiler API (`tsc --api`) re-checking the prefix in a fresh snapshot that
//     reuses nothing from the previous one (fileChanges invalidateAll), where Hydra's checker
//     tells the API which one file changed.
//
// Each also gives its verdict on the whole file, so that a disagreement with Hydra shows. Call
// Run; `hydra bench checker --lang typescript` prints its Result. It is a benchmark, not a test:
// nothing here judges the times.
package tsbench

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/chunk"
	"github.com/hydra-lsp/hydra/checkers/lang"
	"github.com/hydra-lsp/hydra/checkers/typescript"
	"github.com/hydra-lsp/hydra/internal/stats"
)

// Config says what to measure.
type Config struct {
	// Checker is Hydra's TypeScript checker (one compiler process for every file's session).
	Checker *typescript.Checker
	// Compiler is TypeScript's tsc binary the baselines run (the checker's own, so that every
	// side runs the same compiler).
	Compiler string
	// Corpus is a directory of TypeScript sources (rxjs's src/); it is copied twice into
	// temporary directories, so that imports between its files resolve and nothing is written
	// into it.
	Corpus string
	// Files are the files to stream, relative to Corpus.
	Files []string
	// Samples is the number of units per file each baseline checks, spread evenly over the
	// file and always ending with the whole file (0: every unit).
	Samples int
	// Log, when set, receives a line per step.
	Log func(format string, args ...any)
}

// Latency sums up per-unit times (milliseconds).
type Latency struct {
	MedianMS float64 `json:"median_ms"`
	P90MS    float64 `json:"p90_ms"`
	MaxMS    float64 `json:"max_ms"`
	Samples  int     `json:"samples"`
	// OpenMS is the median over files of the first unit (opening the file or project), which
	// the per-unit figures leave out; 0 where the side has no such step (tsc, every run cold).
	OpenMS float64 `json:"open_ms"`
}

// Side is one side of the comparison: what it is, and its per-unit latency.
type Side struct {
	Latency
	// What says exactly what was timed.
	What string `json:"what"`
	// Ratio is this side's median over Hydra's median (baseline/hydra; 1 for Hydra itself).
	Ratio float64 `json:"ratio"`
}

// Verdict is one side's verdict on a whole file: accepted, or its first error (the error with
// the lowest line in the file).
type Verdict struct {
	OK   bool `json:"ok"`
	Line int  `json:"line,omitempty"`
	Code int  `json:"code,omitempty"`
}

func (v Verdict) String() string {
	if v.OK {
		return "ok"
	}
	return fmt.Sprintf("error at line %d (TS%d)", v.Line, v.Code)
}

// File is the measurement of one file.
type File struct {
	File  string `json:"file"`
	Lines int    `json:"lines"`
	Units int    `json:"units"`
	// HydraMedianMS is Hydra's per-unit median on this file.
	HydraMedianMS float64 `json:"hydra_median_ms"`
	// Verdicts are each side's verdict on the whole file ("hydra", "tsc", "lsp", "api_fresh").
	Verdicts map[string]string `json:"verdicts"`
	// Agree says every side gave Hydra's verdict (accepted, or an error on the same first line).
	Agree bool `json:"agree"`
}

// Side names, in the order the result lists them.
const (
	SideHydra = "hydra"
	SideTsc   = "tsc"
	SideLSP   = "lsp"
	SideAPI   = "api_fresh"
)

// Sides lists the side names, Hydra first.
var Sides = []string{SideHydra, SideTsc, SideLSP, SideAPI}

// Result is the benchmark's one JSON object. Times are in milliseconds.
type Result struct {
	Lang     string `json:"lang"`
	Compiler string `json:"compiler"`
	Version  string `json:"typescript_version"`
	// Sides holds Hydra's figures and each baseline's, by the names of Sides.
	Sides map[string]*Side `json:"sides"`
	// SpeedupVsTsc, SpeedupVsLSP and SpeedupVsAPI repeat the baselines' ratios (their median
	// over Hydra's), as the Clang benchmark's speedup_vs_* do.
	SpeedupVsTsc float64 `json:"speedup_vs_tsc"`
	SpeedupVsLSP float64 `json:"speedup_vs_lsp"`
	SpeedupVsAPI float64 `json:"speedup_vs_api_fresh"`
	Files        []File  `json:"files"`
	// VerdictsAgree says that on every file every side gave Hydra's verdict.
	VerdictsAgree bool       `json:"verdicts_agree"`
	Units         int        `json:"units"`
	SamplesPer    int        `json:"baseline_samples_per_file"`
	CPUs          int        `json:"cpus"`
	LoadStart     [3]float64 `json:"load_average_start"`
	LoadEnd       [3]float64 `json:"load_average_end"`
	Note          string     `json:"note"`
}

// What each side times, as the result says it.
const (
	whatHydra = "Hydra's TypeScript checker (checkers/typescript: one `tsc --api` process, each unit a new snapshot in which only the file changed): Submit of a unit to its progress event"
	whatTsc   = "`tsc -p tsconfig.json` run on the prefix written to disk, under a generated tsconfig.json with Hydra's default options (typescript.DefaultConfig): process start to exit"
	whatLSP   = "`tsc --lsp --stdio` (TypeScript 7's language server, the editor's): an incremental didChange appending the units since the last sample, then a pull textDocument/diagnostic, to its response"
	whatAPI   = "`tsc --api` without Hydra's session reuse: the prefix written to disk, then a new snapshot with fileChanges {invalidateAll: true} (the server discards all its caches: nothing is reused from the previous snapshot), then the file's syntactic and semantic diagnostics"
	note      = "per unit: every unit after a file's first (the first opens the file: open_ms); the baselines check baseline_samples_per_file units per file, spread evenly, the last one the whole file; ratio = a baseline's median / Hydra's median; verdicts are on the whole file, each side's first error line"
)

// Run measures cfg.Files.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Log == nil {
		cfg.Log = func(string, ...any) {}
	}
	if len(cfg.Files) == 0 {
		return nil, errors.New("typescript benchmark: no files")
	}
	res := &Result{Lang: "typescript", Compiler: cfg.Compiler, Version: typescript.Version, CPUs: runtime.NumCPU(),
		SamplesPer: cfg.Samples, Note: note, VerdictsAgree: true}
	res.LoadStart, _ = loadAverage()
	// Two copies of the corpus: one where Hydra checks (no tsconfig.json on disk: Hydra applies
	// its defaults), one where the baselines check (a tsconfig.json with those defaults beside
	// the measured file, and the prefix on disk).
	hydraTree, err := CopyCorpus(cfg.Corpus)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(hydraTree)
	baseTree, err := CopyCorpus(cfg.Corpus)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(baseTree)
	lat := map[string][]float64{}
	open := map[string][]float64{}
	for _, rel := range cfg.Files {
		b, err := os.ReadFile(filepath.Join(cfg.Corpus, rel))
		if err != nil {
			return nil, fmt.Errorf("typescript benchmark: %w", err)
		}
		text := string(b)
		units := lang.TypeScript.Syntax(nil, rel).Split(text)
		if len(units) < 2 {
			return nil, fmt.Errorf("typescript benchmark: %s: %d units, want at least 2", rel, len(units))
		}
		cfg.Log("file %s (%d lines, %d units)", rel, strings.Count(text, "\n"), len(units))
		f := File{File: rel, Lines: strings.Count(text, "\n"), Units: len(units), Verdicts: map[string]string{}}
		verdicts := map[string]Verdict{}
		h, o, v, err := measureHydra(ctx, cfg.Checker, filepath.Join(hydraTree, rel), units)
		if err != nil {
			return nil, fmt.Errorf("hydra %s: %w", rel, err)
		}
		lat[SideHydra] = append(lat[SideHydra], h...)
		open[SideHydra] = append(open[SideHydra], o)
		f.HydraMedianMS, verdicts[SideHydra] = stats.Median(h), v
		res.Units += len(h)
		at := samplePoints(len(units), cfg.Samples)
		file := filepath.Join(baseTree, rel)
		cleanup, err := writeConfig(file)
		if err != nil {
			return nil, err
		}
		for _, side := range []struct {
			name string
			run  func() ([]float64, float64, Verdict, error)
		}{
			{SideTsc, func() ([]float64, float64, Verdict, error) {
				t, v, err := measureTsc(ctx, cfg.Compiler, file, text, units, at)
				return t, 0, v, err
			}},
			{SideLSP, func() ([]float64, float64, Verdict, error) { return measureLSP(ctx, file, text, units, at) }},
			{SideAPI, func() ([]float64, float64, Verdict, error) {
				return measureAPI(ctx, cfg.Compiler, file, text, units, at)
			}},
		} {
			t, o, v, err := side.run()
			if err != nil {
				cleanup()
				return nil, fmt.Errorf("%s %s: %w", side.name, rel, err)
			}
			lat[side.name] = append(lat[side.name], t...)
			if o > 0 {
				open[side.name] = append(open[side.name], o)
			}
			verdicts[side.name] = v
		}
		cleanup()
		f.Agree = true
		for _, s := range Sides {
			f.Verdicts[s] = verdicts[s].String()
			if verdicts[s].OK != verdicts[SideHydra].OK || verdicts[s].Line != verdicts[SideHydra].Line {
				f.Agree = false
			}
		}
		res.VerdictsAgree = res.VerdictsAgree && f.Agree
		cfg.Log("  hydra median %.3f ms; verdicts %v", f.HydraMedianMS, f.Verdicts)
		res.Files = append(res.Files, f)
	}
	res.Sides = map[string]*Side{}
	what := map[string]string{SideHydra: whatHydra, SideTsc: whatTsc, SideLSP: whatLSP, SideAPI: whatAPI}
	for _, s := range Sides {
		xs := lat[s]
		res.Sides[s] = &Side{What: what[s], Latency: Latency{MedianMS: stats.Median(xs), P90MS: stats.Quantile(xs, 0.9),
			MaxMS: stats.Quantile(xs, 1), Samples: len(xs), OpenMS: stats.Median(open[s])}}
	}
	if hm := res.Sides[SideHydra].MedianMS; hm > 0 {
		for _, s := range Sides {
			res.Sides[s].Ratio = res.Sides[s].MedianMS / hm
		}
	}
	res.SpeedupVsTsc, res.SpeedupVsLSP, res.SpeedupVsAPI = res.Sides[SideTsc].Ratio, res.Sides[SideLSP].Ratio, res.Sides[SideAPI].Ratio
	res.LoadEnd, _ = loadAverage()
	return res, nil
}

// measureHydra streams units into a new session of ck on file (in Hydra's tree: the file need
// not hold the text, the session's text is the file's content) one at a time, timing each from
// Submit to its progress event, then ends the input and reads the verdict. The session goes on
// after an error (KeepGoing), so that every unit is timed.
func measureHydra(ctx context.Context, ck *typescript.Checker, file string, units []chunk.Chunk) (lat []float64, open float64, v Verdict, err error) {
	sess, err := ck.Start(ctx, checkers.SessionOptions{Filename: file})
	if err != nil {
		return nil, 0, v, err
	}
	defer sess.Close()
	var first *checkers.Event
	note := func(ev checkers.Event) {
		if ev.Kind == checkers.KindError && (first == nil || ev.Off < first.Off) {
			e := ev
			first = &e
		}
	}
	for i, u := range units {
		start := time.Now()
		if err := sess.Submit(u.Text, checkers.SubmitOptions{KeepGoing: true}); err != nil {
			return nil, 0, v, err
		}
		if _, err := awaitEvent(ctx, sess, func(ev checkers.Event) bool {
			return ev.Kind == checkers.KindProgress && ev.Off >= u.End()
		}, note); err != nil {
			return nil, 0, v, fmt.Errorf("unit at %d: %w", u.Off, err)
		}
		d := ms(time.Since(start))
		if i == 0 {
			open = d
		} else {
			lat = append(lat, d)
		}
	}
	if err := sess.EOS(); err != nil {
		return nil, 0, v, err
	}
	done, err := awaitEvent(ctx, sess, func(ev checkers.Event) bool { return ev.Kind == checkers.KindDone }, note)
	if err != nil {
		return nil, 0, v, fmt.Errorf("end of input: %w", err)
	}
	v.OK = done.OK
	if first != nil {
		v.OK = false
		v.Line = first.Line
		if c, ok := first.Meta["code"].(int); ok {
			v.Code = c
		}
	}
	return lat, open, v, nil
}

// awaitEvent reads the session's events, each handed to seen, until one satisfies pred. It
// fails when the session ends or crashes first, or stays silent for a minute.
func awaitEvent(ctx context.Context, sess checkers.Session, pred func(checkers.Event) bool, seen func(checkers.Event)) (checkers.Event, error) {
	for {
		silent := time.NewTimer(time.Minute)
		var ev checkers.Event
		var open bool
		select {
		case <-ctx.Done():
			silent.Stop()
			return ev, ctx.Err()
		case <-silent.C:
			return ev, errors.New("no event within a minute")
		case ev, open = <-sess.Events():
			silent.Stop()
		}
		switch {
		case !open:
			return ev, errors.New("session ended")
		case ev.Kind == checkers.KindCrash:
			return ev, fmt.Errorf("checker crashed: %s", ev.Diag)
		}
		if seen(ev); pred(ev) {
			return ev, nil
		}
	}
}

// samplePoints returns the indexes of the units a baseline checks: n evenly spread over [1,
// total), the last one total-1 (the whole file); every unit after the first when n is 0 or
// covers them all.
func samplePoints(total, n int) []int {
	var out []int
	if n <= 0 || n >= total-1 {
		for i := 1; i < total; i++ {
			out = append(out, i)
		}
		return out
	}
	for k := 1; k <= n; k++ {
		i := (total - 1) * k / n
		if i >= 1 && (len(out) == 0 || out[len(out)-1] != i) {
			out = append(out, i)
		}
	}
	return out
}

// writeConfig writes the tsconfig.json the baselines check file under, beside it: the one
// Hydra's checker applies to a file without one (typescript.DefaultConfig). The returned
// function removes it.
func writeConfig(file string) (func(), error) {
	cfg := filepath.Join(filepath.Dir(file), "tsconfig.json")
	if err := os.WriteFile(cfg, []byte(typescript.DefaultConfig(filepath.Base(file))), 0o644); err != nil {
		return nil, fmt.Errorf("typescript benchmark: %w", err)
	}
	return func() { os.Remove(cfg) }, nil
}

// copyCorpus copies the .ts files under dir into a new temporary directory.
func CopyCorpus(dir string) (string, error) {
	tmp, err := os.MkdirTemp("", "hydra-tsbench-")
	if err != nil {
		return "", fmt.Errorf("typescript benchmark: %w", err)
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".ts") {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out := filepath.Join(tmp, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("typescript benchmark: copy %s: %w", dir, err)
	}
	return tmp, nil
}

// PickFiles lists the .ts files under dir (relative to it, sorted) whose path contains only and
// whose line count lies in [minLines, maxLines], leaving out declaration files and rxjs's UMD
// bundle entry (which the agreement test leaves out too), and takes n of them spread evenly
// (all of them when n is 0 or more than there are).
func PickFiles(dir, only string, minLines, maxLines, n int) ([]string, error) {
	var all []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".ts") || strings.HasSuffix(p, ".d.ts") {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if strings.Contains(rel, "umd") || !strings.Contains(rel, only) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if l := strings.Count(string(b), "\n"); l >= minLines && l <= maxLines {
			all = append(all, rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("typescript corpus %s: %w", dir, err)
	}
	sort.Strings(all)
	if n <= 0 || n >= len(all) {
		return all, nil
	}
	out := make([]string, n)
	for k := range out {
		out[k] = all[k*len(all)/n]
	}
	return out, nil
}

// CorpusDir is where scripts/install-deps.sh test unpacks the TypeScript corpus (rxjs's
// sources), relative to the repository root.
const CorpusDir = "third_party/ts-corpus/package/src"

// FindCorpus returns the corpus directory under the repository that holds the working directory.
func FindCorpus() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			dir := filepath.Join(d, CorpusDir)
			if _, err := os.Stat(filepath.Join(dir, "index.ts")); err != nil {
				return "", fmt.Errorf("TypeScript corpus missing (%v): scripts/install-deps.sh test unpacks it", err)
			}
			return dir, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s to find %s under; pass the corpus directory", wd, CorpusDir)
		}
	}
}

// loadAverage reads /proc/loadavg's 1, 5 and 15 minute figures.
func loadAverage() ([3]float64, error) {
	var la [3]float64
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return la, err
	}
	for i, f := range strings.Fields(string(b)) {
		if i == len(la) {
			break
		}
		if la[i], err = strconv.ParseFloat(f, 64); err != nil {
			return la, err
		}
	}
	return la, nil
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
