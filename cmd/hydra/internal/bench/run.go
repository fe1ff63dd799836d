// Package bench is the harness behind `hydra bench`: it runs repair policies side by side on the
// same tasks and seeds against a model (the simulated one of sim, or a real
// OpenAI-compatible server) and the real Clang checker, checks every result again on its own
// (static correctness with clang, functional correctness by running the task's tests in a
// sandbox), and reports the paper's Table 3 figures per policy (report.go, plot.go).
package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/engine"
	"github.com/hydra-lsp/hydra/engine/model"
	"github.com/hydra-lsp/hydra/policy"
)

// Config is what a benchmark run was asked to do; the report repeats it.
type Config struct {
	Tasks     int      `json:"tasks"`
	Seed      int64    `json:"seed"`
	Policies  []string `json:"policies"`
	ModelURL  string   `json:"model_url,omitempty"`
	Model     string   `json:"model"`
	TimeScale float64  `json:"time_scale"`
	// Parallel is how many tasks run at once (each task's policies run one after the other):
	// `--concurrency`.
	Parallel    int `json:"concurrency"`
	MaxAttempts int `json:"max_attempts"`
	MaxTokens   int `json:"max_tokens"`
	// KeepRuns puts every run in the report (--json --runs).
	KeepRuns bool `json:"-"`
	// TraceDir, when set, receives each run's search tree as TASK.POLICY.json.
	TraceDir string `json:"-"`
}

// Budget is what every search of the run may spend, the same for every policy: MaxAttempts
// rollouts, MaxAttempts × MaxTokens output tokens in all, and half an hour. A search ends
// without a compiling program only when this is spent.
func (c Config) Budget() engine.Budget {
	return engine.Budget{MaxAttempts: c.MaxAttempts, MaxTokens: max(c.MaxAttempts*c.MaxTokens, engine.DefaultBudget().MaxTokens),
		Deadline: 30 * time.Minute}
}

// Task is one benchmark task: a prompt the model continues, how to compile the result and,
// when it has tests, the code that runs them.
type Task struct {
	ID       string
	Lang     string // "c", "c++" or "typescript"
	Prompt   string
	Filename string
	Flags    []string
	// Test is the test code (HumanEval-X, HumanEval in TypeScript); when the generated text has
	// no main of its own it is appended before compiling. Empty: no functional check.
	Test string
}

// Env is what the runs use: the model, the checker and the tasks.
type Env struct {
	// Generator returns the model a policy's searches use. Against the simulated model each
	// policy gets its own simulator (same plans, its own request history); against a real
	// server all share one client.
	Generator func(policy string) model.Generator
	Checker   checkers.Checker
	Tasks     []Task
	// Verifier checks results on their own; nil means a default Verifier.
	Verifier *Verifier
	// Done holds runs already made (a resumed benchmark, by RunKey): they are not run again.
	Done map[string]Run
	// OnRun, when set, receives every run as soon as it is made (from several goroutines at
	// once; calls are serialised).
	OnRun func(Run)
}

// RunKey identifies a run of a benchmark: task and policy.
func RunKey(task, policy string) string { return task + "\x00" + policy }

// Execute runs every policy of cfg on every task of env and returns the runs, task by task,
// policies in cfg's order. A task's policies run one after the other, starting from a different
// policy in each task (task i from policy i mod n): whatever the first run of a task pays more
// than the others (a checker's first parse of a new file, other tasks' start-up beside it) is
// spread over the policies, not charged to the first one named. Progress goes to progress (a bar; nil for none). An error in a run
// is recorded in it (Run.Err); Execute itself fails only on a bad configuration or when ctx ends.
func Execute(ctx context.Context, cfg Config, env Env, progress io.Writer) ([]Run, error) {
	pols := map[string]engine.Policy{}
	for _, name := range cfg.Policies {
		p, err := policy.ByName(name)
		if err != nil {
			return nil, err
		}
		pols[name] = p
	}
	if len(cfg.Policies) == 0 {
		return nil, errors.New("no policies to run")
	}
	ver := env.Verifier
	if ver == nil {
		ver = &Verifier{}
	}
	var bar *progressbar.ProgressBar
	if progress != nil {
		bar = progressbar.NewOptions(len(env.Tasks)*len(cfg.Policies),
			progressbar.OptionSetWriter(progress),
			progressbar.OptionSetDescription("bench: runs"),
			progressbar.OptionSetWidth(30),
			progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(progress) }),
		)
	}
	par := max(cfg.Parallel, 1)
	runs := make([][]Run, len(env.Tasks))
	var wg sync.WaitGroup
	sem := make(chan struct{}, par)
	var mu sync.Mutex
	for i, t := range env.Tasks {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var release func()
			defer func() {
				if release != nil {
					release()
				}
			}()
			mine := make([]Run, len(cfg.Policies))
			defer func() {
				mu.Lock()
				runs[i] = mine
				mu.Unlock()
			}()
			for k := range cfg.Policies {
				j := (i + k) % len(cfg.Policies)
				name := cfg.Policies[j]
				if ctx.Err() != nil {
					return
				}
				r, done := env.Done[RunKey(t.ID, name)]
				if !done {
					if release == nil {
						release = warm(ctx, env.Checker, t)
					}
					r = runOne(ctx, cfg, env, ver, t, name, pols[name])
				}
				mine[j] = r
				mu.Lock()
				if !done && env.OnRun != nil && ctx.Err() == nil {
					env.OnRun(r)
				}
				if bar != nil {
					_ = bar.Add(1)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if bar != nil {
		_ = bar.Finish()
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	var out []Run
	for _, rs := range runs {
		out = append(out, rs...)
	}
	return out, nil
}

// runOne runs one policy on one task and verifies its result.
func runOne(ctx context.Context, cfg Config, env Env, ver *Verifier, t Task, name string, pol engine.Policy) Run {
	params := model.Params{MaxTokens: cfg.MaxTokens, Temperature: 0, Seed: cfg.Seed}
	if strings.HasPrefix(name, "uncertainty") {
		params.Logprobs = 5
	}
	req := engine.Request{
		Prompt:   t.Prompt,
		Prefix:   t.Prompt,
		Filename: t.Filename,
		Flags:    t.Flags,
		Model:    cfg.Model,
		Params:   params,
		Policy:   pol,
		Budget:   cfg.Budget(),
	}
	run := Run{Task: t.ID, Policy: name}
	res, err := engine.Search(ctx, env.Checker, env.Generator(name), req)
	if err != nil {
		run.Err = err.Error()
		run.Reason = "error"
		return run
	}
	if tp, ok := pol.(*policy.TokPol); ok {
		if start, b, ok := tp.Learned(cfg.Model); ok {
			local, far := b.Masses()
			l0, f0 := start.Masses()
			run.Learned = &Learned{Local: local, Far: far, Q: b.Q(), Episodes: b.Episodes - start.Episodes,
				StartLocal: l0, StartFar: f0, StartQ: start.Q()}
		}
	}
	st := res.Stats
	run.Latency = st.Wall
	run.Tokens = st.OutputTokens
	run.PromptTokens = st.PromptTokens
	run.CachedPromptTokens = st.CachedPromptTokens
	run.Attempts = st.Attempts
	run.Accepted = res.OK
	run.Reason = res.Reason
	run.CheckpointResumes = st.CheckpointResumes
	run.ResubmittedBytes = st.ResubmittedBytes
	run.RestartBytes = restartBytes(res.Trace, len(t.Prompt))
	run.CheckerLagMS = checkerLag(res.Trace)
	if cfg.TraceDir != "" {
		writeTrace(cfg.TraceDir, t, name, res)
	}
	program := t.Prompt + res.Text
	run.StaticOK, _ = ver.Static(ctx, t, program)
	if t.Test != "" && ver.Execute { // generated code runs only when asked (--run-tests), sandboxed
		ok := ver.Functional(ctx, t, program)
		run.Functional = &ok
	}
	run.HitError = st.Attempts > 1 || len(res.Diagnostics) > 0 || !run.StaticOK
	return run
}

// restartBytes is how much checked text the repairs of a search started after: the offsets of
// the start nodes of every rollout but the first, less the prefix (which any checker holds).
func restartBytes(tr *engine.Trace, prefix int) int {
	if tr == nil {
		return 0
	}
	off := map[int]int{}
	for _, n := range tr.Nodes {
		off[n.ID] = n.Off
	}
	total := 0
	rs := append([]engine.TraceRollout(nil), tr.Rollouts...)
	sort.Slice(rs, func(i, j int) bool { return rs[i].ID < rs[j].ID })
	for i, r := range rs {
		if i == 0 {
			continue
		}
		total += max(off[r.Start]-prefix, 0)
	}
	return total
}

// checkerLag is how far the checker ran behind the model in a search: for each progress node,
// the time from the moment the model's stream reached its offset to the moment the checker
// accepted it, averaged over the nodes (milliseconds; 0 without a trace).
func checkerLag(tr *engine.Trace) float64 {
	if tr == nil {
		return 0
	}
	streams := map[int][]engine.TracePoint{}
	for _, r := range tr.Rollouts {
		streams[r.ID] = r.Stream
	}
	sum, n := 0.0, 0
	for _, nd := range tr.Nodes {
		if nd.Kind != "progress" {
			continue
		}
		pts := streams[nd.Rollout]
		i := sort.Search(len(pts), func(i int) bool { return pts[i].Off >= nd.Off })
		if i == len(pts) {
			continue // text the rollout did not stream (a resubmitted prefix)
		}
		sum += math.Max(0, nd.AtMS-pts[i].AtMS)
		n++
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// warm gives the checker a dormant checkpoint of the task's prompt before any policy runs, so
// that no policy pays for parsing the prompt's headers on its own and the order of policies does
// not matter: every search starts from the same warm checker (the engine resumes the nearest
// checkpoint of its prefix). The returned function releases it.
func warm(ctx context.Context, ck checkers.Checker, t Task) (release func()) {
	nop := func() {}
	if ck == nil {
		return nop
	}
	text := t.Prompt
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = text[:i+1]
	} else {
		return nop
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	sess, err := ck.Start(ctx, checkers.SessionOptions{Flags: t.Flags, Filename: t.Filename})
	if err != nil {
		return nop
	}
	defer sess.Close()
	if err := sess.Submit(text, checkers.SubmitOptions{Cat: checkers.BoundaryLine, Checkpoint: true}); err != nil {
		return nop
	}
	for {
		select {
		case ev, ok := <-sess.Events():
			if !ok {
				return nop
			}
			switch ev.Kind {
			case checkers.KindChkpt:
				if cp := ck.Adopt(ev.ID); cp != nil {
					return cp.Release
				}
				return nop
			case checkers.KindError, checkers.KindDone, checkers.KindCrash:
				return nop
			}
		case <-ctx.Done():
			return nop
		}
	}
}

// writeTrace saves a run's result and search tree for inspection; failures are ignored (it is a
// debugging aid).
func writeTrace(dir string, t Task, policy string, res *engine.Result) {
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.ID) + "." + policy + ".json"
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return
	}
	_ = os.MkdirAll(dir, 0o755)
	_ = os.WriteFile(filepath.Join(dir, name), data, 0o644)
}
