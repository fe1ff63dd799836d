// Package sim is Hydra's SIMULATED MODEL: a stand-in for a language model, served over the same
// OpenAI-compatible API as a real inference server (/v1/completions streamed with server-sent
// events, /v1/models), so that benchmarks can drive the real engine and the real Clang checker
// without model weights (docs/simulated-model.md). It is never a real model: it names itself
// "hydra-simulated-model" in every response and states its assumptions (Assumptions) for every
// report.
//
// For each task (HumanEval-X C++ and TheAlgorithms programs, see LoadTasks) it knows a correct
// solution and "writes" it, with faults injected by package checkers/mutate and checked with the
// real clang (each fault fails to compile and its root precedes the error clang reports). It
// finds the task and the accepted prefix in the prompt (task prompt + accepted prefix + maybe a
// feedback comment), continues the intended text from there, and on a retry fixes a fault only
// when the retry regenerates the fault's root, with a probability that falls each time the model
// repeats the same mistake (docs/simulated-model.md). Its parameters come from published figures
// or are stated middle values, never from a repair policy's model: no policy reads them. It bills tokens with a
// real BPE tokenizer, streams at a per-token latency, charges prefill for the part of the prompt
// a prefix cache would not hold, and reports usage (cached tokens included) like vLLM does.
// Everything is deterministic given the seed, the task and the sequence of identical prompts.
//
// Use NewServer for an http.Handler (in process, e.g. behind httptest.NewServer), or
// `hydra sim-server`.
package sim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hydra-lsp/hydra/checkers/mutate"
	"github.com/hydra-lsp/hydra/engine/model/openaiserver"
	"github.com/hydra-lsp/hydra/internal/stats"
	"github.com/hydra-lsp/hydra/internal/textops"
	"github.com/tiktoken-go/tokenizer"
)

// ModelName is the name the simulated model answers to and reports in every response.
const ModelName = "hydra-simulated-model"

// Profile is a latency profile: how fast a model of some size streams on some hardware.
type Profile struct {
	Name string `json:"name"`
	// TokenLatency is the time per output token (decode).
	TokenLatency time.Duration `json:"token_latency_ns"`
	// PrefillRate is how many prompt tokens per second the server prefills when they are not in
	// its prefix cache.
	PrefillRate float64 `json:"prefill_tokens_per_s"`
	// Overhead is the fixed time from request to first token (scheduling, first decode step).
	Overhead time.Duration `json:"overhead_ns"`
}

// Profiles are the latency profiles the simulator knows.
var Profiles = map[string]Profile{
	// 7 ms per token: the paper's gpt-oss-120B figure.
	"gpt-oss-120b": {Name: "gpt-oss-120b", TokenLatency: 7 * time.Millisecond, PrefillRate: 10000, Overhead: 20 * time.Millisecond},
	// A dense 32B coder model (Qwen2.5-Coder-32B-like) on one GPU: ~33 tokens/s single stream.
	"qwen32b": {Name: "qwen32b", TokenLatency: 30 * time.Millisecond, PrefillRate: 4000, Overhead: 30 * time.Millisecond},
}

// Options configure the simulator. Start from DefaultOptions: zero values are taken literally
// (a zero ErrorRate means no faults, a zero TimeScale no waiting).
type Options struct {
	// Tasks the simulator knows; nil loads every task from DataDir.
	Tasks []Task
	// Seed makes every draw deterministic.
	Seed int64
	// Profile sets the latencies (see Profiles).
	Profile Profile
	// TimeScale multiplies every simulated wait (0.1 runs ten times faster; 0 does not wait).
	TimeScale float64

	// ErrorRate is the share of tasks whose first attempt has a static error (paper: ~17% for a
	// 32B model).
	ErrorRate float64
	// LocalFrac and FarFrac split the faults by root-cause distance, measured in source lines
	// (the simulator's own measure, see classify): LocalFrac with the root on the error's line,
	// FarFrac with the root in the first half of the generated lines before the error's line,
	// the rest between. Default 0.40 and 0.30: the paper's Fig. 2 measures 20–40% of real
	// errors repairable locally and 30–40% needing a rollback past half-way; the default takes
	// the corner of those ranges least kind to rollback, not the middle (0.30, 0.35), which is
	// TokPol's prior (policy.DefaultPrior), so the default world is not the one TokPol assumes.
	LocalFrac, FarFrac float64
	// FixProb is the chance that the first retry which regenerates a fault's root does not
	// repeat it. Default 0.5, a stated middle value (no published figure).
	FixProb float64
	// LocalFix is the chance that a retry which keeps a fault's root (it lies in the accepted
	// prefix) but regenerates the error's line repairs it there, when clang's diagnostic
	// suggests the fix ("did you mean", a fix-it); a type mismatch halves it and a diagnostic
	// that gives neither makes it 0 (see localFixProb). Default 0.5: DeepDelta (Mesbah et al.,
	// ESEC/FSE 2019) made the correct repair for 50% of the missing-symbol and
	// mismatched-signature build errors it was given, from the diagnostic and the code around it.
	LocalFix float64
	// Stickiness is how much a repeated mistake sticks: once the model has repeated a fault, the
	// chance that a later regeneration of its root fixes it is FixProb × (1 − Stickiness)
	// (a model that made a mistake twice tends to make it again). Default 0.2, a stated value.
	Stickiness float64
	// NewFaultRate is the chance that a retry introduces a new fault, scaled by the share of the
	// solution it regenerates. New faults come from the plan's pool of checked faults, which
	// only tasks planned with a first fault have.
	NewFaultRate float64
	// Ops are the fault kinds (default: all of mutate.Ops).
	Ops []mutate.Op
	// LogprobAUC is how well the logprob of a fault's root token separates it from the other
	// tokens: the probability that the root's surprisal exceeds an ordinary token's (ROC AUC).
	// 0.5 is no signal, 1 a perfect tell. Default 0.75, a stated middle value (see
	// tokenSurprisal).
	LogprobAUC float64

	// CacheBlock is the prefix cache's block size in tokens (vLLM: 16): only whole blocks hit.
	CacheBlock int
	// CacheEntries is how many recent sequences (prompt + completion) the cache holds per task.
	CacheEntries int

	// Clang is the compiler that checks injected faults (default clang-19 on $PATH).
	Clang string
	// Candidates bounds the compiler runs spent on a task's plan; PoolSize is how many extra
	// checked faults a plan keeps for retries.
	Candidates, PoolSize int
	// Encoding is the tokenizer's vocabulary (default cl100k_base).
	Encoding tokenizer.Encoding
	// NoPlanCache makes plans afresh instead of reusing those another server of this process
	// made with the same options (tests of determinism use it).
	NoPlanCache bool
}

// DefaultOptions are the simulator's defaults: the paper's figures where it gives them.
func DefaultOptions() Options {
	return Options{
		Seed:         1,
		Profile:      Profiles["gpt-oss-120b"],
		TimeScale:    1,
		ErrorRate:    0.17,
		LocalFrac:    0.40,
		FarFrac:      0.30,
		FixProb:      0.5,
		LocalFix:     0.5,
		Stickiness:   0.2,
		NewFaultRate: 0.17,
		Ops:          append([]mutate.Op(nil), mutate.Ops...),
		LogprobAUC:   0.75,
		CacheBlock:   16,
		CacheEntries: 16,
		Clang:        "clang-19",
		Candidates:   12,
		PoolSize:     2,
		Encoding:     tokenizer.Cl100kBase,
	}
}

// Assumptions are what the simulator assumes, for every report that uses it.
type Assumptions struct {
	Model          string   `json:"model"`
	RealModel      bool     `json:"real_model"`
	Tokenizer      string   `json:"tokenizer"`
	Profile        string   `json:"profile"`
	TokenLatencyMS float64  `json:"token_latency_ms"`
	PrefillTokPerS float64  `json:"prefill_tokens_per_s"`
	OverheadMS     float64  `json:"overhead_ms"`
	TimeScale      float64  `json:"time_scale"`
	Seed           int64    `json:"seed"`
	ErrorRate      float64  `json:"error_rate"`
	LocalFrac      float64  `json:"local_frac"`
	MidFrac        float64  `json:"mid_frac"`
	FarFrac        float64  `json:"far_frac"`
	FixProb        float64  `json:"fix_prob"`
	LocalFix       float64  `json:"local_fix"`
	Stickiness     float64  `json:"stickiness"`
	NewFaultRate   float64  `json:"new_fault_rate"`
	LogprobAUC     float64  `json:"logprob_auc"`
	ErrPosition    string   `json:"first_error_position"`
	CacheBlock     int      `json:"prefix_cache_block_tokens"`
	CacheEntries   int      `json:"prefix_cache_entries_per_task"`
	FaultOps       []string `json:"fault_ops"`
	Tasks          int      `json:"tasks"`
	Notes          []string `json:"notes"`
}

// Stats count what the simulator served.
type Stats struct {
	Requests         int `json:"requests"`
	PromptTokens     int `json:"prompt_tokens"`
	CachedTokens     int `json:"cached_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// Outcomes of requests: "clean" (correct text), "first_fault" (a first attempt with its
	// planned fault), "persist" (the fault's root was in the accepted prefix), "repeat" (the
	// retry regenerated the root but made the same mistake), "fixed" (it did not), "new_fault"
	// (a retry made a new mistake).
	Outcomes map[string]int `json:"outcomes"`
	// ClangRuns counts compiler runs spent planning faults.
	ClangRuns int `json:"clang_runs"`
}

// Server is the simulated model's HTTP handler. It is safe for concurrent use.
type Server struct {
	opts  Options
	tasks []Task
	enc   tokenizer.Codec
	pl    planner

	mu    sync.Mutex // guards state and stats
	state map[string]*taskState
	stats Stats
}

// taskState is what the simulator remembers of one task.
type taskState struct {
	planMu  sync.Mutex // held while the plan is made (clang runs), guards plan and planErr
	plan    *Plan
	planErr error

	// The fields below are guarded by Server.mu.
	emitted []*Fault       // faults the model has written so far, the latest last
	repeats map[*Fault]int // how often a retry repeated each fault
	seen    map[uint64]int // requests per prompt hash
	retries map[string]int // retries that regenerated each fault's root (retryDraws)
	cache   [][]uint       // prefix cache: recent token sequences, the latest last
}

// NewServer returns a simulated model over opts.Tasks (all tasks from DataDir when nil).
func NewServer(opts Options) (*Server, error) {
	if opts.Tasks == nil {
		dir, err := DataDir()
		if err != nil {
			return nil, fmt.Errorf("simulated model: %w", err)
		}
		if opts.Tasks, err = LoadTasks(dir); err != nil {
			return nil, fmt.Errorf("simulated model: %w", err)
		}
	}
	if len(opts.Tasks) == 0 {
		return nil, errors.New("simulated model: no tasks")
	}
	for name, v := range map[string]float64{"error rate": opts.ErrorRate, "local fraction": opts.LocalFrac,
		"far fraction": opts.FarFrac, "fix probability": opts.FixProb, "local fix": opts.LocalFix, "new fault rate": opts.NewFaultRate,
		"stickiness": opts.Stickiness, "logprob AUC": opts.LogprobAUC} {
		if v < 0 || v > 1 || math.IsNaN(v) {
			return nil, fmt.Errorf("simulated model: %s %v is not in [0, 1]", name, v)
		}
	}
	if opts.LocalFrac+opts.FarFrac > 1 {
		return nil, fmt.Errorf("simulated model: local fraction %v + far fraction %v exceed 1", opts.LocalFrac, opts.FarFrac)
	}
	if opts.TimeScale < 0 || opts.Profile.TokenLatency < 0 || opts.Profile.PrefillRate < 0 {
		return nil, errors.New("simulated model: negative time scale, latency or prefill rate")
	}
	if opts.Encoding == "" {
		opts.Encoding = tokenizer.Cl100kBase
	}
	if opts.Clang == "" {
		opts.Clang = "clang-19"
	}
	if len(opts.Ops) == 0 {
		opts.Ops = append([]mutate.Op(nil), mutate.Ops...)
	}
	opts.CacheBlock = max(opts.CacheBlock, 1)
	opts.CacheEntries = max(opts.CacheEntries, 1)
	opts.Candidates = max(opts.Candidates, 1)
	enc, err := tokenizer.Get(opts.Encoding)
	if err != nil {
		return nil, fmt.Errorf("simulated model: tokenizer %s: %w", opts.Encoding, err)
	}
	clang := opts.Clang
	if opts.ErrorRate > 0 || opts.NewFaultRate > 0 {
		if clang, err = exec.LookPath(opts.Clang); err != nil {
			return nil, fmt.Errorf("simulated model: the compiler that checks injected faults: %w", err)
		}
	}
	s := &Server{
		opts:  opts,
		tasks: opts.Tasks,
		enc:   enc,
		pl:    planner{clang: clang, ops: opts.Ops, candidates: opts.Candidates, poolSize: opts.PoolSize},
		state: map[string]*taskState{},
		stats: Stats{Outcomes: map[string]int{}},
	}
	for _, t := range s.tasks {
		if _, dup := s.state[t.ID]; dup {
			return nil, fmt.Errorf("simulated model: task %s appears twice", t.ID)
		}
		s.state[t.ID] = &taskState{seen: map[uint64]int{}, repeats: map[*Fault]int{}, retries: map[string]int{}}
	}
	return s, nil
}

// Tasks returns the tasks the simulator knows.
func (s *Server) Tasks() []Task { return append([]Task(nil), s.tasks...) }

// Stats returns what the simulator served so far.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Outcomes = map[string]int{}
	for k, v := range s.stats.Outcomes {
		st.Outcomes[k] = v
	}
	return st
}

// PlanSummary counts the plans made so far: tasks planned, those whose first attempt has a
// fault, the faults by distance class found ("local", "mid", "far") and by operator, and how
// many faults fell in another class than the one drawn. Reports use it to show the fault
// distribution the simulator actually produced.
type PlanSummary struct {
	Tasks       int            `json:"tasks"`
	Faulty      int            `json:"faulty"`
	ByClass     map[string]int `json:"by_class"`
	ByOp        map[string]int `json:"by_op"`
	ClassMissed int            `json:"class_missed"`
	ClangRuns   int            `json:"clang_runs"`
	// ErrPosMedian is the median normalised position of the first faults' errors (the target's
	// median is 0.5).
	ErrPosMedian float64 `json:"first_error_position_median"`
	// FarByBytes counts first faults whose root lies at least half-way back from the error in
	// bytes, d = (e − r)/(e − g) ≥ 1/2: the measure a policy sees, against the simulator's lines.
	FarByBytes int `json:"far_by_bytes"`
}

// Plans summarises the plans made so far.
func (s *Server) Plans() PlanSummary {
	sum := PlanSummary{ByClass: map[string]int{}, ByOp: map[string]int{}}
	s.mu.Lock()
	states := make([]*taskState, 0, len(s.state))
	for _, st := range s.state {
		states = append(states, st)
	}
	s.mu.Unlock()
	var pos []float64
	for _, st := range states {
		st.planMu.Lock()
		pl := st.plan
		st.planMu.Unlock()
		if pl == nil {
			continue
		}
		sum.Tasks++
		sum.ClangRuns += pl.ClangRuns
		if f := pl.First; f != nil {
			sum.Faulty++
			sum.ByClass[f.Class]++
			sum.ByOp[string(f.Op)]++
			if f.Class != pl.WantClass {
				sum.ClassMissed++
			}
			pos = append(pos, f.ErrPos)
			if f.ErrOff > f.Gen && 2*(f.ErrOff-f.RootOff) >= f.ErrOff-f.Gen {
				sum.FarByBytes++
			}
		}
	}
	sum.ErrPosMedian = stats.Median(pos)
	return sum
}

// Assumptions states what the simulator assumes.
func (s *Server) Assumptions() Assumptions {
	o := s.opts
	ops := make([]string, len(o.Ops))
	for i, op := range o.Ops {
		ops[i] = string(op)
	}
	return Assumptions{
		Model:          ModelName,
		RealModel:      false,
		Tokenizer:      string(o.Encoding) + " (github.com/tiktoken-go/tokenizer)",
		Profile:        o.Profile.Name,
		TokenLatencyMS: float64(o.Profile.TokenLatency) / float64(time.Millisecond),
		PrefillTokPerS: o.Profile.PrefillRate,
		OverheadMS:     float64(o.Profile.Overhead) / float64(time.Millisecond),
		TimeScale:      o.TimeScale,
		Seed:           o.Seed,
		ErrorRate:      o.ErrorRate,
		LocalFrac:      o.LocalFrac,
		MidFrac:        1 - o.LocalFrac - o.FarFrac,
		FarFrac:        o.FarFrac,
		FixProb:        o.FixProb,
		LocalFix:       o.LocalFix,
		Stickiness:     o.Stickiness,
		NewFaultRate:   o.NewFaultRate,
		LogprobAUC:     o.LogprobAUC,
		ErrPosition:    errPosNote,
		CacheBlock:     o.CacheBlock,
		CacheEntries:   o.CacheEntries,
		FaultOps:       ops,
		Tasks:          len(s.tasks),
		Notes: []string{
			"a simulated model, not a real one: it streams a known correct solution with injected faults",
			"the first attempt of a task has a static error with probability error_rate; faults come from checkers/mutate and are checked with real clang (tsc --noEmit for TypeScript tasks) (they fail to compile; the root lies on or before the reported error's line)",
			"distance classes in source lines (not a policy's byte measure): local = root on the error's line; far = root line in the first half of the generated lines before the error's line; mid = between; the class is drawn per task and the nearest class found is used",
			"first-error position: among the checked faults of the drawn class, the one whose first error's position in the generated text (normalised by its length) is nearest a target drawn from the triangular distribution on [0, 1] (median 0.5, the median first-error position of real C++ completions, MultiPL-E HumanEval)",
			"a fault whose root lies in the accepted prefix persists, unless a retry that regenerates the error's line repairs it there: with probability local_fix when clang's diagnostic suggests the fix (did you mean, a fix-it), local_fix/2 for a type mismatch, 0 otherwise, and only where the simulator can write that repair and clang accepts it (today: the did-you-mean rename of later uses); a retry that regenerates the root fixes it with probability fix_prob, or fix_prob x (1 - stickiness) once the model has repeated that fault, else repeats it",
			"a retry makes a new fault with probability new_fault_rate times the share of the solution it regenerates, drawn from the other checked faults planned for the task (only tasks planned with a first fault have them)",
			"a request whose prompt was seen before counts as a resample (a retry), so repeated identical requests differ",
			"common random numbers: a retry's draws (fix or repeat, new fault) come from a stream per task and fault, the k-th retry that regenerates a fault's root taking the k-th draws whatever its prompt, so every policy meets the same luck on its k-th regeneration of the same mistake (the outcome distribution is unchanged; paired comparisons see the policies' choices, not their draws)",
			"latency = overhead + uncached prompt tokens / prefill rate + output tokens x token latency, all x time_scale; prompt tokens count as cached in whole blocks shared with a recent prompt+completion of the same task (vLLM-style automatic prefix caching)",
			"logprobs are synthetic: surprisal (-logprob) of an ordinary token is log-normal (median 0.05 nats, sigma 1.5); the root token's is shifted so that its ROC AUC against ordinary tokens is logprob_auc (0.5: no signal)",
			"HumanEval-X: prompt = the task's prompt, solution = canonical_solution + test; TheAlgorithms: prompt = the leading comment block (without one: the #include preamble and the first function's head), solution = the rest; tasks whose prompt begins another's are left out",
		},
	}
}

// Plan returns the plan of the task with this id, making it (with clang) on first use.
func (s *Server) Plan(ctx context.Context, id string) (*Plan, error) {
	s.mu.Lock()
	st, ok := s.state[id]
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("simulated model: no task %q", id)
	}
	var t Task
	for _, x := range s.tasks {
		if x.ID == id {
			t = x
		}
	}
	st.planMu.Lock()
	defer st.planMu.Unlock()
	if st.plan != nil || st.planErr != nil {
		return st.plan, st.planErr
	}
	rng := rand.New(rand.NewPCG(uint64(s.opts.Seed), hashString("plan\x00"+id)))
	want := rng.Float64() < s.opts.ErrorRate
	class := ClassMid
	switch u := rng.Float64(); {
	case u < s.opts.LocalFrac:
		class = ClassLocal
	case u < s.opts.LocalFrac+s.opts.FarFrac:
		class = ClassFar
	}
	if !want {
		st.plan = &Plan{TaskID: id}
		return st.plan, nil
	}
	// Plans are memoized per process: servers with the same options (a benchmark's, a test's)
	// share them instead of running clang again.
	key := fmt.Sprintf("%s\x00%d\x00%s\x00%v\x00%d\x00%d\x00%s\x00%s\x00%x", s.pl.clang, s.opts.Seed, class,
		s.pl.ops, s.pl.candidates, s.pl.poolSize, t.ID, t.Lang, hashString(t.Prompt+"\x00"+t.Solution))
	if v, ok := planCache.Load(key); ok && !s.opts.NoPlanCache {
		st.plan = v.(*Plan)
		return st.plan, nil
	}
	pl, err := s.pl.plan(ctx, t, rng, want, class)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err // not kept: a later call may finish it
		}
		st.planErr = err
		return nil, err
	}
	planCache.Store(key, pl)
	st.plan = pl
	s.mu.Lock()
	s.stats.ClangRuns += pl.ClangRuns
	s.mu.Unlock()
	return pl, nil
}

// planCache memoizes plans across the servers of one process (key: everything a plan depends on).
var planCache sync.Map

// Prepare makes the plans of the tasks with these ids (all when ids is nil) ahead of time, with
// workers compiler runs at once, so that no request waits for clang. Benchmarks call it before
// they start timing.
func (s *Server) Prepare(ctx context.Context, ids []string, workers int) error {
	if ids == nil {
		for _, t := range s.tasks {
			ids = append(ids, t.ID)
		}
	}
	workers = max(workers, 1)
	work := make(chan string)
	errc := make(chan error, len(ids))
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range work {
				if _, err := s.Plan(ctx, id); err != nil {
					errc <- err
				}
			}
		}()
	}
	for _, id := range ids {
		select {
		case work <- id:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return err
	}
	return ctx.Err()
}

// findTask returns the task whose prompt the request's prompt contains (the longest, at its last
// occurrence) and the text after it.
func (s *Server) findTask(prompt string) (Task, string, bool) {
	best, at := -1, -1
	for i, t := range s.tasks {
		if best >= 0 && len(t.Prompt) <= len(s.tasks[best].Prompt) {
			continue
		}
		if strings.HasPrefix(prompt, t.Prompt) {
			best, at = i, 0
		} else if k := strings.LastIndex(prompt, t.Prompt); k >= 0 {
			best, at = i, k
		}
	}
	if best < 0 {
		return Task{}, "", false
	}
	t := s.tasks[best]
	return t, prompt[at+len(t.Prompt):], true
}

// feedbackComment starts the feedback comment the engine ends a spawn's prompt with
// ("// " + engine.FeedbackMarker; package engine's tests import this package, so it cannot
// import engine).
const feedbackComment = "// hydra-feedback:"

// decision is what one request streams.
type decision struct {
	task    Task
	text    string // the continuation
	fault   *Fault // the fault in the text streamed (nil: correct)
	rootAt  int    // offset of the fault's root in text, -1 when none is in it
	outcome string
}

// decide picks the continuation for a prompt: the task, the accepted prefix it carries, and
// whether this attempt has a fault.
func (s *Server) decide(ctx context.Context, prompt string) (decision, error) {
	t, gen, ok := s.findTask(prompt)
	if !ok {
		return decision{}, errNoTask
	}
	plan, err := s.Plan(ctx, t.ID)
	if err != nil {
		return decision{}, err
	}
	g := len(t.Prompt)
	versions := append([]*Fault{nil}, plan.Pool...)
	if plan.First != nil {
		versions = append(versions, plan.First)
	}
	for _, v := range versions[1:] {
		if v.Workaround != nil {
			versions = append(versions, v.Workaround)
		}
	}
	textOf := func(f *Fault) string {
		if f == nil {
			return t.Solution
		}
		return f.Text[g:]
	}
	// The accepted prefix is the longest prefix of the code before the feedback comment that
	// some version of the text has; what follows it (if anything) is feedback. The comment is
	// cut off first: when the intended text goes on with a comment of its own, "/" would
	// otherwise match the feedback's first bytes.
	code := gen
	if i := strings.Index(gen, feedbackComment); i >= 0 {
		code = strings.TrimSuffix(gen[:i], " ") // the engine puts a space before it on a line's end
	}
	var best *Fault
	n := -1
	for _, v := range versions {
		if k := textops.CommonPrefix(code, textOf(v)); k > n {
			best, n = v, k
		}
	}
	rest := gen[n:]
	accepted := g + n
	ph := hashString(prompt)

	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state[t.ID]
	count := st.seen[ph]
	st.seen[ph]++
	// A retry: feedback follows the accepted prefix, the same prompt came before, or the model
	// already wrote the planned fault once (a fresh request over the same ground, e.g. one per
	// line).
	retry := rest != "" || count > 0 || (plan.First != nil && slices.Contains(st.emitted, plan.First))

	var f *Fault
	outcome := "clean"
	switch {
	case best != nil && best.IsWorkaround:
		f, outcome = best, "clean" // goes on with a local repair made before; it compiles
	case best != nil && best.Diff < accepted:
		f, outcome = best, "persist"
		// A retry that keeps the root may repair the fault on the error's line, as the
		// diagnostic suggests. It draws from its own common-random-number stream.
		lineStart := strings.LastIndexByte(best.Text[:best.ErrOff], '\n') + 1
		if retry && best.Workaround != nil && accepted <= lineStart {
			if s.retryDraws(t.ID, st, best, "local").Float64() < localFixProb(s.opts.LocalFix, best.Hint) {
				f, outcome = best.Workaround, "local_fix"
			}
		}
	case !retry:
		if plan.First != nil && plan.First.Diff >= accepted {
			f, outcome = plan.First, "first_fault"
		}
	default:
		var prev *Fault
		for i := len(st.emitted) - 1; i >= 0; i-- {
			if st.emitted[i].Diff >= accepted {
				prev = st.emitted[i]
				break
			}
		}
		// Common random numbers: the k-th retry that regenerates a fault's root draws the k-th
		// numbers of that fault's own stream, whatever the prompt, so every policy (each with its
		// own simulator, see Fresh) meets the same luck on its k-th regeneration of the same
		// mistake. The distribution of outcomes is unchanged; only the pairing between policies
		// is, so paired ratios measure the policies' choices rather than their draws.
		rng := s.retryDraws(t.ID, st, prev, "")
		fix := s.opts.FixProb
		if st.repeats[prev] > 0 {
			fix *= 1 - s.opts.Stickiness // a mistake the model repeated once is likelier to come again
		}
		if prev != nil && rng.Float64() >= fix {
			st.repeats[prev]++
			f, outcome = prev, "repeat"
			break
		}
		if prev != nil {
			outcome = "fixed"
		}
		share := float64(len(t.Solution)-n) / float64(max(len(t.Solution), 1))
		if rng.Float64() < s.opts.NewFaultRate*share {
			var cands []*Fault
			for _, v := range versions[1:] {
				if v != prev && v.Diff >= accepted {
					cands = append(cands, v)
				}
			}
			if len(cands) > 0 {
				f, outcome = cands[rng.IntN(len(cands))], "new_fault"
			}
		}
	}
	s.stats.Outcomes[outcome]++
	d := decision{task: t, text: textOf(f)[n:], fault: f, rootAt: -1, outcome: outcome}
	if f != nil && f.IsWorkaround {
		d.fault = nil // a local repair: the text compiles
	} else if f != nil && f.RootOff >= accepted {
		d.rootAt = f.RootOff - accepted
	}
	return d, nil
}

// retryDraws is the random source of the next retry that regenerates fault prev's root (nil:
// a retry over no known fault) of task id: seeded by (seed, task, fault, how many such retries
// came before in this simulator).
func (s *Server) retryDraws(id string, st *taskState, prev *Fault, kind string) *rand.Rand {
	key := "none"
	if prev != nil {
		key = fmt.Sprintf("%s\x00%d\x00%d", prev.Op, prev.Diff, prev.RootOff)
	}
	if kind != "" {
		key += "\x00" + kind
	}
	k := st.retries[key]
	st.retries[key]++
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(k))
	return rand.New(rand.NewPCG(uint64(s.opts.Seed), hashString("retry\x00"+id+"\x00"+key+"\x00"+string(b[:]))))
}

// localFixProb is the chance of a local repair that keeps the root, by what the diagnostic
// gives (Fault.Hint): p when it suggests the fix, p/2 for a type mismatch, else 0.
func localFixProb(p float64, hint string) float64 {
	switch hint {
	case HintSuggestion:
		return p
	case HintType:
		return p / 2
	}
	return 0
}

var errNoTask = errors.New(ModelName + ": the prompt matches no task the simulator knows")

// wrote records that the model wrote fault f of a task (its root was streamed), as the latest.
func (s *Server) wrote(id string, f *Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state[id]
	st.emitted = slices.DeleteFunc(st.emitted, func(e *Fault) bool { return e == f })
	st.emitted = append(st.emitted, f)
}

// cacheHit returns how many leading tokens of ids a recent sequence of the task holds, in whole
// blocks.
func (s *Server) cacheHit(id string, ids []uint) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	best := 0
	for _, c := range s.state[id].cache {
		n := min(len(c), len(ids))
		k := 0
		for k < n && c[k] == ids[k] {
			k++
		}
		best = max(best, k)
	}
	return best / s.opts.CacheBlock * s.opts.CacheBlock
}

// remember puts a served sequence into the task's prefix cache (LRU).
func (s *Server) remember(id string, ids []uint) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state[id]
	st.cache = append(st.cache, ids)
	if len(st.cache) > s.opts.CacheEntries {
		st.cache = st.cache[len(st.cache)-s.opts.CacheEntries:]
	}
}

// api is how the simulated model names itself on the wire.
var api = openaiserver.Model{Name: ModelName, OwnedBy: "hydra (simulated, not a real model)", CompletionID: "cmpl-sim"}

// ServeHTTP implements http.Handler: POST /v1/completions and GET /v1/models.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	api.Serve(w, r, s.complete)
}

// piece is one streamed token (or a few, when a character spans BPE tokens).
type piece struct {
	text   string
	tokens int
	root   bool // holds the fault's root
}

func (s *Server) complete(w http.ResponseWriter, r *http.Request) {
	req, ok := api.ReadRequest(w, r)
	if !ok {
		return
	}
	prompt := req.Prompt
	var stops []string
	for _, st := range req.Stop {
		if st != "" {
			stops = append(stops, st)
		}
	}
	start := time.Now()
	d, err := s.decide(r.Context(), prompt)
	if errors.Is(err, errNoTask) {
		api.WriteError(w, http.StatusBadRequest, err.Error())
		return
	}
	if err != nil {
		api.WriteError(w, http.StatusInternalServerError, fmt.Sprintf("%s: %v", ModelName, err))
		return
	}
	planned := time.Since(start) // clang time of a plan made on demand, not simulated time

	text, finish := d.text, "stop"
	for _, st := range stops {
		if i := strings.Index(text, st); i >= 0 {
			text = text[:i] // a root cut off here is not written (see wrote below)
		}
	}
	promptIDs, _, _ := s.enc.Encode(prompt)
	ids, toks, _ := s.enc.Encode(text)
	if req.MaxTokens > 0 && len(ids) > req.MaxTokens {
		ids, toks = ids[:req.MaxTokens], toks[:req.MaxTokens]
		finish = "length"
	}
	pieces := makePieces(toks, d.rootAt)
	cached := s.cacheHit(d.task.ID, promptIDs)
	usage := openaiserver.Usage(len(promptIDs), len(ids), cached)
	prefill := s.opts.Profile.Overhead
	if s.opts.Profile.PrefillRate > 0 {
		prefill += time.Duration(float64(len(promptIDs)-cached) / s.opts.Profile.PrefillRate * float64(time.Second))
	}
	scale := func(d time.Duration) time.Duration { return time.Duration(float64(d) * s.opts.TimeScale) }

	served, servedBytes := 0, 0 // tokens and bytes sent
	// settle records what the request wrote (fault, prefix cache, stats). It runs before the
	// last event goes out, so that a client's next request sees it, or when the client leaves.
	settled := false
	settle := func() {
		if settled {
			return
		}
		settled = true
		if d.fault != nil && (d.rootAt < 0 || servedBytes > d.rootAt) {
			s.wrote(d.task.ID, d.fault)
		}
		seq := append(append([]uint(nil), promptIDs...), ids[:served]...)
		s.remember(d.task.ID, seq)
		s.mu.Lock()
		s.stats.Requests++
		s.stats.PromptTokens += len(promptIDs)
		s.stats.CachedTokens += cached
		s.stats.CompletionTokens += served
		s.mu.Unlock()
	}
	defer settle()

	lp := req.Logprobs > 0
	rng := rand.New(rand.NewPCG(uint64(s.opts.Seed), hashString(prompt)))
	logprobsOf := func(p piece) map[string]any {
		v := -TokenSurprisal(rng, p.root, s.opts.LogprobAUC)
		alt := math.Log(max(1-math.Exp(v), 1e-9))
		return openaiserver.Logprobs([]string{p.text}, []float64{v},
			[]map[string]float64{{p.text: v, "<alternative>": alt}})
	}
	// The schedule is absolute from the request's start, so slow writes do not add up.
	due := start.Add(planned + scale(prefill))
	wait := func(until time.Time) bool {
		dl := time.Until(until)
		if dl <= 0 {
			return r.Context().Err() == nil
		}
		return openaiserver.Sleep(r.Context(), dl)
	}

	if !req.Stream {
		due = due.Add(scale(time.Duration(len(ids)) * s.opts.Profile.TokenLatency))
		if !wait(due) {
			return
		}
		served, servedBytes = len(ids), len(text)
		settle()
		openaiserver.WriteJSON(w, http.StatusOK, api.Completion(text, finish, nil, usage))
		return
	}

	stream := openaiserver.StartStream(w)
	for i, p := range pieces {
		due = due.Add(scale(time.Duration(p.tokens) * s.opts.Profile.TokenLatency))
		if !wait(due) {
			return
		}
		var fin any
		if i == len(pieces)-1 {
			fin = finish
		}
		var lps any
		if lp {
			lps = logprobsOf(p)
		}
		ev := api.Event(p.text, fin, lps)
		if req.ContinuousUsage {
			// vLLM's continuous usage: every event carries the usage so far.
			ev["usage"] = openaiserver.Usage(len(promptIDs), served+p.tokens, cached)
		}
		served += p.tokens
		servedBytes += len(p.text)
		if i == len(pieces)-1 {
			settle() // before the client can see the end
		}
		if !stream.Send(ev) {
			return
		}
	}
	if len(pieces) == 0 {
		if !wait(due) {
			return
		}
		settle()
		if !stream.Send(api.Event("", finish, nil)) {
			return
		}
	}
	stream.Send(api.UsageEvent(usage))
	stream.Done()
}

// makePieces groups BPE tokens into valid UTF-8 pieces and marks the piece holding rootAt.
func makePieces(toks []string, rootAt int) []piece {
	var out []piece
	var cur piece
	off := 0
	for _, t := range toks {
		if rootAt >= off && rootAt < off+len(t) {
			cur.root = true
		}
		off += len(t)
		cur.text += t
		cur.tokens++
		if utf8.ValidString(cur.text) {
			out = append(out, cur)
			cur = piece{}
		}
	}
	if cur.tokens > 0 {
		out = append(out, cur)
	}
	return out
}
