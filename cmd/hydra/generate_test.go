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
		{"not accepted exits 1 with diagnostics", []string{"--model-url", bad.URL, "--model", "m", "--max-attempts", "2", "--policy", "default", file}, "", 1, "", "undeclared identifier 'c'"},
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

// A run that is not accepted writes no program to stdout (`hydra generate … > file.c` must not
// write code that does not compile); --best-attempt keeps the attempt in a file.
func TestGenerateNotAcceptedWritesNoProgram(t *testing.T) {
	t.Setenv("HYDRA_API_KEY", "")
	file := writePrompt(t)
	bad := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Text: genBad, Chunk: 4}}})
	code, out, errs := runGen(t, "--model-url", bad.URL, "--model", "m", "--max-attempts", "1", file)
	if code != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q; want 1 and nothing\n%s", code, out, errs)
	}
	best := filepath.Join(t.TempDir(), "best.c")
	code, out, errs = runGen(t, "--model-url", bad.URL, "--model", "m", "--max-attempts", "1", "--best-attempt", best, file)
	got, err := os.ReadFile(best)
	if code != 1 || out != "" || err != nil || string(got) != genPrompt+genBad || !strings.Contains(errs, best) {
		t.Fatalf("exit %d, stdout %q, best %q (%v); want 1, nothing, the attempt in %s\n%s", code, out, got, err, best, errs)
	}
}

// With --suffix (the code after the insertion point, which closes the function), generation
// stops at the enclosing block as in the editors: the model's own closing brace is not kept, and
// an indented one does not indent the suffix's twice.
func TestGenerateSuffixStopsAtTheEnclosingBlock(t *testing.T) {
	t.Setenv("HYDRA_API_KEY", "")
	dir := t.TempDir()
	prompt := filepath.Join(dir, "s.cpp")
	suffix := filepath.Join(dir, "suffix.cpp")
	const pre = "struct S {\n  int twice(int x) {\n"
	const suf = "  }\n};\n"
	for p, text := range map[string]string{prompt: pre, suffix: suf} {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Text: "    return 2 * x;\n  }\n};\nint junk;\n", Chunk: 3}}})
	code, out, errs := runGen(t, "--model-url", model.URL, "--model", "m", "--suffix", suffix, prompt)
	if code != 0 || out != pre+"    return 2 * x;\n"+suf {
		t.Fatalf("exit %d, stdout %q; want the body once, closed by the suffix\n%s", code, out, errs)
	}
	// --stop-at-close=false keeps what the model wrote (and the doubled brace fails).
	code, _, errs = runGen(t, "--model-url", model.URL, "--model", "m", "--stop-at-close=false", "--suffix", suffix, prompt)
	if code != 1 {
		t.Fatalf("with --stop-at-close=false: exit %d, want 1 (the model's closing braces and the suffix's)\n%s", code, errs)
	}
}

// With --suffix the file is a whole document, as in the editors: an error it had before,
// elsewhere (not the model's), is excused and said once on stderr at its line in the output;
// the generation is accepted. With --json it is listed under "preexisting".
func TestGenerateSuffixExcusesErrorsThatWereThere(t *testing.T) {
	t.Setenv("HYDRA_API_KEY", "")
	dir := t.TempDir()
	prompt := filepath.Join(dir, "p.c")
	suffix := filepath.Join(dir, "suffix.c")
	const pre = "int f(void) {\n"
	const suf = "}\nint g(void) { return not_declared_anywhere; }\n"
	for p, text := range map[string]string{prompt: pre, suffix: suf} {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Text: "  return 1;\n}\nint junk;\n", Chunk: 3}}})
	code, out, errs := runGen(t, "--model-url", model.URL, "--model", "m", "--suffix", suffix, prompt)
	if code != 0 || out != pre+"  return 1;\n"+suf {
		t.Fatalf("exit %d, stdout %q; want the body accepted beside the error that was there\n%s", code, out, errs)
	}
	if want := prompt + ":4:"; !strings.Contains(errs, want) || !strings.Contains(errs, "there before") || !strings.Contains(errs, "not_declared_anywhere") {
		t.Errorf("stderr does not name the error that was there at %s:\n%s", want, errs)
	}
	if n := len(model.Calls()); n != 1 {
		t.Errorf("%d model requests, want 1: the error that was there spends no attempt", n)
	}
	got, errs := runGenJSON(t, "--model-url", model.URL, "--model", "m", "--json", "--suffix", suffix, prompt)
	if !got.OK || len(got.Preexisting) != 1 || got.Preexisting[0].Line != 4 {
		t.Errorf("json ok=%v preexisting=%+v; want one at line 4\n%s", got.OK, got.Preexisting, errs)
	}
}
