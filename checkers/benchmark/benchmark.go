// Package benchmark measures the incremental checker against the alternatives an editor or an
// agent would otherwise use (issue 2, "Benchmark"): per-line update latency of a checker
// session, of re-running `clang -fsyntax-only` on the growing prefix, and of clangd fed
// didChange for the same growth; plus the cost of checkpoints (fork, resume, private memory) and
// the time to a first checked line after a <bits/stdc++.h> preamble, cold and warm (resumed from
// a shared checkpoint of that preamble). Call Run; `hydra bench checker` prints its Result.
//
// It is a benchmark, not a test: nothing here fails on time.
package benchmark

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/agreement"
	"github.com/hydra-lsp/hydra/checkers/chunk"
	"github.com/hydra-lsp/hydra/checkers/clang"
	"github.com/hydra-lsp/hydra/internal/stats"
)

// Config says what to measure.
type Config struct {
	Checker checkers.Checker
	Clang   string // clang-19 driver for re-invocation
	Clangd  string // clangd-19; empty skips clangd (its fields stay 0)
	// Programs to stream; each is measured line by line.
	Programs []agreement.Program
	// Sets, when not empty, replaces Programs: named program sets (e.g. "default" and "heavy"),
	// measured one after the other; the top-level figures cover them all, by_set each one.
	Sets []Set
	// Shim is the hydra-clang-shim binary for the raw-protocol baseline that splits a line's
	// latency into driver, transport and shim (breakdown_ms); empty skips the split.
	Shim string
	// Spin is how long the checker's readers spin before they block (clang.Options.Spin as the
	// checker uses it); the raw client and its shim spin the same way, so that the split
	// compares like with like. Zero: they never spin.
	Spin time.Duration
	// SocketOnly says the checker sends chunks and events on the socket alone
	// (clang.Options.SocketOnly); the raw client then does too. False: both use the
	// shared-memory ring.
	SocketOnly bool
	// ReinvokeSamples is the number of prefix lengths per program re-checked by whole-file
	// clang (default 4); ClangdSamples the number of didChange growths per program (default 12).
	ReinvokeSamples int
	ClangdSamples   int
	// CheckpointEvery takes a checkpoint every this many chunks after the preamble (default 25),
	// to measure fork, resume and the private memory of dormant checkpoints.
	CheckpointEvery int
	// Pace, when positive, is a pause before each chunk after a program's first, as a model
	// would leave between lines: the processes go to sleep in between, as they do in use. The
	// default (0) submits each chunk as soon as the previous one has its event.
	Pace time.Duration
	// PreambleRuns is the number of cold and of warm <bits/stdc++.h> starts (default 2 and 5×).
	PreambleRuns int
	// Slowest is how many of the slowest per-line samples the result lists, at the top level and
	// for each set (slowest_lines); zero lists none.
	Slowest int
	// Log, when set, receives a line per step.
	Log func(format string, args ...any)
}

// Set is a named set of programs.
type Set struct {
	Name     string
	Programs []agreement.Program
}

// Breakdown splits a line's latency (medians over chunks, ms): the shim's own work (Clang and
// its callbacks, the shim_us of progress events), the transport (the raw-protocol round trip
// minus the shim's work: socket, kernel, the raw client's JSON) and the Go driver (the full
// checkers/clang round trip minus its shim_us, less the transport: chunking, JSON, channels,
// goroutines). Each is the median of per-chunk differences, so the three need not add up to the
// per-line median.
type Breakdown struct {
	Driver  float64 `json:"driver"`
	IPC     float64 `json:"ipc"`
	Shim    float64 `json:"shim"`
	Samples int     `json:"samples"`
	// ShimFaultsMean is the mean number of page faults the shim took on a chunk (the same span
	// as Shim; progress events' shim_faults): after a checkpoint's fork, each page the session
	// writes first costs a copy-on-write fault. ShimFaultsMedian is their median.
	ShimFaultsMean   float64 `json:"shim_faults_mean"`
	ShimFaultsMedian float64 `json:"shim_faults_median"`
	// RoundTripRaw is the raw client's round trip (the baseline of IPC, shim included);
	// RoundTripOneProcessor the same with the client's thread and the shim bound to one
	// processor, so that neither wakes another processor;
	// IPCOneProcessor that round trip minus its shim_us. Together they say what the transport
	// costs when no idle processor has to be woken (the floor for a line on this machine). Both
	// are 0 where processors cannot be bound (the run's log says why).
	RoundTripRaw          float64 `json:"round_trip_raw"`
	RoundTripOneProcessor float64 `json:"round_trip_one_processor"`
	IPCOneProcessor       float64 `json:"ipc_one_processor"`
}

// afterCheckpointChunks is how many chunks after a checkpoint's fork AfterCheckpoint counts as
// "after" it.
const afterCheckpointChunks = 5

// AfterCheckpoint splits the per-line samples by where they lie since the latest checkpoint:
// the first afterCheckpointChunks chunks after it (the preamble's included) and the chunks
// after those. After a fork each page of the session is shared with the checkpoint, and the
// session's first write to one copies it (a page fault); most of those writes come in the
// next few chunks, so this says how much of a line's time the checkpoints cost.
type AfterCheckpoint struct {
	Chunks            int     `json:"chunks"`
	AfterSamples      int     `json:"after_samples"`
	AfterMedianMS     float64 `json:"after_median_ms"`
	AfterShimMedianMS float64 `json:"after_shim_median_ms"`
	AfterFaultsMean   float64 `json:"after_faults_mean"`
	LaterSamples      int     `json:"later_samples"`
	LaterMedianMS     float64 `json:"later_median_ms"`
	LaterShimMedianMS float64 `json:"later_shim_median_ms"`
	LaterFaultsMean   float64 `json:"later_faults_mean"`
}

// SlowLine is one per-line sample among the slowest: which line it was, and where its time went.
type SlowLine struct {
	Program string `json:"program"`
	// Line is the line of the program the chunk starts on (its first non-blank one), from 1.
	Line int `json:"line"`
	// Text is the chunk, blanks at its ends trimmed, cut at 120 bytes.
	Text string `json:"text"`
	// MS is the chunk's latency: from Submit to its progress event.
	MS float64 `json:"ms"`
	// ShimMS is the shim's own time on the chunk (shim_us), ShimFaults its page faults
	// (shim_faults): a line whose ms is mostly shim_ms spent its time in Clang.
	ShimMS     float64 `json:"shim_ms"`
	ShimFaults float64 `json:"shim_faults"`
	// SinceCheckpoint counts the chunks since the latest checkpoint, this one included (1: the
	// first chunk after a fork).
	SinceCheckpoint int `json:"chunks_since_checkpoint"`
}

// Result is the benchmark's one JSON object. Times are in milliseconds.
type Result struct {
	IncrementalMedianMS float64 `json:"incremental_median_ms"`
	IncrementalP99MS    float64 `json:"incremental_p99_ms"`
	ReinvokeMedianMS    float64 `json:"reinvoke_median_ms"`
	ClangdMedianMS      float64 `json:"clangd_median_ms"`
	SpeedupVsReinvoke   float64 `json:"speedup_vs_reinvoke"`
	SpeedupVsClangd     float64 `json:"speedup_vs_clangd"`
	ForkMS              float64 `json:"fork_ms"`
	ResumeMS            float64 `json:"resume_ms"`
	CheckpointPrivateKB float64 `json:"checkpoint_private_kb"`
	ColdPreambleMS      float64 `json:"cold_preamble_ms"`
	WarmPreambleMS      float64 `json:"warm_preamble_ms"`

	// Extras: how the figures were obtained, and their spread.
	Programs                int      `json:"programs"`
	ProgramIDs              []string `json:"program_ids"`
	IncrementalSamples      int      `json:"incremental_samples"`
	IncrementalMaxMS        float64  `json:"incremental_max_ms"`
	IncrementalFirstThirdMS float64  `json:"incremental_median_first_third_ms"`
	IncrementalLastThirdMS  float64  `json:"incremental_median_last_third_ms"`
	EndOfInputMedianMS      float64  `json:"end_of_input_median_ms"`
	ReinvokeSamples         int      `json:"reinvoke_samples"`
	ClangdSamples           int      `json:"clangd_samples"`
	ClangdMode              string   `json:"clangd_mode"`
	ForkSamples             int      `json:"fork_samples"`
	ForkMaxMS               float64  `json:"fork_max_ms"`
	// CheckpointPrepMS: the shim's work before each checkpoint's fork (chkpt meta prep_us:
	// malloc_trim, dropping the dead stack, a new malloc generation), median; fork_ms leaves it out.
	CheckpointPrepMS        float64 `json:"checkpoint_prep_ms"`
	ResumeSamples           int     `json:"resume_samples"`
	ResumeMaxMS             float64 `json:"resume_max_ms"`
	CheckpointSamples       int     `json:"checkpoint_samples"`
	CheckpointPrivateMaxKB  float64 `json:"checkpoint_private_max_kb"`
	CheckpointPrivateNote   string  `json:"checkpoint_private_note"`
	CheckpointPrivateForkKB float64 `json:"checkpoint_private_after_fork_kb"`
	// ByLanguage repeats the latency comparison for the C and the C++ programs apart
	// (re-invoking clang costs far more with C++ headers).
	ByLanguage map[string]LangResult `json:"by_language"`
	CPUs       int                   `json:"cpus"`
	// PaceMS is Config.Pace: the pause before each chunk (0: none, chunks back to back).
	PaceMS float64 `json:"pace_ms"`
	Note   string  `json:"note"`

	// Machine: how idle processors wait and the load before and after (top level only).
	Machine *Machine `json:"machine,omitempty"`
	// BreakdownMS splits the per-line latency (Config.Shim set).
	BreakdownMS *Breakdown `json:"breakdown_ms,omitempty"`
	// AfterCheckpoint splits the per-line latency by the distance from the latest checkpoint.
	AfterCheckpoint *AfterCheckpoint `json:"after_checkpoint,omitempty"`
	// BySet repeats the figures for each program set ("default", "heavy"); the preamble figures
	// are measured once and repeated.
	BySet map[string]*Result `json:"by_set,omitempty"`
	// SlopeMSPer100Lines and Growth: the per-line cost against prefix length (set by the
	// command from MeasureGrowth).
	SlopeMSPer100Lines *Slope   `json:"slope_ms_per_100_lines,omitempty"`
	Growth             *Growth  `json:"growth,omitempty"`
	Levers             []Lever  `json:"levers,omitempty"`
	Sets               []string `json:"sets,omitempty"`
	// SlowestLines are the Config.Slowest slowest per-line samples, slowest first.
	SlowestLines []SlowLine `json:"slowest_lines,omitempty"`
}

// LangResult is the latency comparison restricted to the programs of one language.
type LangResult struct {
	Programs            int     `json:"programs"`
	IncrementalMedianMS float64 `json:"incremental_median_ms"`
	IncrementalP99MS    float64 `json:"incremental_p99_ms"`
	ReinvokeMedianMS    float64 `json:"reinvoke_median_ms"`
	ClangdMedianMS      float64 `json:"clangd_median_ms"`
	SpeedupVsReinvoke   float64 `json:"speedup_vs_reinvoke"`
	SpeedupVsClangd     float64 `json:"speedup_vs_clangd"`
}

// Run measures everything on cfg.Programs.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.ReinvokeSamples <= 0 {
		cfg.ReinvokeSamples = 4
	}
	if cfg.ClangdSamples <= 0 {
		cfg.ClangdSamples = 12
	}
	if cfg.CheckpointEvery <= 0 {
		cfg.CheckpointEvery = 25
	}
	if cfg.PreambleRuns <= 0 {
		cfg.PreambleRuns = 2
	}
	if cfg.Log == nil {
		cfg.Log = func(string, ...any) {}
	}
	if len(cfg.Programs) == 0 {
		return nil, errors.New("benchmark: no programs")
	}
	sets := cfg.Sets
	if len(sets) == 0 {
		sets = []Set{{Name: "default", Programs: cfg.Programs}}
	}
	machine := machineNow()
	var all samples
	allByLang := map[string]*samples{}
	var perSet []*samples
	perSetByLang := []map[string]*samples{}
	for _, set := range sets {
		var ss samples
		ssByLang := map[string]*samples{}
		for _, p := range set.Programs {
			cfg.Log("[%s] program %s (%d bytes)", set.Name, p.ID, len(p.Text))
			var ps samples
			if err := ps.measureIncremental(ctx, cfg, p); err != nil {
				return nil, fmt.Errorf("incremental %s: %w", p.ID, err)
			}
			if cfg.Shim != "" {
				raw, err := measureRaw(ctx, cfg.Shim, p, cfg.Pace, cfg.Spin, cfg.SocketOnly)
				if err != nil {
					return nil, fmt.Errorf("raw protocol %s: %w", p.ID, err)
				}
				ps.split(raw)
				// An extra figure: where processors cannot be bound (a sandbox that forbids
				// sched_setaffinity), say so and leave its fields at 0 rather than fail the run.
				if one, err := measureRawOneProcessor(ctx, cfg.Shim, p, cfg.Pace, cfg.SocketOnly); err == nil {
					ps.splitOneProcessor(one)
				} else if ctx.Err() != nil {
					return nil, fmt.Errorf("raw protocol on one processor %s: %w", p.ID, err)
				} else {
					cfg.Log("raw protocol on one processor %s: %v (round_trip_one_processor left out)", p.ID, err)
				}
			}
			if err := ps.measureReinvoke(ctx, cfg, p); err != nil {
				return nil, fmt.Errorf("re-invoke %s: %w", p.ID, err)
			}
			if cfg.Clangd != "" {
				if err := ps.measureClangd(ctx, cfg, p); err != nil {
					return nil, fmt.Errorf("clangd %s: %w", p.ID, err)
				}
			}
			for _, into := range []struct {
				s  *samples
				bl map[string]*samples
			}{{&ss, ssByLang}, {&all, allByLang}} {
				into.s.add(&ps)
				into.s.programs++
				if into.bl[p.Lang] == nil {
					into.bl[p.Lang] = &samples{}
				}
				into.bl[p.Lang].add(&ps)
				into.bl[p.Lang].programs++
			}
		}
		perSet = append(perSet, &ss)
		perSetByLang = append(perSetByLang, ssByLang)
	}
	cfg.Log("preamble <bits/stdc++.h>, cold and warm")
	if err := all.measurePreamble(ctx, cfg); err != nil {
		return nil, fmt.Errorf("preamble: %w", err)
	}
	res := summarize(&all, allByLang, cfg.Slowest)
	res.PaceMS = ms(cfg.Pace)
	machine.LoadAverageEnd, _ = loadAverage()
	res.Machine = machine
	res.BySet = map[string]*Result{}
	for k, set := range sets {
		res.Sets = append(res.Sets, set.Name)
		perSet[k].cold, perSet[k].warm = all.cold, all.warm
		res.BySet[set.Name] = summarize(perSet[k], perSetByLang[k], cfg.Slowest)
		res.BySet[set.Name].PaceMS = res.PaceMS
	}
	return res, nil
}

// summarize turns samples into a Result that lists the slowest per-line samples.
func summarize(s *samples, byLang map[string]*samples, slowest int) *Result {
	res := &Result{Programs: s.programs, ProgramIDs: s.ids, CPUs: runtime.NumCPU(), ClangdMode: "clangd-19 --sync (no update debounce), full-text didChange, time to publishDiagnostics of that version",
		CheckpointPrivateNote: "Private_Clean+Private_Dirty of dormant checkpoint processes (smaps_rollup), mean over checkpoints, measured when their session has streamed its whole program (before end of input); checkpoint_private_after_fork_kb: right after each fork",
		Note:                  "per-line = time from Submit of a chunk (one or more lines, after the preamble) to its progress event, chunks submitted one at a time; every chunk after the preamble is a sample, those that take a checkpoint too (the shim forks after their progress event; fork_ms)"}
	res.IncrementalMedianMS = stats.Median(s.perLine)
	res.IncrementalP99MS = stats.Quantile(s.perLine, 0.99)
	res.IncrementalMaxMS = stats.Quantile(s.perLine, 1)
	res.IncrementalSamples = len(s.perLine)
	res.IncrementalFirstThirdMS = stats.Median(s.firstThird)
	res.IncrementalLastThirdMS = stats.Median(s.lastThird)
	res.EndOfInputMedianMS = stats.Median(s.eos)
	res.ReinvokeMedianMS = stats.Median(s.reinvoke)
	res.ReinvokeSamples = len(s.reinvoke)
	res.ClangdMedianMS = stats.Median(s.clangd)
	res.ClangdSamples = len(s.clangd)
	if res.IncrementalMedianMS > 0 {
		res.SpeedupVsReinvoke = res.ReinvokeMedianMS / res.IncrementalMedianMS
		res.SpeedupVsClangd = res.ClangdMedianMS / res.IncrementalMedianMS
	}
	res.ForkMS, res.ForkMaxMS, res.ForkSamples = stats.Median(s.fork), stats.Quantile(s.fork, 1), len(s.fork)
	res.CheckpointPrepMS = stats.Median(s.prep)
	res.ResumeMS, res.ResumeMaxMS, res.ResumeSamples = stats.Median(s.resume), stats.Quantile(s.resume, 1), len(s.resume)
	res.CheckpointPrivateKB, res.CheckpointPrivateMaxKB, res.CheckpointSamples = mean(s.privKB), stats.Quantile(s.privKB, 1), len(s.privKB)
	res.CheckpointPrivateForkKB = mean(s.privFork)
	res.ByLanguage = map[string]LangResult{}
	for lang, ls := range byLang {
		lr := LangResult{Programs: ls.programs, IncrementalMedianMS: stats.Median(ls.perLine), IncrementalP99MS: stats.Quantile(ls.perLine, 0.99),
			ReinvokeMedianMS: stats.Median(ls.reinvoke), ClangdMedianMS: stats.Median(ls.clangd)}
		if lr.IncrementalMedianMS > 0 {
			lr.SpeedupVsReinvoke = lr.ReinvokeMedianMS / lr.IncrementalMedianMS
			lr.SpeedupVsClangd = lr.ClangdMedianMS / lr.IncrementalMedianMS
		}
		res.ByLanguage[lang] = lr
	}
	res.ColdPreambleMS = stats.Median(s.cold)
	res.WarmPreambleMS = stats.Median(s.warm)
	if len(s.lines) > 0 {
		after, later := s.nearCheckpoint()
		res.AfterCheckpoint = &AfterCheckpoint{Chunks: afterCheckpointChunks,
			AfterSamples: len(after.lat), AfterMedianMS: stats.Median(after.lat), AfterShimMedianMS: stats.Median(after.shim), AfterFaultsMean: mean(after.faults),
			LaterSamples: len(later.lat), LaterMedianMS: stats.Median(later.lat), LaterShimMedianMS: stats.Median(later.shim), LaterFaultsMean: mean(later.faults)}
	}
	if len(s.bdShim) > 0 {
		res.BreakdownMS = &Breakdown{Driver: stats.Median(s.bdDriver), IPC: stats.Median(s.bdIPC), Shim: stats.Median(s.bdShim), Samples: len(s.bdShim),
			ShimFaultsMean: mean(s.faults()), ShimFaultsMedian: stats.Median(s.faults()),
			RoundTripRaw: stats.Median(s.rawRT), RoundTripOneProcessor: stats.Median(s.oneRT), IPCOneProcessor: stats.Median(s.oneIPC)}
	}
	if slowest > 0 {
		lines := slices.Clone(s.lines)
		slices.SortStableFunc(lines, func(a, b SlowLine) int { return cmp.Compare(b.MS, a.MS) })
		res.SlowestLines = lines[:min(slowest, len(lines))]
	}
	return res
}

// split pairs the chunks of the last measured program with the raw-protocol baseline (chunk
// index → round trip, shim ms) into the breakdown samples.
func (s *samples) split(raw map[int][2]float64) {
	for i, v := range s.chunk {
		r, ok := raw[i]
		if !ok {
			continue
		}
		// The driver is what the Go path spends beyond the shim, less what the raw client
		// spends beyond the shim (the transport). Not v[0]-r[0]: the raw baseline takes no
		// checkpoints, so the copy-on-write faults that follow a checkpoint's fork would land
		// in the driver's share although the shim takes them (and counts them in shim_us).
		s.bdShim = append(s.bdShim, v[1])
		s.bdIPC = append(s.bdIPC, max(0, r[0]-r[1]))
		s.bdDriver = append(s.bdDriver, max(0, (v[0]-v[1])-(r[0]-r[1])))
		s.rawRT = append(s.rawRT, r[0])
	}
}

// splitOneProcessor adds the raw round trips on one processor (chunk index → round trip, shim ms)
// to the breakdown samples.
func (s *samples) splitOneProcessor(one map[int][2]float64) {
	for _, r := range one {
		s.oneRT = append(s.oneRT, r[0])
		s.oneIPC = append(s.oneIPC, max(0, r[0]-r[1]))
	}
}

// samples collects raw measurements (ms, KB).
type samples struct {
	perLine, firstThird, lastThird, eos []float64
	reinvoke, clangd                    []float64
	fork, resume, privKB, privFork      []float64
	prep                                []float64 // the shim's work before each fork (prep_us)
	cold, warm                          []float64
	bdDriver, bdIPC, bdShim             []float64
	rawRT, oneRT, oneIPC                []float64  // raw round trips, and on one processor
	lines                               []SlowLine // every per-line sample, with its line and its figures
	programs                            int
	ids                                 []string
	// chunk: per chunk index of the program just measured, latency and the shim's own time.
	chunk map[int][2]float64
}

// chunkSamples are per-chunk latency, shim time (ms) and page faults of some of the chunks.
type chunkSamples struct{ lat, shim, faults []float64 }

func (c *chunkSamples) add(l SlowLine) {
	c.lat, c.shim, c.faults = append(c.lat, l.MS), append(c.shim, l.ShimMS), append(c.faults, l.ShimFaults)
}

// nearCheckpoint splits the per-line samples into those of the first afterCheckpointChunks
// chunks after a checkpoint and the rest.
func (s *samples) nearCheckpoint() (after, later chunkSamples) {
	for _, l := range s.lines {
		if l.SinceCheckpoint <= afterCheckpointChunks {
			after.add(l)
		} else {
			later.add(l)
		}
	}
	return after, later
}

// faults are the page faults the shim took on each per-line chunk (shim_faults).
func (s *samples) faults() []float64 {
	out := make([]float64, len(s.lines))
	for k, l := range s.lines {
		out[k] = l.ShimFaults
	}
	return out
}

// add appends o's program measurements to s.
func (s *samples) add(o *samples) {
	s.perLine = append(s.perLine, o.perLine...)
	s.firstThird = append(s.firstThird, o.firstThird...)
	s.lastThird = append(s.lastThird, o.lastThird...)
	s.eos = append(s.eos, o.eos...)
	s.reinvoke = append(s.reinvoke, o.reinvoke...)
	s.clangd = append(s.clangd, o.clangd...)
	s.fork = append(s.fork, o.fork...)
	s.prep = append(s.prep, o.prep...)
	s.resume = append(s.resume, o.resume...)
	s.privKB = append(s.privKB, o.privKB...)
	s.privFork = append(s.privFork, o.privFork...)
	s.bdDriver = append(s.bdDriver, o.bdDriver...)
	s.bdIPC = append(s.bdIPC, o.bdIPC...)
	s.bdShim = append(s.bdShim, o.bdShim...)
	s.rawRT = append(s.rawRT, o.rawRT...)
	s.oneRT = append(s.oneRT, o.oneRT...)
	s.oneIPC = append(s.oneIPC, o.oneIPC...)
	s.lines = append(s.lines, o.lines...)
	s.ids = append(s.ids, o.ids...)
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// codeChunks cuts a program into chunks and returns them with the index of the first chunk
// after the preamble.
func codeChunks(p agreement.Program) ([]chunk.Chunk, int) {
	chs := chunk.Split(p.Text, chunk.OptionsForFlags(p.Flags, p.Base))
	first := 0
	for i, c := range chs {
		if c.PreambleEnd {
			first = i + 1
		}
	}
	return chs, first
}

// await reads events until pred accepts one; chkpt events are handed to onChkpt.
func await(ctx context.Context, sess checkers.Session, pred func(checkers.Event) bool, onChkpt func(checkers.Event)) (checkers.Event, error) {
	timer := time.NewTimer(60 * time.Second)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return checkers.Event{}, ctx.Err()
		case <-timer.C:
			return checkers.Event{}, errors.New("no event within 60 s")
		case ev, ok := <-sess.Events():
			if !ok {
				return checkers.Event{}, errors.New("session ended")
			}
			if ev.Kind == checkers.KindCrash {
				return ev, fmt.Errorf("checker crashed: %s", ev.Diag)
			}
			if ev.Kind == checkers.KindChkpt && onChkpt != nil {
				onChkpt(ev)
			}
			if pred(ev) {
				return ev, nil
			}
		}
	}
}

// incremental streams p one chunk at a time, timing each chunk's progress, takes checkpoints
// on the way, then measures their memory and resumes.
func (s *samples) measureIncremental(ctx context.Context, cfg Config, p agreement.Program) error {
	ch := cfg.Checker
	chs, first := codeChunks(p)
	sess, err := ch.Start(ctx, checkers.SessionOptions{Flags: p.Flags, Filename: p.Base})
	if err != nil {
		return err
	}
	defer sess.Close()
	type held struct {
		cp     checkers.Checkpoint
		pid    int
		forkMS float64 // as the shim measured it (meta fork_us); 0 if it did not say
		prepMS float64 // the shim's work before the fork (meta prep_us); -1 if it did not say
	}
	var cps []held
	defer func() {
		for _, h := range cps {
			h.cp.Release()
		}
	}()
	adopt := func(ev checkers.Event) {
		if cp := ch.Adopt(ev.ID); cp != nil {
			f, _ := ev.Meta["fork_us"].(float64)
			prep := -1.0
			if p, ok := ev.Meta["prep_us"].(float64); ok {
				prep = p / 1000
			}
			cps = append(cps, held{cp, ev.PID, f / 1000, prep})
		}
	}
	var lat []float64
	var sampled []int    // the chunk index of each per-line sample, in order
	sinceCheckpoint := 0 // chunks since the latest checkpoint was asked for
	s.ids = append(s.ids, p.ID)
	s.chunk = map[int][2]float64{}
	for i, c := range chs {
		wantCP := i >= first && i > 0 && (i-first)%cfg.CheckpointEvery == cfg.CheckpointEvery-1
		if i+1 == first {
			wantCP = true // the preamble checkpoint, as the engine takes it
		}
		if i > 0 && cfg.Pace > 0 {
			time.Sleep(cfg.Pace)
		}
		start := time.Now()
		if err := sess.Submit(c.Text, checkers.SubmitOptions{Cat: c.Cat, Checkpoint: wantCP}); err != nil {
			return err
		}
		ev, err := await(ctx, sess, func(ev checkers.Event) bool {
			return (ev.Kind == checkers.KindProgress && ev.Off >= c.End()) || ev.Kind == checkers.KindError || ev.Kind == checkers.KindDone
		}, adopt)
		if err != nil {
			return fmt.Errorf("chunk at %d: %w", c.Off, err)
		}
		if ev.Kind == checkers.KindError {
			return fmt.Errorf("the program does not check: %d:%d: %s", ev.Line, ev.Col, ev.Diag)
		}
		progressAt := time.Now()
		sinceCheckpoint++
		// The session's first chunk is not a line: the shim sets Clang up while it waits (13-19
		// ms here for a C program without includes). With a preamble that chunk is the
		// preamble's; a program without one would count the set-up as its first line. A chunk
		// that asks for a checkpoint is a line like the others: the shim sends its progress
		// event before it forks (checkers/clang/shim/stream.cpp, Stream::chunkEnded), and the
		// next chunk goes after the chkpt event, so no line's latency holds a fork.
		if i >= max(first, 1) {
			d, shim, faults := ms(progressAt.Sub(start)), float64(ev.ShimUS)/1000, float64(ev.ShimFaults)
			lat = append(lat, d)
			s.chunk[i] = [2]float64{d, shim}
			// Which line it was is filled in after the stream, off the path between chunks.
			s.lines = append(s.lines, SlowLine{Program: p.ID, MS: d, ShimMS: shim, ShimFaults: faults, SinceCheckpoint: sinceCheckpoint})
			sampled = append(sampled, i)
		}
		if wantCP {
			n := len(cps)
			if _, err := await(ctx, sess, func(ev checkers.Event) bool { return ev.Kind == checkers.KindChkpt }, adopt); err != nil {
				return fmt.Errorf("checkpoint at %d: %w", c.End(), err)
			}
			if len(cps) > n {
				h := cps[len(cps)-1]
				if kb, err := clang.PrivateKB(h.pid); err == nil {
					s.privFork = append(s.privFork, kb)
				}
				f := h.forkMS
				if f == 0 {
					f = ms(time.Since(progressAt)) // the shim did not say: progress to chkpt
				}
				s.fork = append(s.fork, f)
				if h.prepMS >= 0 {
					s.prep = append(s.prep, h.prepMS)
				}
			}
			sinceCheckpoint = 0
		}
	}
	placeLines(p, chs, s.lines[len(s.lines)-len(sampled):], sampled)
	// Dormant checkpoints now hold what the session has changed since their fork.
	for _, h := range cps {
		if kb, err := clang.PrivateKB(h.pid); err == nil {
			s.privKB = append(s.privKB, kb)
		}
	}
	start := time.Now()
	if err := sess.EOS(); err != nil {
		return err
	}
	ev, err := await(ctx, sess, func(ev checkers.Event) bool { return ev.Kind == checkers.KindDone || ev.Kind == checkers.KindError }, adopt)
	if err != nil {
		return fmt.Errorf("end of input: %w", err)
	}
	if ev.Kind == checkers.KindError {
		return fmt.Errorf("the program does not check: %d:%d: %s", ev.Line, ev.Col, ev.Diag)
	}
	s.eos = append(s.eos, ms(time.Since(start)))
	s.perLine = append(s.perLine, lat...)
	third := len(lat) / 3
	s.firstThird = append(s.firstThird, lat[:third]...)
	s.lastThird = append(s.lastThird, lat[len(lat)-third:]...)
	// Resume each checkpoint once: time to the new session's first event.
	for _, h := range cps {
		start := time.Now()
		rs, err := ch.Resume(ctx, h.cp)
		if err != nil {
			return fmt.Errorf("resume: %w", err)
		}
		_, err = await(ctx, rs, func(checkers.Event) bool { return true }, nil)
		d := time.Since(start)
		rs.Close()
		if err != nil {
			return fmt.Errorf("resume: first event: %w", err)
		}
		s.resume = append(s.resume, ms(d))
	}
	cfg.Log("  %d chunks measured, median %.3f ms, %d checkpoints", len(lat), stats.Median(lat), len(cps))
	return nil
}

// placeLines fills in the line and text of per-line samples of program p: lines[k] is the
// sample of chunk chs[at[k]], in stream order.
func placeLines(p agreement.Program, chs []chunk.Chunk, lines []SlowLine, at []int) {
	line, off := 1, 0
	for k, i := range at {
		c := chs[i]
		text := strings.TrimSpace(c.Text)
		start := c.Off + strings.Index(c.Text, text) // the first non-blank byte (c.Off if all blank)
		line += strings.Count(p.Text[off:start], "\n")
		off = start
		if len(text) > 120 {
			text = strings.ToValidUTF8(text[:120], "") + "…"
		}
		lines[k].Line, lines[k].Text = line, text
	}
}

// samplePoints picks n chunk indexes evenly spread over [first, len).
func samplePoints(first, total, n int) []int {
	if total <= first {
		return nil
	}
	var out []int
	for k := 1; k <= n; k++ {
		i := first + (total-first)*k/(n+1)
		if len(out) == 0 || out[len(out)-1] != i {
			out = append(out, i)
		}
	}
	return out
}

// reinvoke times whole-file clang on prefixes of p ending at sampled chunk ends.
func (s *samples) measureReinvoke(ctx context.Context, cfg Config, p agreement.Program) error {
	chs, first := codeChunks(p)
	dir, err := os.MkdirTemp("", "hydra-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, p.Base)
	for _, i := range samplePoints(first, len(chs), cfg.ReinvokeSamples) {
		if err := os.WriteFile(path, []byte(p.Text[:chs[i].End()]), 0o644); err != nil {
			return err
		}
		args := append(append([]string{"-fsyntax-only"}, p.Flags...), path)
		start := time.Now()
		// A prefix may well not compile (an open function): only the time counts.
		_ = exec.CommandContext(ctx, cfg.Clang, args...).Run()
		s.reinvoke = append(s.reinvoke, ms(time.Since(start)))
	}
	return ctx.Err()
}

// clangd opens the preamble in clangd, then grows the document to sampled chunk ends.
func (s *samples) measureClangd(ctx context.Context, cfg Config, p agreement.Program) error {
	chs, first := codeChunks(p)
	c, err := startClangd(ctx, cfg.Clangd, p.Flags, p.Base)
	if err != nil {
		return err
	}
	defer c.Close()
	pre := 0
	if first > 0 {
		pre = chs[first-1].End()
	}
	if _, err := c.open(ctx, p.Text[:pre]); err != nil {
		return err
	}
	version := int32(1)
	for _, i := range samplePoints(first, len(chs), cfg.ClangdSamples) {
		version++
		d, err := c.change(ctx, version, p.Text[:chs[i].End()])
		if err != nil {
			return err
		}
		s.clangd = append(s.clangd, ms(d))
	}
	return nil
}

// PreambleText is the program of the preamble measurement: the <bits/stdc++.h> preamble and
// one line after it.
const (
	PreambleHeader = "#include <bits/stdc++.h>\n"
	PreambleLine   = "int hydra_first_line = 0;\n"
)

// preamble measures the time from a new session to its first checked line after
// <bits/stdc++.h>: cold (a fresh session parses the headers) and warm (Nearest finds the shared
// checkpoint of that preamble, which is resumed).
func (s *samples) measurePreamble(ctx context.Context, cfg Config) error {
	ch := cfg.Checker
	opts := checkers.SessionOptions{Flags: []string{"-x", "c++", "-std=c++17"}, Filename: "bench_preamble.cpp"}
	var keep []checkers.Checkpoint
	defer func() {
		for _, cp := range keep {
			cp.Release()
		}
	}()
	lineDone := func(ev checkers.Event) bool {
		return ev.Kind == checkers.KindProgress && ev.Off >= len(PreambleHeader)+len(PreambleLine) || ev.Kind == checkers.KindError
	}
	for r := 0; r < cfg.PreambleRuns; r++ {
		start := time.Now()
		sess, err := ch.Start(ctx, opts)
		if err != nil {
			return err
		}
		err = sess.Submit(PreambleHeader, checkers.SubmitOptions{Cat: checkers.BoundaryPreamble, Checkpoint: true})
		if err == nil {
			err = sess.Submit(PreambleLine, checkers.SubmitOptions{Cat: checkers.BoundaryDecl})
		}
		if err != nil {
			sess.Close()
			return err
		}
		ev, err := await(ctx, sess, lineDone, func(ev checkers.Event) {
			if cp := ch.Adopt(ev.ID); cp != nil {
				keep = append(keep, cp)
			}
		})
		d := time.Since(start)
		if err == nil && ev.Kind == checkers.KindError {
			err = fmt.Errorf("%s", ev.Diag)
		}
		if err == nil && len(keep) == 0 {
			// The checkpoint event may follow the line's progress; wait for it.
			_, err = await(ctx, sess, func(ev checkers.Event) bool { return ev.Kind == checkers.KindChkpt }, func(ev checkers.Event) {
				if cp := ch.Adopt(ev.ID); cp != nil {
					keep = append(keep, cp)
				}
			})
		}
		sess.Close()
		if err != nil {
			return fmt.Errorf("cold start: %w", err)
		}
		s.cold = append(s.cold, ms(d))
	}
	text := PreambleHeader + PreambleLine
	for r := 0; r < 5*cfg.PreambleRuns; r++ {
		start := time.Now()
		cp := ch.Nearest(opts, text)
		if cp == nil {
			return errors.New("warm start: Nearest found no checkpoint of the preamble")
		}
		sess, err := ch.Resume(ctx, cp)
		cp.Release()
		if err != nil {
			return fmt.Errorf("warm start: %w", err)
		}
		err = sess.Submit(text[cp.Off():], checkers.SubmitOptions{Cat: checkers.BoundaryDecl})
		if err == nil {
			var ev checkers.Event
			ev, err = await(ctx, sess, lineDone, func(ev checkers.Event) {
				if cp := ch.Adopt(ev.ID); cp != nil {
					cp.Release()
				}
			})
			if err == nil && ev.Kind == checkers.KindError {
				err = fmt.Errorf("%s", ev.Diag)
			}
		}
		d := time.Since(start)
		sess.Close()
		if err != nil {
			return fmt.Errorf("warm start: %w", err)
		}
		s.warm = append(s.warm, ms(d))
	}
	return nil
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}
