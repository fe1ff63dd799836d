package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hydra-lsp/hydra/engine"
	"github.com/hydra-lsp/hydra/engine/model/modeltest"
)

// These tests run `hydra generate` in-process against the real Clang checker (built by
// `make build`) and the scripted stand-in model server of engine/model/modeltest.

const genPrompt = "#include <stdio.h>\n\n// add returns a + b.\nint add(int a, int b) {\n"
const genGood = "  return a + b;\n}\n\nint main(void) {\n  printf(\"%d\\n\", add(1, 2));\n  return 0;\n}\n"
const genBad = "  return a + c;\n}\n"

func writePrompt(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "add.c")
	if err := os.WriteFile(p, []byte(genPrompt), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runGen(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := generate(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestGenerateCLI(t *testing.T) {
	t.Setenv("HYDRA_API_KEY", "")
	file := writePrompt(t)
	repair := modeltest.Script{Rules: []modeltest.Rule{
		{PromptContains: engine.FeedbackMarker, Text: genGood, Chunk: 4},
		{Text: genBad, Chunk: 4},
	}}
	always := modeltest.Script{Rules: []modeltest.Rule{{Text: genBad, Chunk: 4}}}
	good := modeltest.NewServer(t, repair)
	bad := modeltest.NewServer(t, always)
	down := modeltest.NewServer(t, repair)
	down.Close()

	cases := []struct {
		name     string
		args     []string
		env      string // HYDRA_MODEL_URL
		wantCode int
		wantOut  string // exact stdout, when set
		wantErr  string // in stderr
	}{
		{"repaired program is printed whole", []string{"--model-url", good.URL, "--model", "m", "--policy", "default", file}, "", 0, genPrompt + genGood, "accepted"},
		{"clang flags after --", []string{"--model-url", good.URL, "--model", "m", "--", "-std=c11", file}, "", 0, genPrompt + genGood, ""},
		{"prompt file before --", []string{"--model-url", good.URL, "--model", "m", file, "--", "-std=c11"}, "", 0, genPrompt + genGood, ""},
		{"model url from the environment", []string{"--model", "m", file}, good.URL, 0, genPrompt + genGood, ""},
		{"not accepted exits 1 with diagnostics", []string{"--model-url", bad.URL, "--model", "m", "--max-attempts", "2", "--policy", "default", file}, "", 1, genPrompt + genBad, "undeclared identifier 'c'"},
		{"model server down exits 2", []string{"--model-url", down.URL, "--model", "m", "--wait", "0s", file}, "", 2, "", "model server"},
		{"missing prompt file exits 2", []string{"--model-url", good.URL, filepath.Join(t.TempDir(), "nope.c")}, "", 2, "", "no such file"},
		{"no prompt file exits 2", []string{"--model-url", good.URL}, "", 2, "", "no PROMPT_FILE"},
		{"no model url exits 2", []string{file}, "", 2, "", "--model-url"},
		{"unknown policy exits 2", []string{"--model-url", good.URL, "--policy", "nosuch", file}, "", 2, "", "unknown policy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("HYDRA_MODEL_URL", c.env)
			code, out, errs := runGen(t, c.args...)
			if code != c.wantCode {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, c.wantCode, errs)
			}
			if c.wantOut != "" && out != c.wantOut {
				t.Errorf("stdout = %q, want %q", out, c.wantOut)
			}
			if !strings.Contains(errs, c.wantErr) {
				t.Errorf("stderr %q does not mention %q", errs, c.wantErr)
			}
		})
	}

	t.Run("json output", func(t *testing.T) {
		code, out, errs := runGen(t, "--model-url", good.URL, "--model", "m", "--json", file)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var got struct {
			Text  string       `json:"text"`
			OK    bool         `json:"ok"`
			Stats engine.Stats `json:"stats"`
			Trace engine.Trace `json:"trace"`
		}
		dec := json.NewDecoder(strings.NewReader(out))
		if err := dec.Decode(&got); err != nil {
			t.Fatalf("stdout is not one JSON object: %v\n%s", err, out)
		}
		if dec.More() {
			t.Error("more than one JSON value on stdout")
		}
		if !got.OK || got.Text != genPrompt+genGood || got.Stats.Attempts != 2 || len(got.Trace.Nodes) == 0 || len(got.Trace.Rollouts) != 2 {
			t.Errorf("json = %+v", got)
		}
	})
}
