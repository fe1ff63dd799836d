package lsp_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/engine/model/modeltest"
	"github.com/hydra-lsp/hydra/lsp"
)

// TestGenerateInsideOpenConditionalStreams: the cursor is in a function inside `#if` … `#endif`
// (platform code). The lines the model writes inside the open conditional are confirmed as they
// come (engine/probe.go), so they reach the client in edits while the model is still writing:
// the piece that ends the body is held until the client's document shows the body's first two
// lines. The document ends as the whole body and compiles.
func TestGenerateInsideOpenConditionalStreams(t *testing.T) {
	const (
		prefix = "#include <cstdio>\n#if defined(__linux__) || 1\nint sum(int n) {\n"
		suffix = "}\n#endif\n\nint main() {\n  std::printf(\"%d\\n\", sum(3));\n  return 0;\n}\n"
		body   = "  int s = 0;\n  for (int i = 1; i <= n; i++)\n    s += i;\n  return s;\n"
	)
	dir := t.TempDir()
	uri := "file://" + filepath.Join(dir, "sum.cpp")
	lines := strings.SplitAfter(body, "\n")
	shown := prefix + lines[0] + lines[1]
	var c *client
	text := body + "}\n\nint other;\n"
	rule := modeltest.Rule{PromptSuffix: prefix, Text: text, Chunk: 6, Hold: func(ctx context.Context, _ int, sent, piece string) {
		if len(sent) >= len(body) || len(sent)+len(piece) < len(body) {
			return // not the piece that ends the body
		}
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && ctx.Err() == nil; {
			if strings.HasPrefix(c.text(uri), shown) {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}}
	model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{rule}})
	c = startServer(t, clientOptions{initOptions: map[string]any{"hydra": map[string]any{"modelUrl": model.URL}}})
	c.open(uri, "cpp", prefix+"\n"+suffix) // the cursor on an empty line in the function

	at := position(prefix, len(prefix))
	sum := runCodeAction(t, c, uri, lsp.Range{Start: at, End: at})
	t.Logf("summary: %+v", sum)
	if got, want := c.text(uri), prefix+body+suffix; got != want {
		t.Fatalf("document after generation:\n%s\nwant:\n%s", got, want)
	}
	if !sum.OK || sum.Text != body || sum.Attempts != 1 {
		t.Fatalf("summary %+v, want the body accepted in one attempt", sum)
	}
	if err := compiles(t, dir, "final.cpp", c.text(uri), "-std=c++17"); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	edits := append([]appliedEdit(nil), c.edits...)
	c.mu.Unlock()
	// The first edits brought the body's first lines while the model held its end back.
	if len(edits) < 2 || !strings.HasPrefix(lines[0]+lines[1], edits[0].NewText) {
		t.Errorf("edits %+v, want the body streamed line by line, its first lines first", edits)
	}
}
