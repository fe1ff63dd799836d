package sim

import (
	"strings"
	"testing"
)

// TestTypeScriptTasks: the shipped TypeScript tasks are TypeScript tasks (a .ts file, no clang
// flags), each prompt ends in the function's head and the tests call it.
func TestTypeScriptTasks(t *testing.T) {
	ts, err := LoadTypeScriptTasks()
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) < 40 {
		t.Fatalf("%d TypeScript tasks", len(ts))
	}
	for _, task := range ts {
		if task.Lang != LangTypeScript || task.Source != SourceHumanEvalTS || task.Flags() != nil ||
			task.Filename() != task.ID+".ts" {
			t.Fatalf("%s: lang %q source %q flags %v file %q", task.ID, task.Lang, task.Source, task.Flags(), task.Filename())
		}
		head := task.Prompt[strings.LastIndex(strings.TrimSuffix(task.Prompt, "\n"), "\n")+1:]
		name := strings.TrimSuffix(strings.SplitN(strings.TrimPrefix(head, "function "), "(", 2)[0], " ")
		if !strings.HasPrefix(head, "function ") || !strings.HasSuffix(head, "{\n") ||
			!strings.Contains(task.Test, "let candidate = "+name+";") {
			t.Errorf("%s: prompt ends %q, tests %q", task.ID, head, task.Test[:min(len(task.Test), 120)])
		}
	}
}
