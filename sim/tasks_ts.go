package sim

import (
	"bytes"
	_ "embed" // humaneval-ts.jsonl.gz
	"encoding/json"
	"fmt"
)

// SourceHumanEvalTS is Task.Source of the TypeScript tasks.
const SourceHumanEvalTS = "humaneval-ts"

// humanEvalTS is HumanEval in TypeScript: MultiPL-E's typed signatures, docstrings and tests
// with HumanEval-X's JavaScript solutions, the tasks tsc and node accept (data/README.md says how
// it was made and by which command).
//
//go:embed data/humaneval-ts.jsonl.gz
var humanEvalTS []byte

// LoadTypeScriptTasks returns the TypeScript tasks (Source SourceHumanEvalTS, Lang
// LangTypeScript), in file order. They ship with Hydra; LoadTasks does not include them, so that
// the C/C++ figures stay what they were.
func LoadTypeScriptTasks() ([]Task, error) {
	var tasks []Task
	err := readJSONLFrom(bytes.NewReader(humanEvalTS), "sim/data/humaneval-ts.jsonl.gz", func(line []byte) error {
		var t Task
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&t); err != nil {
			return err
		}
		if t.ID == "" || t.Prompt == "" || t.Solution == "" || t.Lang != LangTypeScript {
			return fmt.Errorf("task %q: want an id, a prompt, a solution and lang %q", t.ID, LangTypeScript)
		}
		t.Source = SourceHumanEvalTS
		tasks = append(tasks, t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return unambiguous(tasks), nil
}
