package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTraceDrawsAFileAndRejectsBadInput: `hydra trace` writes the picture next to the trace (or
// to -o, given before or after the file) and answers a file without a search tree with exit 2.
func TestTraceDrawsAFileAndRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "run.json")
	trace := `{"text": "int main() {}\n", "trace": {"nodes": [
	  {"id": 0, "parent": -1, "kind": "root", "off": 10, "line": 1, "rollout": 0},
	  {"id": 1, "parent": 0, "kind": "error", "off": 12, "line": 2, "diag": "use of undeclared identifier 'x'", "rollout": 1, "at_ms": 40},
	  {"id": 2, "parent": 0, "kind": "done", "off": 14, "line": 2, "rollout": 2, "at_ms": 90}],
	 "rollouts": [{"id": 1, "start": 0, "tokens": 3, "outcome": "error", "stream": [{"at_ms": 20, "off": 12}]},
	              {"id": 2, "start": 0, "tokens": 2, "outcome": "accepted", "start_ms": 50, "stream": [{"at_ms": 80, "off": 14}]}]}}`
	if err := os.WriteFile(in, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	if code := traceMain([]string{in}, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	svg, err := os.ReadFile(filepath.Join(dir, "run.svg"))
	if err != nil || !strings.Contains(string(svg), "use of undeclared identifier") || !strings.Contains(string(svg), ">attempt 2<") {
		t.Errorf("run.svg: %v", err)
	}
	out := filepath.Join(dir, "other.svg")
	if code := traceMain([]string{in, "-o", out}, &stderr); code != 0 {
		t.Fatalf("-o after the file: exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(out); err != nil {
		t.Error(err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"text": "no tree"}`), 0o644)
	stderr.Reset()
	if code := traceMain([]string{bad}, &stderr); code != 2 || !strings.Contains(stderr.String(), "no search tree") {
		t.Errorf("bad file: exit %d, %q", code, stderr.String())
	}
	if code := traceMain(nil, &stderr); code != 2 {
		t.Errorf("no file: exit %d", code)
	}
}
