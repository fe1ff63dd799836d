package standin_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/engine/model"
	"github.com/hydra-lsp/hydra/engine/model/standin"
)

// These tests run Hydra's model client against the stand-ins of the four servers (package
// standin: scripted, no model). Each test runs once per server.

const codePrompt = "#include <vector>\n// Returns the sum of v.\nint sum(const std::vector<int>& v) {\n"
const codeBody = "  int s = 0;\n  for (int x : v) s += x < 0 ? -x : x;\n  return s;\n}\n"

func client(t *testing.T, url string, opts ...model.Option) *model.Client {
	t.Helper()
	opts = append([]model.Option{model.WithRetry(2, 5*time.Millisecond), model.WithAPIKeyEnv("")}, opts...)
	c, err := model.NewClient(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func drain(s model.Stream) (string, []model.Token, error) {
	return model.Collect(context.Background(), s)
}

func each(t *testing.T, f func(t *testing.T, k standin.Kind)) {
	for _, k := range standin.Kinds {
		t.Run(string(k), func(t *testing.T) { f(t, k) })
	}
}

func lastCompletion(t *testing.T, srv *standin.Server) standin.Request {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("the stand-in got no completion request")
	}
	return reqs[len(reqs)-1]
}

func TestStreamsCodeAndExactTokenCounts(t *testing.T) {
	each(t, func(t *testing.T, k standin.Kind) {
		srv := standin.Start(t, k, standin.Config{Replies: []standin.Reply{{Text: codeBody}}})
		s, err := client(t, srv.URL).Complete(context.Background(), model.Request{Prompt: codePrompt, Params: model.Params{MaxTokens: 200}})
		if err != nil {
			t.Fatal(err)
		}
		text, toks, err := drain(s)
		if err != nil {
			t.Fatal(err)
		}
		// Raw continuation, with "<" decoded whatever the escaping (Ollama writes \u003c).
		if text != codeBody {
			t.Fatalf("text %q, want %q", text, codeBody)
		}
		q := lastCompletion(t, srv)
		if k == standin.LlamaCpp || k == standin.Ollama {
			if len(toks) != q.Served {
				t.Errorf("%d streamed pieces, the server sent %d tokens one a chunk", len(toks), q.Served)
			}
		}
		u := s.Usage()
		if u.PromptTokens != q.PromptTokens || u.CompletionTokens != q.Served || u.PromptEstimated {
			t.Errorf("usage %+v, the server counted %d prompt and %d completion tokens", u, q.PromptTokens, q.Served)
		}
		if s.FinishReason() != "stop" {
			t.Errorf("finish reason %q, want stop", s.FinishReason())
		}
	})
}

// Ollama's Go server writes "<" as \u003c (encoding/json's HTML escaping); the text decodes
// the same.
func TestOllamaEscapesLessThanAsGoDoes(t *testing.T) {
	srv := standin.Start(t, standin.Ollama, standin.Config{Replies: []standin.Reply{{Text: codeBody}}})
	body := `{"model":"qwen2.5-coder","prompt":"int f() {\n","raw":true,"stream":true}`
	resp, err := http.Post(srv.Root+"/api/generate", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(raw), `\u003c`) || strings.Contains(string(raw), `"response":"<`) {
		t.Fatalf("the stand-in does not escape < as Go does:\n%s", raw)
	}
	s, err := client(t, srv.URL).Complete(context.Background(), model.Request{Prompt: "int f() {\n", Params: model.Params{MaxTokens: 100}})
	if err != nil {
		t.Fatal(err)
	}
	if text, _, err := drain(s); err != nil || text != codeBody {
		t.Fatalf("text %q (err %v), want %q", text, err, codeBody)
	}
}

func TestKilledStreamStillCountsItsPrompt(t *testing.T) {
	each(t, func(t *testing.T, k standin.Kind) {
		srv := standin.Start(t, k, standin.Config{TokenDelay: 20 * time.Millisecond, Replies: []standin.Reply{{Text: strings.Repeat(codeBody, 4)}}})
		c := client(t, srv.URL, model.WithContinuousUsage(true))
		s, err := c.Complete(context.Background(), model.Request{Prompt: codePrompt, Params: model.Params{MaxTokens: 200}})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := s.Next(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		s.Close() // a rollback kills the rollout before the server's last event
		u := s.Usage()
		q := lastCompletion(t, srv)
		switch k {
		case standin.Ollama:
			// No tokenizer endpoint: estimated, and said so.
			if !u.PromptEstimated || u.PromptTokens < q.PromptTokens/2 || u.PromptTokens > 2*q.PromptTokens {
				t.Errorf("usage %+v, want an estimate near the server's %d prompt tokens, marked", u, q.PromptTokens)
			}
		default:
			// Counted exactly: continuous usage (vLLM, SGLang) or the server's /tokenize (llama.cpp).
			if u.PromptTokens != q.PromptTokens {
				t.Errorf("usage %+v, the server counted %d prompt tokens", u, q.PromptTokens)
			}
		}
		if u.CompletionTokens < 2 {
			t.Errorf("usage %+v, want the 2 tokens read", u)
		}
	})
}

func TestContextOf4096Tokens(t *testing.T) {
	each(t, func(t *testing.T, k standin.Kind) {
		srv := standin.Start(t, k, standin.Config{ContextLen: 4096, Replies: []standin.Reply{{Text: codeBody}}})
		// The engine's default: 4096 output tokens a rollout.
		s, err := client(t, srv.URL).Complete(context.Background(), model.Request{Prompt: codePrompt, Params: model.Params{MaxTokens: 4096}})
		if err != nil {
			t.Fatal(err)
		}
		if text, _, err := drain(s); err != nil || text != codeBody {
			t.Fatalf("text %q, err %v", text, err)
		}
		q := lastCompletion(t, srv)
		if q.MaxTokens <= 0 || q.PromptTokens+q.MaxTokens > 4096 {
			t.Errorf("asked for %d tokens after a %d-token prompt: does not fit 4096", q.MaxTokens, q.PromptTokens)
		}
		if q.MaxTokens < 3500 {
			t.Errorf("asked for only %d tokens: the margin is too wide", q.MaxTokens)
		}
		if notes := s.(model.Noter).Notes(); len(notes) == 0 || !strings.Contains(notes[0], "lowered") {
			t.Errorf("notes %q, want one saying max_tokens was lowered", notes)
		}
	})
}

func TestPromptTooLongIsCutFromItsStart(t *testing.T) {
	each(t, func(t *testing.T, k standin.Kind) {
		srv := standin.Start(t, k, standin.Config{ContextLen: 512, Replies: []standin.Reply{{Text: codeBody}}})
		var b strings.Builder
		for i := range 200 {
			fmt.Fprintf(&b, "int helper_%d(int x) { return x + %d; }\n", i, i)
		}
		prompt := b.String() + codePrompt
		s, err := client(t, srv.URL).Complete(context.Background(), model.Request{Prompt: prompt, Params: model.Params{MaxTokens: 256}})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := drain(s); err != nil {
			t.Fatal(err)
		}
		q := lastCompletion(t, srv)
		if q.Rejected != 0 || len(q.Prompt) >= len(prompt) || !strings.HasSuffix(prompt, q.Prompt) || !strings.HasPrefix(q.Prompt, "int helper_") {
			t.Fatalf("the model got a %d-byte prompt (rejected %d), want a tail of the %d-byte prompt starting at a line", len(q.Prompt), q.Rejected, len(prompt))
		}
		if q.PromptTokens+q.MaxTokens > 512 {
			t.Errorf("%d prompt + %d max tokens > 512", q.PromptTokens, q.MaxTokens)
		}
		notes := strings.Join(s.(model.Noter).Notes(), "\n")
		if !strings.Contains(notes, "did not fit") || !strings.Contains(notes, "checker still checks the whole document") {
			t.Errorf("notes %q, want the cut said", notes)
		}
	})
}

func TestContextRejectionIsParsedAndRetriedOnce(t *testing.T) {
	// The server's context is smaller than /v1/models (or /props) says — a second server behind
	// a proxy, say — so the first request is refused with the server's own 400.
	for _, k := range []standin.Kind{standin.VLLM, standin.SGLang, standin.LlamaCpp} {
		t.Run(string(k), func(t *testing.T) {
			srv := standin.Start(t, k, standin.Config{ContextLen: 300, Replies: []standin.Reply{{Text: codeBody}}})
			c := client(t, srv.URL)
			info, err := c.Server(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			// Pretend the server claimed more context than it has.
			for i := range info.Models {
				info.Models[i].ContextLen = 32768
			}
			if info.ContextLen > 0 {
				info.ContextLen = 32768
			}
			var b strings.Builder
			for i := range 60 {
				fmt.Fprintf(&b, "int helper_%d(int x) { return x + %d; }\n", i, i)
			}
			s, err := c.Complete(context.Background(), model.Request{Prompt: b.String() + codePrompt, Params: model.Params{MaxTokens: 4096}})
			if err != nil {
				t.Fatalf("want a retry that fits, got %v", err)
			}
			if _, _, err := drain(s); err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 || reqs[0].Rejected != 400 || reqs[1].Rejected != 0 {
				t.Fatalf("requests %+v, want one refused with 400 and one retry that fits", summary(reqs))
			}
		})
	}
}

func summary(reqs []standin.Request) []string {
	var out []string
	for _, q := range reqs {
		out = append(out, fmt.Sprintf("%s prompt=%d max=%d rejected=%d", q.Path, q.PromptTokens, q.MaxTokens, q.Rejected))
	}
	return out
}

func TestUnknownModel(t *testing.T) {
	each(t, func(t *testing.T, k standin.Kind) {
		srv := standin.Start(t, k, standin.Config{Replies: []standin.Reply{{Text: codeBody}}})
		s, err := client(t, srv.URL).Complete(context.Background(), model.Request{Model: "no-such-model", Prompt: codePrompt, Params: model.Params{MaxTokens: 50}})
		switch k {
		case standin.VLLM, standin.Ollama:
			if err == nil || !strings.Contains(err.Error(), "no-such-model") || !strings.Contains(err.Error(), srv.ModelName()) {
				t.Fatalf("err = %v, want one naming the model and what the server serves", err)
			}
		default:
			// llama.cpp and SGLang serve their one model whatever the request names.
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := drain(s); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func TestModelIsPickedWhenTheServerServesOne(t *testing.T) {
	each(t, func(t *testing.T, k standin.Kind) {
		srv := standin.Start(t, k, standin.Config{Replies: []standin.Reply{{Text: codeBody}}})
		s, err := client(t, srv.URL).Complete(context.Background(), model.Request{Prompt: codePrompt, Params: model.Params{MaxTokens: 50}})
		if err != nil {
			t.Fatal(err)
		}
		drain(s)
		if q := lastCompletion(t, srv); q.Model != srv.ModelName() {
			t.Errorf("model %q sent, want the only one served, %q", q.Model, srv.ModelName())
		}
		info, err := model.ListModels(context.Background(), srv.URL, model.WithAPIKeyEnv(""))
		if err != nil {
			t.Fatal(err)
		}
		if len(info.Models) != 1 || info.Models[0].ID != srv.ModelName() || info.Models[0].ContextLen != 32768 || string(info.Kind) != string(k) {
			t.Errorf("ListModels = %+v", info)
		}
	})
}

func TestWaitsForALoadingServer(t *testing.T) {
	each(t, func(t *testing.T, k standin.Kind) {
		srv := standin.Start(t, k, standin.Config{LoadFor: 1500 * time.Millisecond, Replies: []standin.Reply{{Text: codeBody}}})
		var mu sync.Mutex
		var said []string
		c := client(t, srv.URL, model.WithLoadingWait(20*time.Second), model.WithProgress(func(m string) {
			mu.Lock()
			said = append(said, m)
			mu.Unlock()
		}))
		s, err := c.Complete(context.Background(), model.Request{Prompt: codePrompt, Params: model.Params{MaxTokens: 50}})
		if err != nil {
			t.Fatal(err)
		}
		if text, _, err := drain(s); err != nil || text != codeBody {
			t.Fatalf("text %q, err %v", text, err)
		}
		mu.Lock()
		defer mu.Unlock()
		if k != standin.Ollama && (len(said) == 0 || !strings.Contains(said[0], "waiting for the model server")) {
			t.Errorf("progress %q, want it to say it waits for the server", said)
		}
	})
}

func TestGivesUpOnAServerThatStaysLoading(t *testing.T) {
	for _, k := range []standin.Kind{standin.VLLM, standin.LlamaCpp} {
		t.Run(string(k), func(t *testing.T) {
			srv := standin.Start(t, k, standin.Config{LoadFor: time.Minute})
			_, err := client(t, srv.URL, model.WithLoadingWait(700*time.Millisecond)).Complete(context.Background(), model.Request{Prompt: codePrompt})
			if !errors.Is(err, model.ErrUnavailable) || !strings.Contains(err.Error(), "finished loading") {
				t.Fatalf("err = %v, want ErrUnavailable saying it waited for loading", err)
			}
		})
	}
}

func TestURLWithoutV1(t *testing.T) {
	each(t, func(t *testing.T, k standin.Kind) {
		srv := standin.Start(t, k, standin.Config{Replies: []standin.Reply{{Text: codeBody}}})
		s, err := client(t, srv.Root).Complete(context.Background(), model.Request{Prompt: codePrompt, Params: model.Params{MaxTokens: 50}})
		if k == standin.Ollama {
			// Ollama is found at its root too, and its native API answers.
			if err != nil {
				t.Fatal(err)
			}
			if text, _, err := drain(s); err != nil || text != codeBody {
				t.Fatalf("text %q, err %v", text, err)
			}
			return
		}
		want := "did you mean " + srv.Root + "/v1 ?"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v, want it to say %q", err, want)
		}
		if k == standin.LlamaCpp {
			if !errors.Is(err, model.ErrWrongURL) || !strings.Contains(err.Error(), "native") {
				t.Errorf("err = %v, want it to name llama.cpp's native events", err)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests: want the run to end on the first", n)
			}
		}
	})
}

func TestCutStream(t *testing.T) {
	each(t, func(t *testing.T, k standin.Kind) {
		srv := standin.Start(t, k, standin.Config{Replies: []standin.Reply{{Text: codeBody, CutAfter: 4}}})
		s, err := client(t, srv.URL).Complete(context.Background(), model.Request{Prompt: codePrompt, Params: model.Params{MaxTokens: 50}})
		if err != nil {
			t.Fatal(err)
		}
		_, toks, err := drain(s)
		if !errors.Is(err, model.ErrStreamCut) || len(toks) == 0 {
			t.Fatalf("err = %v after %d tokens, want ErrStreamCut after some", err, len(toks))
		}
	})
}

func TestErrorInTheMiddleOfTheStream(t *testing.T) {
	each(t, func(t *testing.T, k standin.Kind) {
		srv := standin.Start(t, k, standin.Config{Replies: []standin.Reply{{Text: codeBody, ErrorAfter: 4}}})
		s, err := client(t, srv.URL).Complete(context.Background(), model.Request{Prompt: codePrompt, Params: model.Params{MaxTokens: 50}})
		if err != nil {
			t.Fatal(err)
		}
		text, toks, err := drain(s)
		if err == nil || len(toks) == 0 || text == codeBody {
			t.Fatalf("err = %v after %q, want the stream to fail after some tokens", err, text)
		}
	})
}

func TestLogprobsInEachServersShape(t *testing.T) {
	each(t, func(t *testing.T, k standin.Kind) {
		srv := standin.Start(t, k, standin.Config{Replies: []standin.Reply{{Text: codeBody}}})
		s, err := client(t, srv.URL).Complete(context.Background(), model.Request{Prompt: codePrompt, Params: model.Params{MaxTokens: 50, Logprobs: 2}})
		if err != nil {
			t.Fatal(err)
		}
		_, toks, err := drain(s)
		if err != nil {
			t.Fatal(err)
		}
		for i, tok := range toks {
			if !tok.HasLogprob || tok.Logprob != standin.Logprob(i) || len(tok.TopLogprobs) != 2 {
				t.Fatalf("token %d %+v: want logprob %v and 2 alternatives", i, tok, standin.Logprob(i))
			}
		}
	})
	t.Run("ollama without logprobs", func(t *testing.T) {
		srv := standin.Start(t, standin.Ollama, standin.Config{NoLogprobs: true, Replies: []standin.Reply{{Text: codeBody}}})
		s, err := client(t, srv.URL).Complete(context.Background(), model.Request{Prompt: codePrompt, Params: model.Params{MaxTokens: 50, Logprobs: 2}})
		if err != nil {
			t.Fatal(err)
		}
		_, toks, _ := drain(s)
		for _, tok := range toks {
			if tok.HasLogprob {
				t.Fatalf("token %+v claims a logprob the server never sent", tok)
			}
		}
	})
}

func TestFillInTheMiddle(t *testing.T) {
	suffix := "\nint main() { return sum({1, 2}) == 3 ? 0 : 1; }\n"
	each(t, func(t *testing.T, k standin.Kind) {
		srv := standin.Start(t, k, standin.Config{Replies: []standin.Reply{{Text: codeBody}}})
		s, err := client(t, srv.URL).Complete(context.Background(), model.Request{Prompt: codePrompt, Suffix: suffix, Params: model.Params{MaxTokens: 50}})
		if err != nil {
			t.Fatal(err)
		}
		drain(s)
		q := lastCompletion(t, srv)
		want := "<|fim_prefix|>" + codePrompt + "<|fim_suffix|>" + suffix + "<|fim_middle|>"
		if q.Prompt != want {
			t.Fatalf("the model got %q, want Qwen2.5-Coder's FIM prompt %q", q.Prompt, want)
		}
		if k == standin.Ollama && !q.Raw {
			t.Error("Ollama request not raw")
		}
		// Off: the suffix stays home.
		s, err = client(t, srv.URL, model.WithFIM("off")).Complete(context.Background(), model.Request{Prompt: codePrompt, Suffix: suffix, Params: model.Params{MaxTokens: 50}})
		if err != nil {
			t.Fatal(err)
		}
		drain(s)
		if q := lastCompletion(t, srv); q.Prompt != codePrompt {
			t.Errorf("fim off: the model got %q", q.Prompt)
		}
	})
	for _, tc := range []struct{ model, want string }{
		{"deepseek-ai/deepseek-coder-6.7b-base", "<｜fim▁begin｜>P<｜fim▁hole｜>S<｜fim▁end｜>"},
		{"bigcode/starcoder2-7b", "<fim_prefix>P<fim_suffix>S<fim_middle>"},
		{"codellama/CodeLlama-7b-hf", "<PRE> P <SUF>S <MID>"},
		{"mistralai/Codestral-22B-v0.1", "[SUFFIX]S[PREFIX]P"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			srv := standin.Start(t, standin.VLLM, standin.Config{Model: tc.model, Replies: []standin.Reply{{Text: codeBody}}})
			s, err := client(t, srv.URL).Complete(context.Background(), model.Request{Prompt: "P", Suffix: "S", Params: model.Params{MaxTokens: 50}})
			if err != nil {
				t.Fatal(err)
			}
			drain(s)
			if q := lastCompletion(t, srv); q.Prompt != tc.want {
				t.Errorf("prompt %q, want %q", q.Prompt, tc.want)
			}
		})
	}
}

func TestOllamaInstructModelContinuesCode(t *testing.T) {
	srv := standin.Start(t, standin.Ollama, standin.Config{Replies: []standin.Reply{{Text: codeBody}}})
	s, err := client(t, srv.URL).Complete(context.Background(), model.Request{Model: "qwen2.5-coder", Prompt: codePrompt, Params: model.Params{MaxTokens: 100}})
	if err != nil {
		t.Fatal(err)
	}
	text, _, err := drain(s)
	if err != nil || standin.Prose(text) || text != codeBody {
		t.Fatalf("text %q (err %v): want the code continued, not a chat answer", text, err)
	}
	q := lastCompletion(t, srv)
	if q.Path != "/api/generate" || !q.Raw {
		t.Errorf("request to %s raw=%v, want /api/generate raw", q.Path, q.Raw)
	}
}

// An Ollama model whose FIM format Hydra does not know by name, but whose template takes a
// suffix (capability "insert"), gets the suffix through Ollama's template: "suffix" without
// raw.
func TestOllamaSuffixThroughTheModelsTemplate(t *testing.T) {
	srv := standin.Start(t, standin.Ollama, standin.Config{Model: "mycoder:latest", Replies: []standin.Reply{{Text: codeBody}}})
	suffix := "\nint main() { return 0; }\n"
	s, err := client(t, srv.URL).Complete(context.Background(), model.Request{Model: "mycoder", Prompt: codePrompt, Suffix: suffix, Params: model.Params{MaxTokens: 50}})
	if err != nil {
		t.Fatal(err)
	}
	if text, _, err := drain(s); err != nil || text != codeBody {
		t.Fatalf("text %q, err %v", text, err)
	}
	q := lastCompletion(t, srv)
	if q.Raw || q.Suffix != suffix || !strings.HasPrefix(q.Prompt, "<|fim_prefix|>") {
		t.Errorf("request raw=%v suffix=%q prompt %q: want the suffix through the template", q.Raw, q.Suffix, q.Prompt)
	}
}
