package lsp_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/engine/model/modeltest"
)

// An overload error's notes ("candidate function not viable: …") reach the model in the repair
// feedback, and the user in the diagnostic: as relatedInformation pointing at the candidates'
// lines when the client shows it, in the message otherwise (as clangd does).
func TestClangNotesReachTheModelAndTheUser(t *testing.T) {
	const doc = "void f(int);\nvoid f(int, int);\n// call f\n"
	const bad = "int g(void) { f(\"x\"); return 0; }\n"
	const good = "int g(void) { f(1); return 0; }\n"
	t.Run("the model reads the notes", func(t *testing.T) {
		model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
			// Only a prompt whose feedback carries the first candidate's note gets the fix.
			{PromptContains: "note: line 1: candidate function not viable: no known conversion", Text: good},
			{Text: bad},
		}})
		c := startServer(t, clientOptions{initOptions: map[string]any{"modelUrl": model.URL, "maxAttempts": 2}})
		uri := "file://" + filepath.Join(t.TempDir(), "g.cpp")
		c.open(uri, "cpp", doc)
		sum, err := c.generate(uri, position(doc, len(doc)))
		if err != nil || !sum.OK {
			t.Fatalf("the second attempt, prompted with the notes, is right; got %v %+v", err, sum)
		}
		if got := c.text(uri); got != doc+good {
			t.Errorf("document %q", got)
		}
	})
	for _, related := range []bool{true, false} {
		name := "notes in the message"
		if related {
			name = "notes as relatedInformation"
		}
		t.Run(name, func(t *testing.T) {
			model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Text: bad}}})
			c := startServer(t, clientOptions{initOptions: map[string]any{"modelUrl": model.URL, "maxAttempts": 1}, relatedInfo: related})
			uri := "file://" + filepath.Join(t.TempDir(), "g.cpp")
			c.open(uri, "cpp", doc)
			if sum, err := c.generate(uri, position(doc, len(doc))); err != nil || sum.OK {
				t.Fatalf("want a failed generation: %v %+v", err, sum)
			}
			c.waitFor("diagnostics", time.Minute, func() bool { return len(c.diags[uri]) > 0 })
			c.mu.Lock()
			d := c.diags[uri][0]
			c.mu.Unlock()
			if !strings.HasPrefix(d.Message, "no matching function for call to 'f'") {
				t.Fatalf("diagnostic %+v", d)
			}
			if !related {
				if !strings.Contains(d.Message, "\n\nnote: line 1: candidate function not viable") || len(d.RelatedInformation) != 0 {
					t.Errorf("without relatedInformation support, the notes belong in the message: %+v", d)
				}
				return
			}
			if strings.Contains(d.Message, "note:") || len(d.RelatedInformation) != 2 {
				t.Fatalf("want the two candidates as relatedInformation, not in the message: %+v", d)
			}
			for i, want := range []struct {
				line int
				msg  string
			}{{0, "no known conversion"}, {1, "requires 2 arguments"}} {
				ri := d.RelatedInformation[i]
				if ri.Location.URI != uri || ri.Location.Range.Start.Line != want.line || !strings.Contains(ri.Message, want.msg) {
					t.Errorf("related %d: %+v, want line %d of %s: %q", i, ri, want.line, uri, want.msg)
				}
			}
		})
	}
}
