package lsp_test

import (
	"path/filepath"
	"strings"
	"testing"

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
