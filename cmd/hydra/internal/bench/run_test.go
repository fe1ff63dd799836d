package bench

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hydra-lsp/hydra/engine"
	"github.com/hydra-lsp/hydra/engine/model"
)

func TestRestartBytesSumsTheRepairsStartsBeyondThePrefix(t *testing.T) {
	tr := &engine.Trace{
		Nodes: []engine.TraceNode{{ID: 0, Off: 100}, {ID: 1, Off: 150}, {ID: 2, Off: 300}},
		Rollouts: []engine.TraceRollout{
			{ID: 2, Start: 2}, {ID: 0, Start: 0}, {ID: 1, Start: 1}, {ID: 3, Start: 0},
		},
	}
	// The first rollout (id 0) is not a repair; the others start 50, 200 and 0 bytes past the prefix.
	if got := restartBytes(tr, 100); got != 250 {
		t.Errorf("restartBytes = %d, want 250", got)
	}
	if got := restartBytes(nil, 100); got != 0 {
		t.Errorf("restartBytes(nil) = %d", got)
	}
}

func TestProgramAppendsTheTestsOnlyWithoutAMain(t *testing.T) {
	tk := Task{Test: "int main(){}\n"}
	if got := tk.Program("int f(){return 1;}\n"); got != "int f(){return 1;}\n\nint main(){}\n" {
		t.Errorf("without main: %q", got)
	}
	if got := tk.Program("int f(){return 1;}\nint  main (void){}\n"); got != "int f(){return 1;}\nint  main (void){}\n" {
		t.Errorf("with main: %q", got)
	}
	if got := (Task{}).Program("x"); got != "x" {
		t.Errorf("no tests: %q", got)
	}
}

// failingModel answers every request with an error (Execute's order is all the test looks at).
type failingModel struct{}

func (failingModel) Complete(context.Context, model.Request) (model.Stream, error) {
	return nil, errors.New("no model in this test")
}

func TestEachTaskStartsFromAnotherPolicy(t *testing.T) {
	pols := []string{"tokpol", "local-first", "posthoc"}
	var order []string
	env := Env{
		// One task at a time, so the Generator's calls come in the order the runs are made.
		Generator: func(name string) model.Generator { order = append(order, name); return failingModel{} },
		Tasks:     []Task{{ID: "a", Prompt: "int f(void) {\n"}, {ID: "b", Prompt: "int g(void) {\n"}, {ID: "c", Prompt: "int h(void) {\n"}, {ID: "d", Prompt: "int k(void) {\n"}},
	}
	runs, err := Execute(context.Background(), Config{Policies: pols, Parallel: 1, MaxAttempts: 1, MaxTokens: 16}, env, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"tokpol", "local-first", "posthoc",
		"local-first", "posthoc", "tokpol",
		"posthoc", "tokpol", "local-first",
		"tokpol", "local-first", "posthoc",
	}
	if strings.Join(order, ",") != strings.Join(want, ",") {
		t.Errorf("runs were made in the order\n%v\nwant\n%v", order, want)
	}
	// The result is still task by task, policies in the configuration's order.
	for i, r := range runs {
		if r.Task != env.Tasks[i/len(pols)].ID || r.Policy != pols[i%len(pols)] {
			t.Errorf("runs[%d] = %s/%s, want %s/%s", i, r.Task, r.Policy, env.Tasks[i/len(pols)].ID, pols[i%len(pols)])
		}
	}
}
