package engine

import (
	"context"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/hydra-lsp/hydra/checkers/wholefile"
	"github.com/hydra-lsp/hydra/sim"
)

// TestSearchOnSimulatedModelTasks runs whole searches on benchmark tasks whose first attempt
// has an injected static error, with the simulated model (sim, a stand-in for a model)
// and the real Clang checker, and checks every accepted program with an independent
// whole-file `clang-19 -fsyntax-only`. HYDRA_FULL=1 runs more tasks.
func TestSearchOnSimulatedModelTasks(t *testing.T) {
	dir, err := sim.DataDir()
	if err != nil {
		t.Fatalf("the shared data (../shared/data) is needed: %v", err)
	}
	tasks, err := sim.LoadTasks(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 4
	if os.Getenv("HYDRA_FULL") != "" {
		n = 40
	}
	sel := sim.Select(tasks, n, 3)
	opts := sim.DefaultOptions()
	opts.Tasks, opts.TimeScale, opts.ErrorRate = sel, 0, 1
	h, err := sim.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	ck := newRecorder(newChecker(t))
	gen := newClient(t, srv.URL+"/v1")
	accepted := 0
	for _, task := range sel {
		res, err := Search(context.Background(), ck, gen, Request{Prefix: task.Prompt, Filename: task.Filename(),
			Flags: task.Flags(), Model: sim.ModelName})
		if err != nil {
			t.Fatalf("%s: %v", task.ID, err)
		}
		t.Logf("%s: ok=%v reason=%s attempts=%d rollback lines=%v tokens=%d resumes=%d", task.ID, res.OK, res.Reason,
			res.Stats.Attempts, res.Stats.RollbackLines, res.Stats.OutputTokens, res.Stats.CheckpointResumes)
		if !res.OK {
			if len(res.Diagnostics) == 0 || res.Reason == "" {
				t.Errorf("%s: failed search without diagnostics or reason: %+v", task.ID, res)
			}
			continue
		}
		accepted++
		if res.Stats.Attempts < 2 {
			t.Errorf("%s: accepted in %d attempt(s) although the first attempt had an injected error", task.ID, res.Stats.Attempts)
		}
		v, err := wholefile.Check(context.Background(), task.Prompt+res.Text, wholefile.Options{Name: task.Filename(), Flags: task.Flags()})
		if err != nil {
			t.Fatal(err)
		}
		if !v.OK {
			t.Errorf("%s: the engine accepted a program whole-file clang rejects:\n%s", task.ID, v.Output)
		}
	}
	if accepted == 0 {
		t.Error("no task was repaired")
	}
	if left := ck.waitGone(); len(left) > 0 {
		t.Errorf("checker processes left: %v", left)
	}
}
