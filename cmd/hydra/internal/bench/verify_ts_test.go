package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/cmd/hydra/internal/sandbox"
	"github.com/hydra-lsp/hydra/sim"
)

// tsTask returns the shipped TypeScript task id as a benchmark task.
func tsTask(t *testing.T, id string) (Task, sim.Task) {
	t.Helper()
	ts, err := sim.LoadTypeScriptTasks()
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range ts {
		if st.ID == id {
			return FromSim([]sim.Task{st})[0], st
		}
	}
	t.Fatalf("no TypeScript task %s", id)
	return Task{}, sim.Task{}
}

// TestTypeScriptChecksAgreeWithTSC: the static check is tsc's verdict, and the functional check
// compiles with tsc and runs node on the output in the sandbox: the reference solution passes,
// a wrong body fails its tests, a body with a type error does not compile, and the tests see
// no host file.
func TestTypeScriptChecksAgreeWithTSC(t *testing.T) {
	if err := (&sandbox.Sandbox{}).Available(context.Background()); err != nil {
		t.Fatal(err) // no skip that would hide it
	}
	task, st := tsTask(t, "HumanEval_53_add")
	if !strings.HasSuffix(task.Filename, "/HumanEval_53_add/HumanEval_53_add.ts") || task.Flags != nil {
		t.Fatalf("task file %q flags %q", task.Filename, task.Flags)
	}
	v := &Verifier{Execute: true, CPUSeconds: 5, MemoryMB: 1024, Wall: 20 * time.Second}
	tests := []struct {
		name, body   string
		static, pass bool
		why          string
	}{
		{"the reference passes", st.Solution, true, true, ""},
		{"a wrong answer fails the tests", "  return x - y;\n}\n", true, false, "run: exit status 1"},
		{"a type error does not compile", "  return `${x + y}`;\n}\n", false, false, "compile: ../box/prog.ts(7,3): error TS2322"},
		{"an endless loop is stopped", "  for (;;) {}\n}\n", true, false, "run:"},
		{"the tests read no host file", "  const fs = (globalThis as any).process.getBuiltinModule('node:fs');\n  return fs.existsSync('/etc/passwd') ? 0 : x + y;\n}\n", true, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			program := task.Prompt + tc.body
			if ok, msg := v.Static(context.Background(), task, program); ok != tc.static {
				t.Errorf("Static = %v (%s), want %v", ok, msg, tc.static)
			}
			ok, why := v.RunTests(context.Background(), task, program)
			if ok != tc.pass || !strings.HasPrefix(why, tc.why) {
				t.Errorf("RunTests = %v, %q; want %v, %q…", ok, why, tc.pass, tc.why)
			}
		})
	}
}
