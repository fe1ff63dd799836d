package sim_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/hydra-lsp/hydra/engine/model"
	"github.com/hydra-lsp/hydra/sim"
)

// TestFreshSharesPlansButNotHistory: a benchmark gives each policy a Fresh copy of one
// simulator; each copy's first request for a task must be a first attempt (the planned fault),
// even after another copy served the same prompt.
func TestFreshSharesPlansButNotHistory(t *testing.T) {
	tasks := sim.Select(humanEval(t), 1, 1)
	o := options(tasks)
	o.ErrorRate = 1
	base, err := sim.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := base.Prepare(context.Background(), nil, 1); err != nil {
		t.Fatal(err)
	}
	plan, err := base.Plan(context.Background(), tasks[0].ID)
	if err != nil || plan.First == nil {
		t.Fatalf("no planned fault: %v", err)
	}
	a, b := base.Fresh(), base.Fresh()
	if pa, _ := a.Plan(context.Background(), tasks[0].ID); pa != plan {
		t.Error("a fresh copy made its own plan instead of sharing it")
	}
	first := func(s *sim.Server) string {
		hs := newHTTP(t, s)
		c, err := model.NewClient(hs + "/v1")
		if err != nil {
			t.Fatal(err)
		}
		text, _, _ := complete(t, c, tasks[0].Prompt, model.Params{})
		return text
	}
	ta := first(a)
	first(a) // the same prompt again is a retry for a
	tb := first(b)
	if ta != tb || ta == tasks[0].Solution {
		t.Errorf("the fresh copies' first attempts differ or have no fault")
	}
	if got := a.Stats().Outcomes["first_fault"]; got != 1 {
		t.Errorf("copy a: %d first faults, want 1 (its second request is a retry)", got)
	}
	if got := b.Stats().Outcomes["first_fault"]; got != 1 {
		t.Errorf("copy b: %d first faults, want 1", got)
	}
	if base.Stats().Requests != 0 {
		t.Errorf("the base served %d requests, want none", base.Stats().Requests)
	}
}

// newHTTP serves s on a loopback port for the test and returns its URL.
func newHTTP(t *testing.T, s *sim.Server) string {
	t.Helper()
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs.URL
}

// TestRetriesDrawCommonRandomNumbers: two Fresh copies that regenerate the same planned fault's
// root from different rollback points (different prompts) meet the same outcome on their k-th
// retry: the draws follow the fault and the count, not the prompt, so paired policies see the
// same luck.
func TestRetriesDrawCommonRandomNumbers(t *testing.T) {
	longSequential(t)
	var task sim.Task
	for _, x := range loadTasks(t) {
		if x.ID == "CPP/19" { // a far fault (renamed declaration) with the seed of options
			task = x
		}
	}
	o := options([]sim.Task{task})
	o.ErrorRate, o.FixProb, o.NewFaultRate, o.PoolSize = 1, 0.5, 0, 0
	base, err := sim.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	p, err := base.Plan(context.Background(), task.ID)
	if err != nil || p.First == nil {
		t.Fatalf("plan: %v, %+v", err, p)
	}
	f := p.First
	outcomes := func(s *sim.Server, cut int) []bool {
		c, err := model.NewClient(newHTTP(t, s) + "/v1")
		if err != nil {
			t.Fatal(err)
		}
		complete(t, c, task.Prompt, model.Params{}) // the first attempt, with the fault
		var fixed []bool
		for range 8 {
			prompt := f.Text[:cut] + "// hydra-feedback: line 3: error: " + f.Diag + "\n"
			text, _, _ := complete(t, c, prompt, model.Params{})
			fixed = append(fixed, f.Text[:cut]+text == task.Text())
		}
		return fixed
	}
	atRoot := lineStart(f.Text, f.RootLine)
	if atRoot > f.Diff || len(task.Prompt) >= atRoot {
		t.Fatalf("the root's line starts at %d, the fault at %d, the prompt ends at %d: the premise does not hold", atRoot, f.Diff, len(task.Prompt))
	}
	a := outcomes(base.Fresh(), atRoot)
	b := outcomes(base.Fresh(), len(task.Prompt))
	if !slices.Equal(a, b) {
		t.Errorf("k-th retries differ between rollback points: %v vs %v", a, b)
	}
	if !slices.Contains(a, true) || !slices.Contains(a, false) {
		t.Errorf("with fix 0.5, 8 retries all came out the same: %v", a)
	}
}
