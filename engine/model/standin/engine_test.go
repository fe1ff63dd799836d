package standin_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/checkers/clang"
	"github.com/hydra-lsp/hydra/engine"
	"github.com/hydra-lsp/hydra/engine/model"
	"github.com/hydra-lsp/hydra/engine/model/standin"
	"github.com/hydra-lsp/hydra/policy"
)

// A search (the real Clang checker, the uncertainty policy) against each stand-in: the tokens'
// log-probabilities reach the policy from every server's shape, and a server that sends none is
// said to.

const addPrefix = "#include <stdio.h>\n\n// add returns a + b.\nint add(int a, int b) {\n"
const addGood = "  return a + b;\n}\n\nint main(void) {\n  printf(\"%d\\n\", add(1, 2));\n  return 0;\n}\n"
const addBad = "  return a + c;\n}\n"

// recorder is the uncertainty policy, recording what it saw of the failed rollouts' tokens.
type recorder struct {
	engine.Policy
	mu         sync.Mutex
	tokens     int
	withLogpr  int
	firstValue float64
}

func (r *recorder) WantsLogprobs() (int, string) {
	return r.Policy.(engine.LogprobsWanter).WantsLogprobs()
}

func (r *recorder) OnNode(n *engine.Node, s *engine.State) []engine.Action {
	if n.Kind == engine.NodeError {
		if v := s.Rollout(n.Rollout); v != nil {
			r.mu.Lock()
			for i, t := range v.Tokens {
				r.tokens++
				if t.HasLogprob {
					r.withLogpr++
				}
				if i == 0 {
					r.firstValue = t.Logprob
				}
			}
			r.mu.Unlock()
		}
	}
	return r.Policy.OnNode(n, s)
}

func search(t *testing.T, srv *standin.Server) (*engine.Result, *recorder) {
	t.Helper()
	ck, err := clang.New(clang.Options{})
	if err != nil {
		t.Fatalf("the real Clang checker is needed (run `make build` first): %v", err)
	}
	t.Cleanup(func() { ck.Close() })
	pol, err := policy.ByName("uncertainty")
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{Policy: pol}
	gen, err := model.NewClient(srv.URL, model.WithAPIKeyEnv(""), model.WithRetry(2, 5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := engine.Search(ctx, ck, gen, engine.Request{Prefix: addPrefix, Filename: filepath.Join(t.TempDir(), "add.c"), Policy: rec})
	if err != nil {
		t.Fatal(err)
	}
	return res, rec
}

func TestLogprobsReachThePolicy(t *testing.T) {
	replies := []standin.Reply{{PromptContains: engine.FeedbackMarker, Text: addGood}, {Text: addBad}}
	each(t, func(t *testing.T, k standin.Kind) {
		srv := standin.Start(t, k, standin.Config{Replies: replies})
		res, rec := search(t, srv)
		if !res.OK || res.Text != addGood {
			t.Fatalf("result %+v", res)
		}
		if rec.tokens == 0 || rec.withLogpr != rec.tokens || rec.firstValue != standin.Logprob(0) {
			t.Errorf("the policy saw %d tokens, %d with a logprob (first %v): want all, as the server sent them", rec.tokens, rec.withLogpr, rec.firstValue)
		}
		for _, n := range res.Notes {
			if strings.Contains(n, "log-probabilities") {
				t.Errorf("note %q although the server sent them", n)
			}
		}
		if q := srv.Requests()[0]; q.Body["logprobs"] == nil {
			t.Errorf("request %v does not ask for logprobs", q.Body)
		}
	})
	t.Run("ollama without logprobs", func(t *testing.T) {
		srv := standin.Start(t, standin.Ollama, standin.Config{NoLogprobs: true, Replies: replies})
		res, rec := search(t, srv)
		if !res.OK {
			t.Fatalf("result %+v", res)
		}
		if rec.withLogpr != 0 {
			t.Errorf("%d tokens claim a logprob", rec.withLogpr)
		}
		notes := strings.Join(res.Notes, "\n")
		if !strings.Contains(notes, "no log-probabilities") || !strings.Contains(notes, "local-first") {
			t.Errorf("notes %q: want the missing logprobs and the fallback said", notes)
		}
	})
}

func TestSearchRecoversFromACutStreamAndAnErrorMidStream(t *testing.T) {
	each(t, func(t *testing.T, k standin.Kind) {
		srv := standin.Start(t, k, standin.Config{Replies: []standin.Reply{
			{Times: 1, Text: addGood, CutAfter: 6},
			{Times: 1, Text: addGood, ErrorAfter: 6},
			{Text: addGood},
		}})
		res, _ := search(t, srv)
		if !res.OK || res.Text != addGood {
			t.Fatalf("result %+v", res)
		}
		var outcomes []string
		for _, r := range res.Trace.Rollouts {
			outcomes = append(outcomes, r.Outcome)
		}
		// Ollama's /api/generate error line, like the others' error events, fails the
		// attempt; a cut connection is a cut stream.
		if len(outcomes) != 3 || outcomes[0] != "stream_cut" || outcomes[1] == "accepted" || outcomes[2] != "accepted" {
			t.Errorf("rollout outcomes %v, want a cut stream, a failed one, then the accepted one", outcomes)
		}
	})
}
