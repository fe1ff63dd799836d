package bench

import (
	"testing"

	"github.com/hydra-lsp/hydra/engine"
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
