package lsp_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hydra-lsp/hydra/engine/model/modeltest"
	"github.com/hydra-lsp/hydra/lsp"
)

// TestGenerationEndsWhenTheClientNeverAnswersAnEdit: a client that reads workspace/applyEdit
// but never answers it does not hang its generation. After --apply-edit-timeout the generation
// stops with reason edit_unanswered: hydra.generate returns that summary, the progress ends and
// the message says why, the document is as the client holds it, no checker process is left, and
// the server goes on serving (a second generation in another document stops the same way, and
// shutdown is clean).
func TestGenerationEndsWhenTheClientNeverAnswersAnEdit(t *testing.T) {
	model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
		{PromptSuffix: "// An accumulator.\n", Text: accGood, Chunk: 6, DelayMS: 20},
	}})
	c := startServer(t, clientOptions{
		initOptions: map[string]any{"hydra": map[string]any{"modelUrl": model.URL}},
		args:        []string{"--apply-edit-timeout", "1s"},
		silentEdits: true,
	})
	dir := t.TempDir()
	for i, name := range []string{"acc.cpp", "acc2.cpp"} {
		uri := "file://" + filepath.Join(dir, name)
		c.open(uri, "cpp", accPrefix+accSuffix)
		sum, err := c.generate(uri, position(accPrefix, len(accPrefix)))
		if err != nil {
			t.Fatalf("%s: hydra.generate: %v", name, err)
		}
		t.Logf("summary: %+v", sum)
		if sum.OK || sum.Reason != "edit_unanswered" || sum.Text != "" {
			t.Fatalf("%s: summary %+v, want not ok, reason edit_unanswered, no text shown", name, sum)
		}
		if !strings.Contains(sum.Message, "did not answer a workspace/applyEdit") {
			t.Errorf("%s: summary message %q does not say the editor did not answer", name, sum.Message)
		}
		if got := c.text(uri); got != accPrefix+accSuffix {
			t.Errorf("%s: the client's document changed: %q", name, got)
		}
		c.mu.Lock()
		unanswered := c.unanswered
		kinds := progressKinds(c.progress)
		var endMsg string
		if n := len(c.progress); n > 0 {
			if m, ok := c.progress[n-1].Value.(map[string]any); ok {
				endMsg, _ = m["message"].(string)
			}
		}
		msgs := append([]lsp.ShowMessageParams(nil), c.messages...)
		c.mu.Unlock()
		if unanswered != i+1 {
			t.Errorf("%s: the server sent %d applyEdit requests in all, want one per generation (%d)", name, unanswered, i+1)
		}
		if len(kinds) == 0 || kinds[len(kinds)-1] != "end" || !strings.Contains(endMsg, "did not answer") {
			t.Errorf("%s: progress %v ends with %q, want an end saying the editor did not answer", name, kinds, endMsg)
		}
		if len(msgs) == 0 || msgs[len(msgs)-1].Type != lsp.MessageWarning || msgs[len(msgs)-1].Message != sum.Message {
			t.Errorf("%s: messages %+v, want the summary as a warning", name, msgs)
		}
	}
	if code := c.shutdown(); code != 0 {
		t.Errorf("exit status %d after shutdown", code)
	}
}
