package lsp_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/engine/model/modeltest"
	"github.com/hydra-lsp/hydra/lsp"
)

// "Generate with repair" on a TypeScript document: the language seam (checkers/lang) gives the
// document TypeScript's checker (TypeScript 7's tsc, installed by scripts/install-deps.sh) and
// cutter. The scripted model's first attempt has a type error in the function body (tsc's
// TS2322, reported when the document's own '}' closes the function); the repair, prompted with
// it as a comment, is accepted, and the document ends with it.
func TestGenerateTypeScriptDocument(t *testing.T) {
	const (
		pre  = "// twice returns x doubled, as a string.\nfunction twice(x: number): string {\n"
		suf  = "}\n\nexport const four: string = twice(2);\n"
		bad  = "  const y: number = x * 2;\n  return y;\n}\n"
		good = "  return String(x * 2);\n}\n"
	)
	model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
		{PromptContains: "hydra-feedback:", Text: good, Chunk: 4, DelayMS: 5},
		{PromptSuffix: pre, Text: bad, Chunk: 4, DelayMS: 5},
	}})
	c := startServer(t, clientOptions{initOptions: map[string]any{"hydra": map[string]any{"modelUrl": model.URL}}})
	uri := "file://" + filepath.Join(t.TempDir(), "twice.ts")
	c.open(uri, "typescript", pre+suf)

	// The cursor at the end of the signature: the code goes on the line after it.
	at := position(pre, len(pre)-1)
	sum := runCodeAction(t, c, uri, lsp.Range{Start: at, End: at})
	t.Logf("summary: %+v", sum)
	// The repair rolls back to the failing line: the first attempt's first line stays.
	gen := "  const y: number = x * 2;\n  return String(x * 2);\n"
	if got := c.text(uri); got != pre+gen+suf {
		t.Fatalf("document after generation:\n%s\nwant:\n%s", got, pre+gen+suf)
	}
	if !sum.OK || sum.Reason != "accepted" || sum.Text != gen || sum.Attempts != 2 {
		t.Fatalf("summary %+v, want ok, accepted text %q, 2 attempts", sum, gen)
	}
	calls := model.Calls()
	if len(calls) != 2 || !strings.Contains(calls[1].Prompt, "not assignable to type 'string'") {
		t.Fatalf("%d model requests; want 2, the second with tsc's diagnostic as feedback", len(calls))
	}
	c.mu.Lock()
	removed := ""
	for _, e := range c.edits {
		removed += e.Deleted
	}
	c.mu.Unlock()
	if strings.Contains(c.text(uri), "return y;") || (removed != "" && !strings.Contains(removed, "return y;")) {
		t.Errorf("the rejected line is in the document, or an edit removed something else (%q)", removed)
	}
}

// A document whose language Hydra does not serve gets no "Generate with repair", and the command
// says which languages it takes.
func TestGenerateOtherLanguageIsRefused(t *testing.T) {
	c := startServer(t, clientOptions{initOptions: map[string]any{"hydra": map[string]any{"modelUrl": "http://127.0.0.1:1/v1"}}})
	uri := "file://" + filepath.Join(t.TempDir(), "x.py")
	c.open(uri, "python", "def f():\n    pass\n")
	var actions []lsp.CodeAction
	if err := c.call("textDocument/codeAction", lsp.CodeActionParams{
		TextDocument: lsp.TextDocumentIdentifier{URI: uri}, Range: lsp.Range{},
		Context: lsp.CodeActionContext{Only: []string{"source"}}}, &actions); err != nil {
		t.Fatal(err)
	}
	if len(actions) != 0 {
		t.Errorf("code actions %+v on a Python document", actions)
	}
	if _, err := c.generate(uri, lsp.Position{}); err == nil || !strings.Contains(err.Error(), "TypeScript") {
		t.Errorf("generate on a Python document: %v; want a refusal naming the languages served", err)
	}
}

// Errors that were in a TypeScript document before generation are not the model's: with two of
// them after the insertion point (tsc reports both), the right body is accepted at once.
func TestTypeScriptErrorsThatWereThereBefore(t *testing.T) {
	const (
		pre  = "function twice(x: number): number {\n"
		suf  = "}\n\nconst bad: string = 1;\nconst worse: number = \"two\";\n"
		body = "  return 2 * x;\n}\n"
	)
	model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{PromptSuffix: pre, Text: body, Chunk: 4}}})
	c := startServer(t, clientOptions{initOptions: map[string]any{"hydra": map[string]any{"modelUrl": model.URL}}})
	uri := "file://" + filepath.Join(t.TempDir(), "twice.ts")
	c.open(uri, "typescript", pre+suf)
	at := position(pre, len(pre)-1)
	sum := runCodeAction(t, c, uri, lsp.Range{Start: at, End: at})
	if got := c.text(uri); !sum.OK || sum.Attempts != 1 || got != pre+"  return 2 * x;\n"+suf {
		t.Fatalf("summary %+v, document:\n%s\nwant the body accepted at once", sum, got)
	}
}

// Inline completion in a TypeScript document: the item is the repaired continuation (tsc
// rejected the first attempt's line), and there is none inside a template literal's text.
func TestTypeScriptInlineCompletion(t *testing.T) {
	const prefix = "function twice(x: number): string {\n  "
	model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
		{PromptContains: "hydra-feedback:", Text: "  return `${2 * x}`;\n}\n"},
		{PromptSuffix: prefix, Text: "return 2 * x;\n}\n"}}})
	c := startServer(t, clientOptions{initOptions: map[string]any{"hydra": map[string]any{"modelUrl": model.URL}}})
	uri := "file://" + filepath.Join(t.TempDir(), "twice.ts")
	c.open(uri, "typescript", prefix)
	pos := lsp.Position{Line: 1, Character: 2}
	var list lsp.InlineCompletionList
	if err := c.call("textDocument/inlineCompletion", lsp.InlineCompletionParams{
		TextDocument: lsp.TextDocumentIdentifier{URI: uri}, Position: pos}, &list); err != nil {
		t.Fatal(err)
	}
	if want := "return `${2 * x}`;\n}\n"; len(list.Items) != 1 || list.Items[0].InsertText != want || list.Items[0].Range == nil || list.Items[0].Range.Start != pos {
		t.Fatalf("inline items %+v, want %q at the cursor %v", list.Items, want, pos)
	}
	if n := len(model.Calls()); n != 2 {
		t.Errorf("%d model requests, want 2 (the attempt tsc rejected and its repair)", n)
	}

	// Inside a template literal's text the cursor is in a literal: no item, no model request.
	lit := "const s = `a multi-line\ntemplate "
	uri2 := "file://" + filepath.Join(t.TempDir(), "lit.ts")
	c.open(uri2, "typescript", lit)
	list = lsp.InlineCompletionList{}
	if err := c.call("textDocument/inlineCompletion", lsp.InlineCompletionParams{
		TextDocument: lsp.TextDocumentIdentifier{URI: uri2}, Position: lsp.Position{Line: 1, Character: 9}}, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 || len(model.Calls()) != 2 {
		t.Errorf("inside a template literal: items %+v, %d model requests; want none and no new request", list.Items, len(model.Calls()))
	}
}

// With clangd behind Hydra (eglot's set-up), a TypeScript document is not clangd's: clangd never
// sees it, so no C++ diagnostic of clangd's lands on it, while a C++ document beside it still
// gets clangd's.
func TestClangdDoesNotSeeTypeScript(t *testing.T) {
	if _, err := exec.LookPath("clangd-19"); err != nil {
		t.Fatalf("clangd-19 is not installed (scripts/install-deps.sh installs it): %v", err)
	}
	dir := t.TempDir()
	c := startServer(t, clientOptions{initOptions: map[string]any{"hydra": map[string]any{"clangd": true}}})
	ts := "file://" + filepath.Join(dir, "a.ts")
	c.open(ts, "typescript", "const s: string = `x`;\nfunction f(a: number): number { return a; }\n")
	cpp := "file://" + filepath.Join(dir, "b.cpp")
	c.open(cpp, "cpp", "int f() { int unused_var = 1; return 0 }\n")
	c.waitFor("clangd's diagnostics on the C++ document", 2*time.Minute, func() bool { return hasSource(c.diags[cpp], "clang", "") })
	var hover json.RawMessage
	if err := c.call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": ts},
		"position": map[string]any{"line": 1, "character": 10}}, &hover); err != nil {
		t.Fatalf("hover on the TypeScript document: %v", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if hasSource(c.diags[ts], "clang", "") {
		t.Errorf("clangd's diagnostics on a TypeScript document: %+v", c.diags[ts])
	}
	if string(hover) != "null" {
		t.Errorf("hover on a TypeScript document answered %s, want null (no C++ reading of it)", hover)
	}
}
