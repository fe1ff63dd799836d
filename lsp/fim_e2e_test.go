package lsp_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hydra-lsp/hydra/engine/model/standin"
)

// The code after the cursor reaches the model in its fill-in-the-middle format (here
// Qwen2.5-Coder's, chosen from the model's name), behind a stand-in of vLLM
// (engine/model/standin, no model), and the fim setting turns it off. The summary carries the
// search's notes.
func TestCodeAfterTheCursorReachesTheModel(t *testing.T) {
	for _, fim := range []string{"", "off"} {
		t.Run("fim="+fim, func(t *testing.T) {
			srv := standin.Start(t, standin.VLLM, standin.Config{ContextLen: 2048, Replies: []standin.Reply{{Text: accGood}}})
			settings := map[string]any{"modelUrl": srv.URL}
			if fim != "" {
				settings["fim"] = fim
			}
			c := startServer(t, clientOptions{initOptions: map[string]any{"hydra": settings}})
			uri := "file://" + filepath.Join(t.TempDir(), "acc.cpp")
			c.open(uri, "cpp", accPrefix+accSuffix)
			sum, err := c.generate(uri, position(accPrefix, len(accPrefix)))
			if err != nil {
				t.Fatal(err)
			}
			if !sum.OK || c.text(uri) != accPrefix+accGood+accSuffix {
				t.Fatalf("summary %+v, document:\n%s", sum, c.text(uri))
			}
			// The 2048-token context is less than the 4096 tokens a rollout asks for: the
			// request was fitted, and the summary says so.
			if len(sum.Notes) == 0 || !strings.Contains(sum.Message, "max_tokens was lowered to fit the model's context of 2048 tokens") {
				t.Errorf("summary %q (notes %q): want the fitting said", sum.Message, sum.Notes)
			}
			reqs := srv.Requests()
			if len(reqs) == 0 {
				t.Fatal("no request reached the model server")
			}
			p := reqs[0].Prompt
			switch fim {
			case "off":
				if strings.Contains(p, "<|fim_") || strings.Contains(p, "int main()") {
					t.Errorf("fim off, yet the model got the suffix: %q", p)
				}
			default:
				if !strings.HasPrefix(p, "<|fim_prefix|>") || !strings.Contains(p, "<|fim_suffix|>"+accSuffix) || !strings.HasSuffix(p, "<|fim_middle|>") {
					t.Errorf("the model got %q, want the prefix and the suffix in Qwen2.5-Coder's FIM format", p)
				}
			}
		})
	}
}
