package lsp_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hydra-lsp/hydra/engine/model/modeltest"
)

// The tests in this file are issue 16's server side, over real pipes: where generated code
// goes from wherever the cursor is (the same rule for every client), errors that were in the
// document before, the user's typing during a generation, diagnostics that follow the
// document, and inline completion.

const (
	sumSig  = "#include <vector>\n\n// Returns the sum of the elements of v.\nint sum(const std::vector<int>& v) {"
	sumBody = "  int total = 0;\n  for (int x : v) total += x;\n  return total;\n}\n"
	// sumMore is what a model writes on after the function when nothing stops it.
	sumMore = "\nint main() {\n  return sum({1, 2, 3});\n}\n"
)

func TestGenerateFromWhereTheCursorIs(t *testing.T) {
	tests := []struct {
		name   string
		doc    string
		cursor int // byte offset of the cursor in doc
		want   string
		client clientOptions
	}{
		{
			// The first case: Esc after typing the signature leaves Neovim's cursor on
			// the `{`; the buffer's last line, no `}` anywhere. The body went in 6 times.
			name: "Neovim, cursor on the { of a signature on the last line", doc: sumSig + "\n",
			cursor: len(sumSig) - 1, want: sumSig + "\n" + sumBody, client: clientOptions{neovim: true},
		},
		{
			name: "VS Code, cursor after the { at the end of the document", doc: sumSig,
			cursor: len(sumSig), want: sumSig + "\n" + sumBody,
		},
		{
			name: "eglot, cursor at the start of the signature line", doc: sumSig + "\n",
			cursor: strings.LastIndexByte(sumSig, '\n') + 1, want: sumSig + "\n" + sumBody,
			client: clientOptions{unversioned: true, noProgress: true},
		},
		{
			// An auto-paired `}` and the blank line the user left: no blank line before it.
			name: "Neovim, signature with its } and a blank line between", doc: sumSig + "\n\n}\n" + sumMore,
			cursor: len(sumSig) - 1, want: sumSig + "\n" + sumBody + sumMore, client: clientOptions{neovim: true},
		},
		{
			name: "from the blank line inside the body", doc: sumSig + "\n\n}\n",
			cursor: len(sumSig) + 1, want: sumSig + "\n" + sumBody,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
				// The model would write on past the function; the server must stop it there.
				{PromptSuffix: "int sum(const std::vector<int>& v) {\n", Text: sumBody + sumMore, Chunk: 6, DelayMS: 10},
			}})
			o := tt.client
			o.initOptions = map[string]any{"hydra": map[string]any{"modelUrl": model.URL}}
			c := startServer(t, o)
			dir := t.TempDir()
			uri := "file://" + filepath.Join(dir, "sum.cpp")
			c.open(uri, "cpp", tt.doc)
			sum, err := c.generate(uri, position(tt.doc, tt.cursor))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("summary: %+v", sum)
			got := c.text(uri)
			if got != tt.want && got != tt.want+"\n" {
				t.Fatalf("document after generation:\n%q\nwant:\n%q", got, tt.want)
			}
			if !sum.OK || sum.Attempts != 1 {
				t.Fatalf("summary %+v, want accepted in 1 attempt", sum)
			}
			if n := len(model.Handler.Calls()); n != 1 {
				t.Errorf("%d model requests, want 1", n)
			}
			if err := compiles(t, dir, "final.cpp", got, "-std=c++17"); err != nil {
				t.Fatal(err)
			}
		})
	}
}
