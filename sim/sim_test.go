package sim_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/checkers/wholefile"
	"github.com/hydra-lsp/hydra/engine/model"
	"github.com/hydra-lsp/hydra/sim"
	"github.com/tiktoken-go/tokenizer"
)

// These tests run the simulated model (a stand-in, not a real model) with the real clang-19.

var (
	tasksOnce sync.Once
	allTasks  []sim.Task
	tasksErr  error
)

func loadTasks(t *testing.T) []sim.Task {
	t.Helper()
	tasksOnce.Do(func() {
		dir, err := sim.DataDir()
		if err != nil {
			tasksErr = err
			return
		}
		allTasks, tasksErr = sim.LoadTasks(dir)
	})
	if tasksErr != nil {
		t.Fatalf("the task data (../shared/data) is needed: %v", tasksErr)
	}
	return allTasks
}

// humanEval returns the HumanEval-X tasks, whose programs compile quickly.
func humanEval(t *testing.T) []sim.Task {
	var out []sim.Task
	for _, x := range loadTasks(t) {
		if x.Source == "humaneval-x" {
			out = append(out, x)
		}
	}
	return out
}

func full() bool { return os.Getenv("HYDRA_FULL") != "" }

// longSequential skips, under -short, a long test that asks the server one request at a time:
// make test runs it in its main go test run, and runs this package again under the race
// detector with -short, where such a test finds no race and costs a minute and a half.
func longSequential(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("one request at a time, long under -race: runs without -short (make test's go test ./...)")
	}
}

// options are fast defaults for tests: no waiting unless a test asks.
func options(tasks []sim.Task) sim.Options {
	o := sim.DefaultOptions()
	o.Tasks = tasks
	o.TimeScale = 0
	return o
}

func newServer(t *testing.T, o sim.Options) (*sim.Server, *model.Client) {
	t.Helper()
	s, err := sim.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	c, err := model.NewClient(hs.URL + "/v1")
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// complete runs one streamed completion and returns its text, tokens and usage.
func complete(t *testing.T, c *model.Client, prompt string, p model.Params) (string, []model.Token, model.Usage) {
	t.Helper()
	s, err := c.Complete(context.Background(), model.Request{Model: sim.ModelName, Prompt: prompt, Params: p})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var sb strings.Builder
	var toks []model.Token
	for {
		tok, err := s.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		sb.WriteString(tok.Text)
		toks = append(toks, tok)
	}
	return sb.String(), toks, s.Usage()
}

// clangFirstError runs whole-file clang-19 (checkers/wholefile) on text, independently of the
// simulator's own check, and returns whether it compiled and the first error in the task's file.
func clangFirstError(t *testing.T, task sim.Task, text string) (ok bool, line int, msg string) {
	t.Helper()
	v, err := wholefile.Check(context.Background(), text, wholefile.Options{Dir: t.TempDir(), Name: task.Filename(), Flags: task.Flags()})
	if err != nil {
		t.Fatal(err)
	}
	if v.OK {
		return true, 0, ""
	}
	d, found := v.FirstIn(task.Filename())
	if !found {
		t.Fatalf("clang-19 failed without an error in %s:\n%s", task.Filename(), v.Output)
	}
	return false, d.Line, d.Msg
}

func TestLoadTasksSplitsPromptAndSolution(t *testing.T) {
	tasks := loadTasks(t)
	bySource := map[string]int{}
	ids := map[string]bool{}
	for _, task := range tasks {
		bySource[task.Source]++
		if ids[task.ID] {
			t.Errorf("task %s twice", task.ID)
		}
		ids[task.ID] = true
		if task.Prompt == "" || strings.TrimSpace(task.Solution) == "" {
			t.Errorf("%s: empty prompt or solution", task.ID)
		}
		if task.Source == "humaneval-x" && !strings.HasSuffix(task.Solution, task.Test) {
			t.Errorf("%s: solution does not end with the test", task.ID)
		}
	}
	prompts := make([]string, 0, len(tasks))
	for _, task := range tasks {
		prompts = append(prompts, task.Prompt)
	}
	sort.Strings(prompts)
	for i := 0; i+1 < len(prompts); i++ {
		if strings.HasPrefix(prompts[i+1], prompts[i]) {
			t.Errorf("prompt %.60q begins another task's prompt: tasks are ambiguous", prompts[i])
		}
	}
	t.Logf("tasks by source: %v", bySource)
	// 164 HumanEval-X tasks less the 2 that need boost; TheAlgorithms programs with a prompt.
	if bySource["humaneval-x"] != 162 || bySource["thealgorithms"] < 350 {
		t.Errorf("tasks by source = %v, want 162 HumanEval-X and most of the 422 TheAlgorithms programs", bySource)
	}
}

func TestSelectIsDeterministicAndMixesSources(t *testing.T) {
	tasks := loadTasks(t)
	a, b, c := sim.Select(tasks, 10, 7), sim.Select(tasks, 10, 7), sim.Select(tasks, 10, 8)
	ids := func(ts []sim.Task) string {
		var s []string
		for _, t := range ts {
			s = append(s, t.ID)
		}
		return strings.Join(s, ",")
	}
	if ids(a) != ids(b) {
		t.Error("same seed, different selection")
	}
	if ids(a) == ids(c) {
		t.Error("different seeds, same selection")
	}
	src := map[string]int{}
	for _, x := range a {
		src[x.Source]++
	}
	if src["humaneval-x"] != 5 || src["thealgorithms"] != 5 {
		t.Errorf("selection by source = %v, want 5 and 5", src)
	}
}

// TestTasksCompile checks that the correct programs compile: a sample by default, every task
// with HYDRA_FULL=1.
func TestTasksCompile(t *testing.T) {
	tasks := loadTasks(t)
	if !full() {
		tasks = sim.Select(tasks, 12, 11)
	}
	for _, task := range tasks {
		if ok, line, msg := clangFirstError(t, task, task.Text()); !ok {
			t.Errorf("%s: the correct program fails at line %d: %s", task.ID, line, msg)
		}
	}
}

// TestInjectedFaultsFailClangAndRootPrecedesError is the simulator's fault-injection check:
// every fault it plans really makes clang-19 fail, where the simulator recorded, and its root
// lies on or before the reported error's line, in generated text.
func TestInjectedFaultsFailClangAndRootPrecedesError(t *testing.T) {
	longSequential(t)
	n := 8
	if full() {
		n = 80
	}
	tasks := sim.Select(loadTasks(t), n, 5)
	o := options(tasks)
	o.ErrorRate = 1
	s, err := sim.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Prepare(context.Background(), nil, 2); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	classes := map[string]int{}
	faults := 0
	t.Cleanup(func() {
		t.Logf("%d faults checked on %d tasks; first-attempt classes (drawn→found) %v", faults, len(tasks), classes)
		sum := s.Plans()
		n := 0
		for _, v := range sum.ByClass {
			n += v
		}
		if sum.Tasks != len(tasks) || sum.Faulty != len(tasks) || n != sum.Faulty {
			t.Errorf("plan summary %+v, want %d faulty tasks", sum, len(tasks))
		}
		t.Logf("plan summary: %+v", sum)
	})
	for _, task := range tasks {
		t.Run(task.ID, func(t *testing.T) {
			t.Parallel() // clang runs, two at a time on two cores
			p, err := s.Plan(context.Background(), task.ID)
			if err != nil {
				t.Fatal(err)
			}
			if p.First == nil {
				t.Fatalf("error rate 1 but no fault planned (%d clang runs)", p.ClangRuns)
			}
			mu.Lock()
			classes[p.WantClass+"→"+p.First.Class]++
			mu.Unlock()
			for _, f := range append([]*sim.Fault{p.First}, p.Pool...) {
				mu.Lock()
				faults++
				mu.Unlock()
				ok, line, msg := clangFirstError(t, task, f.Text)
				if ok {
					t.Errorf("fault %q compiles", f.Desc)
					continue
				}
				if line != f.ErrLine || msg != f.Diag {
					t.Errorf("clang reports line %d %q, the simulator recorded line %d %q", line, msg, f.ErrLine, f.Diag)
				}
				if f.RootLine > line {
					t.Errorf("root at line %d comes after the error at line %d (%s)", f.RootLine, line, f.Desc)
				}
				if f.RootOff < len(task.Prompt) || f.Diff < len(task.Prompt) || f.Text[:len(task.Prompt)] != task.Prompt {
					t.Errorf("fault %q touches the prompt", f.Desc)
				}
			}
		})
	}
}

func TestStreamsTheSolutionAndBillsTokens(t *testing.T) {
	tasks := sim.Select(loadTasks(t), 2, 1)
	o := options(tasks)
	o.ErrorRate = 0
	_, c := newServer(t, o)
	enc, err := tokenizer.Get(tokenizer.Cl100kBase)
	if err != nil {
		t.Fatal(err)
	}
	task := tasks[0]
	text, toks, u := complete(t, c, task.Prompt, model.Params{})
	if text != task.Solution {
		t.Fatalf("completion differs from the solution:\n%q\nwant\n%q", text, task.Solution)
	}
	wantOut, _ := enc.Count(task.Solution)
	wantIn, _ := enc.Count(task.Prompt)
	if u.CompletionTokens != wantOut || u.PromptTokens != wantIn || u.CachedTokens != 0 {
		t.Errorf("usage %+v, want %d completion, %d prompt, 0 cached tokens", u, wantOut, wantIn)
	}
	if len(toks) > wantOut || len(toks) < wantOut*9/10 {
		t.Errorf("%d streamed pieces for %d tokens", len(toks), wantOut)
	}

	// A retry from half-way: the prompt shares the task prompt and the accepted prefix with
	// the first request's prompt + completion, so the prefix cache holds most of it.
	half := task.Solution[:strings.Index(task.Solution[len(task.Solution)/2:], "\n")+len(task.Solution)/2+1]
	retry := task.Prompt + half + "// hydra-feedback: line 3: something\n"
	text, _, u = complete(t, c, retry, model.Params{})
	if text != task.Solution[len(half):] {
		t.Errorf("retry continued with %q, want the rest of the solution", text)
	}
	if u.CachedTokens <= 0 || u.CachedTokens%16 != 0 || u.CachedTokens > u.PromptTokens {
		t.Errorf("retry usage %+v: want cached tokens in whole blocks of 16, > 0, ≤ prompt tokens", u)
	}
	shared, _ := enc.Count(task.Prompt + half)
	if u.CachedTokens < shared-2*16 {
		t.Errorf("retry: %d cached tokens, want about the %d tokens of prompt + accepted prefix", u.CachedTokens, shared)
	}

	// Stop sequences and max_tokens.
	text, _, _ = complete(t, c, task.Prompt, model.Params{MaxTokens: 3})
	if n, _ := enc.Count(text); n > 3 || text == "" {
		t.Errorf("max_tokens 3 gave %q", text)
	}
	stop := strings.TrimSpace(strings.SplitN(task.Solution, "\n", 3)[1])
	text, _, _ = complete(t, c, task.Prompt, model.Params{Stop: []string{stop}})
	if strings.Contains(text, stop) || !strings.HasPrefix(task.Solution, text) {
		t.Errorf("stop %q: got %q", stop, text)
	}
}

// TestRetryFixesOnlyWhenTheRootIsRegenerated drives the fault model: a retry from after the
// root keeps the fault; one from before it fixes it (with probability 1 here) or repeats it
// (probability 0).
func TestRetryFixesOnlyWhenTheRootIsRegenerated(t *testing.T) {
	var task sim.Task
	for _, x := range loadTasks(t) {
		if x.ID == "CPP/19" { // a far fault (renamed declaration) with the seed below
			task = x
		}
	}
	for _, tc := range []struct {
		name    string
		fixProb float64
		before  bool // retry from before the root
		wantFix bool
	}{
		{"after the root the fault persists", 1, false, false},
		{"before the root it is fixed", 1, true, true},
		{"before the root with fix probability 0 it repeats", 0, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := options([]sim.Task{task})
			o.ErrorRate, o.FixProb, o.NewFaultRate = 1, tc.fixProb, 0
			o.PoolSize = 0 // fewer clang runs
			s, c := newServer(t, o)
			p, err := s.Plan(context.Background(), task.ID)
			if err != nil || p.First == nil {
				t.Fatalf("plan: %v, %+v", err, p)
			}
			f := p.First
			g := len(task.Prompt)
			first, _, _ := complete(t, c, task.Prompt, model.Params{})
			if task.Prompt+first != f.Text {
				t.Fatal("the first attempt is not the planned fault's text")
			}
			// Roll back to the start of the error's line, or of the root's line.
			cut := lineStart(f.Text, f.ErrLine)
			if tc.before {
				cut = lineStart(f.Text, f.RootLine)
			}
			if tc.before != (cut <= f.Diff) {
				t.Fatalf("rollback point %d vs root %d: the test's premise does not hold", cut, f.Diff)
			}
			prompt := f.Text[:cut] + "// hydra-feedback: the previous attempt failed: " + f.Diag + "\n"
			text, _, _ := complete(t, c, prompt, model.Params{})
			whole := f.Text[:cut] + text
			switch {
			case tc.wantFix && whole != task.Text():
				t.Errorf("retry from before the root did not give the correct program")
			case !tc.wantFix && whole != f.Text:
				t.Errorf("retry kept nothing of the fault")
			}
			out := s.Stats().Outcomes
			want := map[bool]string{true: "fixed", false: "persist"}[tc.wantFix]
			if !tc.wantFix && tc.before {
				want = "repeat"
			}
			if out[want] != 1 || out["first_fault"] != 1 {
				t.Errorf("outcomes %v, want first_fault and %s", out, want)
			}
			_ = g
		})
	}
}

func lineStart(text string, line int) int {
	off := 0
	for l := 1; l < line; l++ {
		off += strings.IndexByte(text[off:], '\n') + 1
	}
	return off
}

// TestDeterministicBySeed: the same seed gives the same plans and texts; another seed differs.
func TestDeterministicBySeed(t *testing.T) {
	longSequential(t)
	tasks := sim.Select(humanEval(t), 6, 2) // small headers: quick clang runs
	run := func(seed int64) string {
		o := options(tasks)
		o.Seed = seed
		o.ErrorRate = 0.5
		o.PoolSize = 0 // fewer clang runs
		_, c := newServer(t, o)
		var sb strings.Builder
		for _, task := range tasks {
			text, _, _ := complete(t, c, task.Prompt, model.Params{})
			again, _, _ := complete(t, c, task.Prompt+"// hydra-feedback: retry\n", model.Params{})
			sb.WriteString(task.ID + "\x00" + text + "\x00" + again + "\x00")
		}
		return sb.String()
	}
	a, b, c := run(3), run(3), run(4)
	if a != b {
		t.Error("the same seed gave different completions")
	}
	if a == c {
		t.Error("seeds 3 and 4 gave the same completions on 6 tasks at error rate 0.5")
	}
}

// TestPlansAreDeterministicBySeed makes the same plans twice, without the process's plan cache.
func TestPlansAreDeterministicBySeed(t *testing.T) {
	longSequential(t)
	tasks := sim.Select(humanEval(t), 3, 6)
	plans := func(seed int64) string {
		o := options(tasks)
		o.Seed, o.ErrorRate, o.PoolSize, o.NoPlanCache = seed, 1, 1, true
		s, err := sim.NewServer(o)
		if err != nil {
			t.Fatal(err)
		}
		var sb strings.Builder
		for _, task := range tasks {
			p, err := s.Plan(context.Background(), task.ID)
			if err != nil || p.First == nil {
				t.Fatalf("plan %s: %v %+v", task.ID, err, p)
			}
			for _, f := range append([]*sim.Fault{p.First}, p.Pool...) {
				fmt.Fprintf(&sb, "%s %s %d %d %s|", task.ID, f.Op, f.RootOff, f.ErrOff, f.Desc)
			}
		}
		return sb.String()
	}
	if a, b := plans(21), plans(21); a != b {
		t.Errorf("seed 21 planned differently:\n%s\n%s", a, b)
	}
}

// TestLatencyChargesPrefillAndTokens: the stream takes at least the simulated time (a lower
// bound, which sleeping guarantees), and a cached prompt prefills less.
func TestLatencyChargesPrefillAndTokens(t *testing.T) {
	tasks := sim.Select(loadTasks(t), 1, 4)
	o := options(tasks)
	o.ErrorRate = 0
	o.TimeScale = 1
	o.Profile = sim.Profile{Name: "test", TokenLatency: time.Millisecond, PrefillRate: 2000, Overhead: 5 * time.Millisecond}
	_, c := newServer(t, o)
	task := tasks[0]
	start := time.Now()
	_, _, u := complete(t, c, task.Prompt, model.Params{MaxTokens: 40})
	took := time.Since(start)
	want := o.Profile.Overhead + time.Duration(u.CompletionTokens)*o.Profile.TokenLatency +
		time.Duration(float64(u.PromptTokens-u.CachedTokens)/o.Profile.PrefillRate*float64(time.Second))
	if took < want {
		t.Errorf("stream took %v, less than the simulated %v", took, want)
	}
	t.Logf("took %v for a simulated %v (%+v)", took, want, u)
}

// TestLogprobsAreServedWithoutATell: the streamed logprobs vary from token to token and the
// fault's root token is not singled out by a fixed value (its logprob is drawn; see
// TestTokenSurprisalHasTheStatedAUC for its distribution).
func TestLogprobsAreServedWithoutATell(t *testing.T) {
	tasks := sim.Select(loadTasks(t), 1, 9)
	o := options(tasks)
	o.ErrorRate = 1
	s, c := newServer(t, o)
	p, err := s.Plan(context.Background(), tasks[0].ID)
	if err != nil || p.First == nil {
		t.Fatalf("plan: %v %+v", err, p)
	}
	_, toks, _ := complete(t, c, tasks[0].Prompt, model.Params{Logprobs: 1})
	distinct := map[float64]bool{}
	for _, tok := range toks {
		if tok.Logprob >= 0 {
			t.Errorf("token %q: logprob %v is not negative", tok.Text, tok.Logprob)
		}
		distinct[tok.Logprob] = true
	}
	if len(toks) < 20 || len(distinct) < len(toks)/2 {
		t.Errorf("%d tokens with %d distinct logprobs: want them drawn per token", len(toks), len(distinct))
	}
}

// TestTokenSurprisalHasTheStatedAUC: over many draws (fixed seed), the share of (root, other)
// pairs in which the root token is the more surprising is the logprob AUC asked for.
func TestTokenSurprisalHasTheStatedAUC(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, auc := range []float64{0.5, 0.6, 0.75, 0.9} {
		const n = 20000
		wins := 0.0
		for range n {
			r, o := sim.TokenSurprisal(rng, true, auc), sim.TokenSurprisal(rng, false, auc)
			switch {
			case r > o:
				wins++
			case r == o:
				wins += 0.5
			}
		}
		// The standard error of a proportion near 0.5 over 20,000 pairs is 0.0035.
		if got := wins / n; math.Abs(got-auc) > 0.015 {
			t.Errorf("logprob-auc %v: measured AUC %.3f", auc, got)
		}
	}
}

func TestServesModelsAndRejectsUnknownPrompts(t *testing.T) {
	tasks := sim.Select(loadTasks(t), 1, 1)
	s, err := sim.NewServer(options(tasks))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	resp, err := http.Get(hs.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	var models struct{ Data []struct{ ID string } }
	json.NewDecoder(resp.Body).Decode(&models)
	resp.Body.Close()
	if len(models.Data) != 1 || models.Data[0].ID != sim.ModelName {
		t.Errorf("models = %+v", models)
	}
	c, _ := model.NewClient(hs.URL + "/v1")
	_, err = c.Complete(context.Background(), model.Request{Prompt: "int main() {"})
	if err == nil || !strings.Contains(err.Error(), "matches no task") {
		t.Errorf("unknown prompt: err = %v", err)
	}
	a := s.Assumptions()
	if a.Model != sim.ModelName || a.RealModel || a.ErrorRate != 0.17 || len(a.Notes) == 0 {
		t.Errorf("assumptions %+v", a)
	}
}

func TestNewServerRejectsBadOptions(t *testing.T) {
	tasks := sim.Select(loadTasks(t), 1, 1)
	for _, mut := range []func(*sim.Options){
		func(o *sim.Options) { o.ErrorRate = 1.5 },
		func(o *sim.Options) { o.LocalFrac, o.FarFrac = 0.7, 0.7 },
		func(o *sim.Options) { o.TimeScale = -1 },
		func(o *sim.Options) { o.Tasks = []sim.Task{} },
		func(o *sim.Options) { o.Clang = "/nonexistent/clang" },
	} {
		o := options(tasks)
		mut(&o)
		if _, err := sim.NewServer(o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
}

// TestUsageOfARolloutKilledEarly: with continuous usage stats (the client's default), a stream
// closed after a few tokens still reports its prompt tokens, as vLLM does.
func TestUsageOfARolloutKilledEarly(t *testing.T) {
	tasks := sim.Select(loadTasks(t), 1, 12)
	o := options(tasks)
	o.ErrorRate = 0
	_, c := newServer(t, o)
	s, err := c.Complete(context.Background(), model.Request{Prompt: tasks[0].Prompt})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s.Next(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	enc, _ := tokenizer.Get(tokenizer.Cl100kBase)
	want, _ := enc.Count(tasks[0].Prompt)
	if u := s.Usage(); u.PromptTokens != want || u.CompletionTokens < 3 {
		t.Errorf("usage after an early Close = %+v, want %d prompt tokens, ≥ 3 completion tokens", u, want)
	}
}

// TestLineByLineRequestsMeetThePlannedFault: a client that asks for one line at a time (stop
// "\n", each prompt new, no feedback) gets the planned fault when it reaches the root, and not
// before.
func TestLineByLineRequestsMeetThePlannedFault(t *testing.T) {
	var task sim.Task
	for _, x := range loadTasks(t) {
		if x.ID == "CPP/19" {
			task = x
		}
	}
	o := options([]sim.Task{task})
	o.ErrorRate, o.FixProb, o.NewFaultRate, o.PoolSize = 1, 1, 0, 0
	s, c := newServer(t, o)
	p, err := s.Plan(context.Background(), task.ID)
	if err != nil || p.First == nil {
		t.Fatalf("plan: %v %+v", err, p)
	}
	f := p.First
	stopAt := lineStart(f.Text, f.ErrLine+1)
	text := task.Prompt
	for len(text) < stopAt {
		line, _, _ := complete(t, c, text, model.Params{Stop: []string{"\n"}})
		text += line + "\n"
	}
	if text != f.Text[:len(text)] {
		t.Errorf("line by line the model wrote\n%s\nwant the planned fault's text\n%s", text, f.Text[:len(text)])
	}
	if out := s.Stats().Outcomes; out["repeat"]+out["fixed"] != 0 || out["first_fault"] == 0 || out["persist"] == 0 {
		t.Errorf("outcomes %v: want first attempts up to the root, the fault persisting after it, no retry", out)
	}
}

func TestRetryBeforeACommentLineContinuesTheComment(t *testing.T) {
	var task sim.Task
	cut := -1
	for _, tk := range loadTasks(t) {
		if i := strings.Index(tk.Solution, "\n/"); i > 0 {
			task, cut = tk, i+1
			break
		}
	}
	if cut < 0 {
		t.Fatal("no task whose solution has a line starting with '/'")
	}
	o := options([]sim.Task{task})
	o.ErrorRate = 0
	_, c := newServer(t, o)
	// The accepted prefix ends just before a comment line of the solution; the feedback comment
	// that follows it must not be mistaken for the start of that line.
	prompt := task.Prompt + task.Solution[:cut] + "// hydra-feedback: line 3: something\n"
	text, _, _ := complete(t, c, prompt, model.Params{})
	if text != task.Solution[cut:] {
		t.Errorf("retry before a comment line continued with %q…, want %q…", head(text), head(task.Solution[cut:]))
	}
}

func head(s string) string {
	if len(s) > 40 {
		return s[:40]
	}
	return s
}
