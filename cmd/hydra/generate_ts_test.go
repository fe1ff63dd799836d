package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hydra-lsp/hydra/engine"
	"github.com/hydra-lsp/hydra/engine/model/modeltest"
)

// These tests run `hydra generate` in-process on .ts prompts: the language seam (checkers/lang)
// picks the real TypeScript checker (TypeScript 7's tsc, installed by scripts/install-deps.sh)
// and TypeScript's chunker; the model is the scripted stand-in of engine/model/modeltest.

// writeTS writes the files of one generate run (name → text) into a fresh directory and returns
// their paths.
func writeTS(t *testing.T, files map[string]string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	paths := map[string]string{}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		paths[name] = p
	}
	return paths
}

// A .ts prompt with --suffix: the first attempt has a type error inside the function body
// (tsc's TS2322, reported when the suffix closes the function), the repair prompted with it
// is right; generation stops at the enclosing block, so the model's own '}' is not kept.
func TestGenerateTypeScriptRepairs(t *testing.T) {
	t.Setenv("HYDRA_API_KEY", "")
	const pre = "// twice returns x doubled, as a string.\nfunction twice(x: number): string {\n"
	const suf = "}\n\nexport const four: string = twice(2);\n"
	const bad = "  const y: number = x * 2;\n  return y;\n}\n"
	const good = "  return String(x * 2);\n}\n"
	f := writeTS(t, map[string]string{"twice.ts": pre, "suffix.ts": suf})
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
		{PromptContains: engine.FeedbackMarker, Text: good, Chunk: 4},
		{Text: bad, Chunk: 4},
	}})
	code, out, errs := runGen(t, "--model-url", srv.URL, "--model", "m", "--policy", "default", "--suffix", f["suffix.ts"], f["twice.ts"])
	// The repair rolls back to the failing line: the first attempt's line 3 is kept.
	if want := pre + "  const y: number = x * 2;\n  return String(x * 2);\n" + suf; code != 0 || out != want {
		t.Fatalf("exit %d, stdout %q; want 0 and %q\n%s", code, out, want, errs)
	}
	calls := srv.Calls()
	if len(calls) != 2 {
		t.Fatalf("%d model requests, want 2 (the attempt and its repair)\n%s", len(calls), errs)
	}
	// The repair's prompt carries tsc's diagnostic on the first attempt's line 4 as a comment.
	if p := calls[1].Prompt; !strings.Contains(p, "// "+engine.FeedbackMarker) || !strings.Contains(p, "line 4") ||
		!strings.Contains(p, "not assignable to type 'string'") {
		t.Errorf("repair prompt has no feedback on line 4's type error:\n%s", p)
	}
	if !strings.Contains(errs, "not assignable to type 'string'") {
		t.Errorf("stderr does not report the first attempt's error:\n%s", errs)
	}

	// --stop-at-close=false keeps the model's closing brace, and the suffix's is one too many.
	srv2 := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Text: good, Chunk: 4}}})
	code, out, errs = runGen(t, "--model-url", srv2.URL, "--model", "m", "--max-attempts", "1", "--stop-at-close=false",
		"--suffix", f["suffix.ts"], f["twice.ts"])
	if code != 1 || out != "" {
		t.Fatalf("with --stop-at-close=false: exit %d, stdout %q; want 1 and nothing\n%s", code, out, errs)
	}
}

// An error the checker reports inside the user's prompt ends the search as prefix_error only
// when the prompt (and suffix) alone have it; one that the generated text causes there (a
// redeclaration, reported by tsc at the prompt's declaration first) is repaired like any other.
// With --suffix the file is a whole document: errors it had before are excused instead.
func TestGenerateTypeScriptPrefixErrors(t *testing.T) {
	t.Setenv("HYDRA_API_KEY", "")
	t.Run("the prompt's own error", func(t *testing.T) {
		const pre = "const n: number = \"one\";\nfunction twice(x: number): number {\n"
		f := writeTS(t, map[string]string{"own.ts": pre})
		srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Text: "  return 2 * x;\n}\n", Chunk: 4}}})
		code, out, errs := runGen(t, "--model-url", srv.URL, "--model", "m", f["own.ts"])
		if code != 1 || out != "" || !strings.Contains(errs, "prefix_error") ||
			!strings.Contains(errs, f["own.ts"]+":1:7: error: Type 'string' is not assignable to type 'number'") {
			t.Fatalf("exit %d, stdout %q; want 1, nothing, prefix_error at line 1\n%s", code, out, errs)
		}
		if n := len(srv.Calls()); n != 1 {
			t.Errorf("%d model requests, want 1 (no repair of the user's own error)", n)
		}
	})
	t.Run("with --suffix, errors that were there are excused", func(t *testing.T) {
		// The file is a whole document (engine Baseline): tsc's errors in it before the
		// generation, both of them, are not the model's.
		const pre = "const n: number = \"one\";\nfunction twice(x: number): number {\n"
		const suf = "}\nconst bad: string = 1;\n"
		f := writeTS(t, map[string]string{"there.ts": pre, "suffix.ts": suf})
		srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Text: "  return 2 * x;\n}\n", Chunk: 4}}})
		code, out, errs := runGen(t, "--model-url", srv.URL, "--model", "m", "--suffix", f["suffix.ts"], f["there.ts"])
		if code != 0 || out != pre+"  return 2 * x;\n"+suf {
			t.Fatalf("exit %d, stdout %q; want the body accepted beside the errors that were there\n%s", code, out, errs)
		}
		for _, want := range []string{f["there.ts"] + ":1:7: error (there before", f["there.ts"] + ":5:7: error (there before"} {
			if !strings.Contains(errs, want) {
				t.Errorf("stderr does not say %q:\n%s", want, errs)
			}
		}
		if n := len(srv.Calls()); n != 1 {
			t.Errorf("%d model requests, want 1: errors that were there spend no attempt", n)
		}
	})
	t.Run("an error the generated text causes in the prompt", func(t *testing.T) {
		const pre = "let counter = 0;\n"
		f := writeTS(t, map[string]string{"count.ts": pre})
		srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
			{PromptContains: engine.FeedbackMarker, Text: "counter += 1;\n", Chunk: 4},
			{Text: "let counter = 1;\n", Chunk: 4},
		}})
		code, out, errs := runGen(t, "--model-url", srv.URL, "--model", "m", "--policy", "default", f["count.ts"])
		if code != 0 || out != pre+"counter += 1;\n" {
			t.Fatalf("exit %d, stdout %q; want 0 and the repair\n%s", code, out, errs)
		}
		if n := len(srv.Calls()); n != 2 {
			t.Errorf("%d model requests, want 2", n)
		}
		if !strings.Contains(errs, "Cannot redeclare block-scoped variable 'counter'") {
			t.Errorf("stderr does not report the redeclaration:\n%s", errs)
		}
	})
	t.Run("compiler flags do not apply", func(t *testing.T) {
		f := writeTS(t, map[string]string{"x.ts": "let a = 1;\n"})
		code, _, errs := runGen(t, "--model-url", "http://127.0.0.1:1/v1", "--model", "m", f["x.ts"], "--", "-std=c11")
		if code != 2 || !strings.Contains(errs, "tsconfig.json") {
			t.Fatalf("exit %d; want 2 and a word on tsconfig.json\n%s", code, errs)
		}
	})
}

// The project's tsconfig.json is the configuration generation is checked under, as tsc -p
// applies it: with strict off, an untyped parameter is accepted; without a tsconfig.json
// (TypeScript 7's defaults, strict on) the same text is rejected.
func TestGenerateTypeScriptUsesTheProjectsTsconfig(t *testing.T) {
	t.Setenv("HYDRA_API_KEY", "")
	const pre = "function id(x) {\n"
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Text: "  return x;\n}\n", Chunk: 4}}})
	loose := writeTS(t, map[string]string{"id.ts": pre,
		"tsconfig.json": `{"compilerOptions": {"strict": false, "noEmit": true}, "include": ["*.ts"]}`})
	code, out, errs := runGen(t, "--model-url", srv.URL, "--model", "m", "--max-attempts", "1", loose["id.ts"])
	if code != 0 || out != pre+"  return x;\n}\n" {
		t.Fatalf("with strict off: exit %d, stdout %q; want 0 and the program\n%s", code, out, errs)
	}
	strict := writeTS(t, map[string]string{"id.ts": pre})
	code, _, errs = runGen(t, "--model-url", srv.URL, "--model", "m", "--max-attempts", "1", strict["id.ts"])
	if code != 1 || !strings.Contains(errs, "implicitly has an 'any' type") {
		t.Fatalf("without tsconfig.json: exit %d; want 1 and tsc's implicit-any error\n%s", code, errs)
	}
}
