package lsp_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/engine/model/modeltest"
	"github.com/hydra-lsp/hydra/lsp"
)

// A document with an instruction comment and a use of what is to be generated after it.
const (
	accPrefix = "#include <cstdio>\n\n// An accumulator.\n"
	accSuffix = "\nint main() {\n  Acc a;\n  a.value = 2;\n  std::printf(\"%d\\n\", a.get());\n  return 0;\n}\n"
	accGood   = "struct Acc {\n  int get() const { return value; }\n  int value = 0;\n};\n"
	// accBad's error (a misspelt member in an inline member function) is reported only at the
	// class's closing brace, after its later lines were accepted: the rollback has to take
	// accepted text out of the document again.
	// Its later lines give the first line time to reach the document before the error comes.
	accBad   = "struct Acc {\n  int get() const { return vaule; }\n  int value = 0;\n  int a1 = 1;\n  int a2 = 2;\n  int a3 = 3;\n  int a4 = 4;\n};\n"
	accRetry = "  int get() const { return value; }\n  int value = 0;\n};\n"
)

func TestGenerateStreamsAcceptedCodeAndRollsBack(t *testing.T) {
	tests := []struct {
		name         string
		rules        []modeltest.Rule
		wantRollback bool
		anyRemoval   bool
		selection    bool // the instruction comment is selected instead of a cursor after it
		wantAttempts int
		client       clientOptions
	}{
		{
			name:         "clean generation",
			rules:        []modeltest.Rule{{PromptSuffix: "// An accumulator.\n", Text: accGood, Chunk: 6, DelayMS: 40}},
			wantAttempts: 1,
		},
		{
			name:         "selected instruction",
			rules:        []modeltest.Rule{{PromptSuffix: "// An accumulator.\n", Text: accGood, Chunk: 6, DelayMS: 40}},
			selection:    true,
			wantAttempts: 1,
		},
		{
			name: "rollback removes rejected text",
			rules: []modeltest.Rule{
				{PromptContains: "hydra-feedback:", Text: accRetry, Chunk: 6, DelayMS: 5},
				// Slow enough that the lines before the late error are shown before it comes.
				{PromptSuffix: "// An accumulator.\n", Text: accBad, Chunk: 6, DelayMS: 40},
			},
			wantRollback: true,
			wantAttempts: 2,
		},
		{
			name: "client without versioned edits or progress (eglot 1.9)",
			rules: []modeltest.Rule{
				{PromptContains: "hydra-feedback:", Text: accRetry, Chunk: 6, DelayMS: 5},
				{PromptSuffix: "// An accumulator.\n", Text: accBad, Chunk: 6, DelayMS: 40},
			},
			wantRollback: true,
			wantAttempts: 2,
			client:       clientOptions{unversioned: true, noProgress: true},
		},
		{
			name: "Neovim 0.7 client (debounced didChange)",
			rules: []modeltest.Rule{
				{PromptContains: "hydra-feedback:", Text: accRetry, Chunk: 6, DelayMS: 5},
				{PromptSuffix: "// An accumulator.\n", Text: accBad, Chunk: 6, DelayMS: 40},
			},
			// Whether the doomed lines reach the document before the rollback depends on the
			// client's 150 ms debounce; either way the document must end right.
			anyRemoval:   true,
			wantAttempts: 2,
			client:       clientOptions{neovim: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			uri := "file://" + filepath.Join(dir, "acc.cpp")
			// The first attempt's last piece waits until the client's document shows its first
			// two lines: that the lines stream before the end (and, for accBad, before the
			// error its last line brings) is then shown by the edits, not left to the clock.
			var c *client
			rules := append([]modeltest.Rule(nil), tt.rules...)
			first := &rules[len(rules)-1]
			lines := strings.SplitAfter(first.Text, "\n")
			shown := lines[0] + lines[1]
			first.Hold = func(ctx context.Context, _ int, sent, piece string) {
				if len(sent)+len(piece) != len(first.Text) {
					return // not the last piece
				}
				for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && ctx.Err() == nil; {
					if strings.Contains(c.text(uri), shown) {
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			model := modeltest.NewServer(t, modeltest.Script{Rules: rules})
			o := tt.client
			o.initOptions = map[string]any{"hydra": map[string]any{"modelUrl": model.URL}}
			c = startServer(t, o)
			c.open(uri, "cpp", accPrefix+accSuffix)

			// As an editor does: ask for code actions at the cursor (or on the selected
			// instruction), pick "Generate with repair", run its command.
			rng := lsp.Range{Start: position(accPrefix, len(accPrefix)), End: position(accPrefix, len(accPrefix))}
			if tt.selection {
				rng = lsp.Range{Start: position(accPrefix, strings.Index(accPrefix, "//")), End: position(accPrefix, len(accPrefix)-1)}
			}
			sum := runCodeAction(t, c, uri, rng)
			t.Logf("summary: %+v", sum)
			want := accPrefix + accGood + accSuffix
			if got := c.text(uri); got != want {
				t.Fatalf("document after generation:\n%s\nwant:\n%s", got, want)
			}
			if !sum.OK || sum.Reason != "accepted" || sum.Text != accGood || sum.Attempts != tt.wantAttempts {
				t.Fatalf("summary %+v, want ok, accepted text %q, %d attempts", sum, accGood, tt.wantAttempts)
			}
			if err := compiles(t, dir, "final.cpp", c.text(uri), "-std=c++17"); err != nil {
				t.Fatal(err)
			}

			c.mu.Lock()
			edits := append([]appliedEdit(nil), c.edits...)
			progress := append([]lsp.ProgressParams(nil), c.progress...)
			messages := append([]lsp.ShowMessageParams(nil), c.messages...)
			c.mu.Unlock()
			if len(edits) < 2 {
				t.Errorf("the text arrived in %d edit(s), want it streamed line by line", len(edits))
			}
			removed := ""
			for _, e := range edits {
				removed += e.Deleted
			}
			if tt.wantRollback && !strings.Contains(removed, "return vaule;") {
				t.Errorf("no edit removed the rolled-back lines (removed %q)", removed)
			}
			if !tt.wantRollback && !tt.anyRemoval && removed != "" {
				t.Errorf("a clean generation removed text %q", removed)
			}
			kinds := progressKinds(progress)
			if o.noProgress {
				if len(kinds) != 0 {
					t.Errorf("progress sent to a client without work-done progress: %v", kinds)
				}
			} else if len(kinds) < 3 || kinds[0] != "begin" || kinds[len(kinds)-1] != "end" || !contains(kinds, "report") {
				t.Errorf("progress kinds %v, want begin, report…, end", kinds)
			}
			if len(messages) == 0 || messages[len(messages)-1].Type != lsp.MessageInfo ||
				!strings.Contains(messages[len(messages)-1].Message, "first checked line") {
				t.Errorf("summary message %+v", messages)
			}
		})
	}
}

// runCodeAction asks for the code actions of rng, checks "Generate with repair" is offered
// and runs its command; it returns the command's summary.
func runCodeAction(t *testing.T, c *client, uri string, rng lsp.Range) lsp.Summary {
	t.Helper()
	var actions []lsp.CodeAction
	if err := c.call("textDocument/codeAction", lsp.CodeActionParams{
		TextDocument: lsp.TextDocumentIdentifier{URI: uri}, Range: rng,
		Context: lsp.CodeActionContext{Only: []string{"source"}}}, &actions); err != nil {
		t.Fatalf("codeAction: %v", err)
	}
	if len(actions) != 1 || actions[0].Kind != lsp.KindGenerate || actions[0].Command == nil ||
		actions[0].Command.Command != lsp.CommandGenerate {
		t.Fatalf("code actions %+v, want one %s running %s", actions, lsp.KindGenerate, lsp.CommandGenerate)
	}
	var args []json.RawMessage
	for _, a := range actions[0].Command.Arguments {
		args = append(args, mustJSON(a))
	}
	var sum lsp.Summary
	if err := c.call("workspace/executeCommand", lsp.ExecuteCommandParams{
		Command: actions[0].Command.Command, Arguments: args}, &sum); err != nil {
		t.Fatalf("executeCommand %s: %v", actions[0].Command.Command, err)
	}
	return sum
}

func progressKinds(ps []lsp.ProgressParams) []string {
	var kinds []string
	for _, p := range ps {
		if m, ok := p.Value.(map[string]any); ok {
			kinds = append(kinds, m["kind"].(string))
		}
	}
	return kinds
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
