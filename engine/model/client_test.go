package model_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/engine/model"
	"github.com/hydra-lsp/hydra/engine/model/modeltest"
)

// The servers in these tests are the scripted stand-in of package modeltest (or a raw httptest
// handler): no model is involved.

func newClient(t *testing.T, url string, opts ...model.Option) *model.Client {
	t.Helper()
	opts = append([]model.Option{model.WithRetry(3, time.Millisecond), model.WithLoadingWait(0)}, opts...)
	c, err := model.NewClient(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// drain reads a stream to its end and returns the text, the tokens and the final error
// (nil for a clean io.EOF).
func drain(t *testing.T, s model.Stream) (string, []model.Token, error) {
	t.Helper()
	return model.Collect(context.Background(), s)
}

func TestClientStreamsTextUsageAndSendsParams(t *testing.T) {
	t.Setenv("HYDRA_API_KEY", "sk-test-123")
	text := "int add(int a, int b) {\n  return a + b;\n}\n"
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{PromptSuffix: "// add\n", Text: text, Chunk: 5}}})
	c := newClient(t, srv.URL)
	prompt := "#include <cstdio>\n// add\n"
	s, err := c.Complete(context.Background(), model.Request{Model: "m1", Prompt: prompt,
		Params: model.Params{MaxTokens: 100, Temperature: 0.2, Stop: []string{"\n\n\n"}, Seed: 7}})
	if err != nil {
		t.Fatal(err)
	}
	got, toks, err := drain(t, s)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	if got != text {
		t.Errorf("text = %q, want %q", got, text)
	}
	wantPieces := (len(text) + 4) / 5
	if len(toks) != wantPieces {
		t.Errorf("%d tokens, want %d (pieces of 5 bytes)", len(toks), wantPieces)
	}
	if s.FinishReason() != "stop" {
		t.Errorf("finish reason %q, want stop", s.FinishReason())
	}
	u := s.Usage()
	if u.CompletionTokens != wantPieces || u.PromptTokens != (len(prompt)+3)/4 {
		t.Errorf("usage = %+v, want %d completion and %d prompt tokens (from the server)", u, wantPieces, (len(prompt)+3)/4)
	}
	calls := srv.Calls()
	if len(calls) != 1 {
		t.Fatalf("%d calls, want 1", len(calls))
	}
	call := calls[0]
	if call.Model != "m1" || call.Prompt != prompt || !call.Stream || call.Params.MaxTokens != 100 ||
		call.Params.Temperature != 0.2 || len(call.Params.Stop) != 1 || call.Params.Seed != 7 {
		t.Errorf("server saw %+v", call)
	}
	if call.Authorization != "Bearer sk-test-123" {
		t.Errorf("Authorization = %q, want the key from HYDRA_API_KEY", call.Authorization)
	}
}

func TestClientReportsCachedTokens(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Text: "x;\n"}}})
	c := newClient(t, srv.URL)
	base := strings.Repeat("int a;\n", 40)
	for i, p := range []string{base + "// one\n", base + "// two\n"} {
		s, err := c.Complete(context.Background(), model.Request{Prompt: p})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := drain(t, s); err != nil {
			t.Fatal(err)
		}
		cached := s.Usage().CachedTokens
		if i == 0 && cached != 0 {
			t.Errorf("first request: %d cached tokens, want 0", cached)
		}
		if i == 1 && cached < len(base)/4 {
			t.Errorf("second request: %d cached tokens, want ≥ %d (shared prefix)", cached, len(base)/4)
		}
	}
}

func TestClientAPIKeyFromNamedEnvAndNoKey(t *testing.T) {
	t.Setenv("MY_KEY", "sk-other")
	t.Setenv("HYDRA_API_KEY", "")
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Text: "ok"}}})
	for _, tc := range []struct {
		name string
		opts []model.Option
		want string
	}{
		{"named variable", []model.Option{model.WithAPIKeyEnv("MY_KEY")}, "Bearer sk-other"},
		{"empty default variable sends nothing", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, srv.URL, tc.opts...)
			s, err := c.Complete(context.Background(), model.Request{Prompt: "p"})
			if err != nil {
				t.Fatal(err)
			}
			drain(t, s)
			calls := srv.Calls()
			if got := calls[len(calls)-1].Authorization; got != tc.want {
				t.Errorf("Authorization = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestClientCountsPiecesWhenServerReportsNoUsage(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Text: "abcdefghij", Chunk: 3, NoUsage: true}}})
	s, err := newClient(t, srv.URL).Complete(context.Background(), model.Request{Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := drain(t, s); err != nil {
		t.Fatal(err)
	}
	// The stand-in is no known server (no /tokenize): the prompt is estimated, and says so.
	if u := s.Usage(); u.CompletionTokens != 4 || u.PromptTokens == 0 || !u.PromptEstimated {
		t.Errorf("usage = %+v, want 4 counted completion tokens and an estimated prompt figure", u)
	}
}

func TestClientParsesLogprobs(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Text: "aabbcc", Chunk: 2, Logprobs: []float64{-0.5, -2, -0.25}}}})
	s, err := newClient(t, srv.URL).Complete(context.Background(), model.Request{Prompt: "p", Params: model.Params{Logprobs: 1}})
	if err != nil {
		t.Fatal(err)
	}
	_, toks, err := drain(t, s)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{-0.5, -2, -0.25}
	if len(toks) != 3 {
		t.Fatalf("%d tokens, want 3", len(toks))
	}
	for i, tok := range toks {
		if tok.Logprob != want[i] || tok.TopLogprobs[tok.Text] != want[i] {
			t.Errorf("token %d = %+v, want logprob %v", i, tok, want[i])
		}
	}
}

func TestClientHonoursMaxTokensFinishReason(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Text: "0123456789", Chunk: 2}}})
	s, err := newClient(t, srv.URL).Complete(context.Background(), model.Request{Prompt: "p", Params: model.Params{MaxTokens: 2}})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := drain(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if got != "0123" || s.FinishReason() != "length" {
		t.Errorf("got %q finish %q, want \"0123\" finish length", got, s.FinishReason())
	}
}

func TestClientRetriesBeforeFirstToken(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fail  modeltest.Rule
		calls int
	}{
		{"500 twice then ok", modeltest.Rule{Status: 500, Times: 2}, 3},
		{"429 once then ok", modeltest.Rule{Status: 429, Times: 1}, 2},
		{"503 once then ok", modeltest.Rule{Status: 503, Times: 1}, 2},
		{"cut before first token then ok", modeltest.Rule{Text: "zzz", Cut: true, CutAfter: 0, Times: 1}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{tc.fail, {Text: "done"}}})
			s, err := newClient(t, srv.URL).Complete(context.Background(), model.Request{Prompt: "p"})
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			got, _, err := drain(t, s)
			if err != nil || got != "done" {
				t.Errorf("got %q, %v; want \"done\"", got, err)
			}
			if n := len(srv.Calls()); n != tc.calls {
				t.Errorf("%d calls, want %d", n, tc.calls)
			}
		})
	}
}

func TestClientUnavailable(t *testing.T) {
	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + l.Addr().String() + "/v1"
	l.Close()

	failing := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Status: 500, Message: "engine overloaded"}}})
	for _, tc := range []struct {
		name, url, want string
		calls           func() int
	}{
		{"connection refused", deadURL, "model server " + deadURL + ": connection refused after 3 tries", nil},
		{"always 500", failing.URL, "HTTP 500 Internal Server Error: engine overloaded after 3 tries", func() int { return len(failing.Calls()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newClient(t, tc.url).Complete(context.Background(), model.Request{Prompt: "p"})
			if !errors.Is(err, model.ErrUnavailable) {
				t.Fatalf("err = %v, want one wrapping ErrUnavailable", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %q, want it to contain %q", err, tc.want)
			}
			if tc.calls != nil && tc.calls() != 3 {
				t.Errorf("%d calls, want 3", tc.calls())
			}
		})
	}
}

func TestClientDoesNotRetryRejectedRequest(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Status: 400, Message: "unknown model"}}})
	_, err := newClient(t, srv.URL).Complete(context.Background(), model.Request{Prompt: "p"})
	if err == nil || errors.Is(err, model.ErrUnavailable) || !strings.Contains(err.Error(), "unknown model") {
		t.Errorf("err = %v, want a plain rejection naming the server's message", err)
	}
	if n := len(srv.Calls()); n != 1 {
		t.Errorf("%d calls, want 1 (4xx is not retried)", n)
	}
}

func TestClientKeepsAPIKeyOutOfErrors(t *testing.T) {
	const key = "sk-very-secret-42"
	t.Setenv("HYDRA_API_KEY", key)
	// A server that echoes the Authorization header into its error body.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprintf(w, `{"error":{"message":"bad header %s"}}`, r.Header.Get("Authorization"))
	}))
	defer echo.Close()
	_, err := newClient(t, echo.URL+"/v1").Complete(context.Background(), model.Request{Prompt: "p"})
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), key) {
		t.Errorf("error text leaks the key: %q", err)
	}
	if !strings.Contains(err.Error(), "[REDACTED]") {
		t.Errorf("error %q: want the echoed key redacted", err)
	}
}

func TestClientStreamCutAfterTokens(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Text: "int main() { return 0; }\n", Chunk: 4, Cut: true, CutAfter: 3}}})
	s, err := newClient(t, srv.URL).Complete(context.Background(), model.Request{Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := drain(t, s)
	if !errors.Is(err, model.ErrStreamCut) {
		t.Fatalf("err = %v, want ErrStreamCut", err)
	}
	if got != "int main() {" {
		t.Errorf("text before the cut = %q, want the 3 pieces sent", got)
	}
	if n := len(srv.Calls()); n != 1 {
		t.Errorf("%d calls, want 1 (no retry after tokens arrived)", n)
	}
}

func TestClientTimeouts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rule    modeltest.Rule
		wantErr error
		want    string
	}{
		{"no first token", modeltest.Rule{Text: "abc", FirstDelayMS: 5000}, model.ErrUnavailable, "no token within"},
		{"idle stream", modeltest.Rule{Text: "abcdefgh", Chunk: 2, DelayMS: 5000}, model.ErrStreamCut, "no data for"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{tc.rule}})
			c := newClient(t, srv.URL, model.WithRetry(2, time.Millisecond),
				model.WithTimeouts(model.Timeouts{FirstToken: 100 * time.Millisecond, Idle: 100 * time.Millisecond}))
			s, err := c.Complete(context.Background(), model.Request{Prompt: "p"})
			if err == nil {
				_, _, err = drain(t, s)
			}
			if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %v containing %q", err, tc.wantErr, tc.want)
			}
		})
	}
}

func TestClientCancellation(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Text: strings.Repeat("x", 400), Chunk: 1, DelayMS: 20}}})
	c := newClient(t, srv.URL)

	t.Run("cancel the Complete context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		s, err := c.Complete(ctx, model.Request{Prompt: "p"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Next(context.Background()); err != nil {
			t.Fatal(err)
		}
		cancel()
		_, _, err = drain(t, s)
		if err == nil {
			t.Fatal("stream went on after cancel")
		}
	})
	t.Run("cancel the Next context", func(t *testing.T) {
		s, err := c.Complete(context.Background(), model.Request{Prompt: "p"})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		var nerr error
		for nerr == nil {
			_, nerr = s.Next(ctx)
		}
		if !errors.Is(nerr, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", nerr)
		}
	})
	t.Run("Close from another goroutine", func(t *testing.T) {
		s, err := c.Complete(context.Background(), model.Request{Prompt: "p"})
		if err != nil {
			t.Fatal(err)
		}
		time.AfterFunc(50*time.Millisecond, func() { s.Close() })
		_, toks, err := drain(t, s)
		if err == nil || errors.Is(err, model.ErrStreamCut) {
			t.Errorf("err = %v, want a closed-stream error (not a cut)", err)
		}
		if len(toks) >= 400 {
			t.Errorf("read all %d tokens despite Close", len(toks))
		}
		if s.Close() != nil {
			t.Error("second Close failed")
		}
	})
}

// TestClientParsesServerSentEvents feeds hand-written event streams the way various servers
// write them.
func TestClientParsesServerSentEvents(t *testing.T) {
	ev := func(text, fin string) string {
		f := "null"
		if fin != "" {
			f = `"` + fin + `"`
		}
		return fmt.Sprintf(`{"choices":[{"index":0,"text":%q,"finish_reason":%s}]}`, text, f)
	}
	for _, tc := range []struct {
		name    string
		body    string
		want    string
		wantErr error
	}{
		{"CRLF lines, comments and event names",
			": keep-alive\r\n\r\nevent: message\r\ndata: " + ev("a", "") + "\r\n\r\ndata: " + ev("b", "stop") + "\r\n\r\ndata: [DONE]\r\n\r\n", "ab", nil},
		{"finish reason without [DONE]", "data: " + ev("a", "") + "\n\ndata: " + ev("b", "stop") + "\n\n", "ab", nil},
		{"last event without blank line", "data: " + ev("a", "") + "\n\ndata: " + ev("b", "stop"), "ab", nil},
		{"empty pieces skipped", "data: " + ev("", "") + "\n\ndata: " + ev("a", "") + "\n\ndata: " + ev("", "stop") + "\n\ndata: [DONE]\n\n", "a", nil},
		{"ended without finish", "data: " + ev("a", "") + "\n\ndata: " + ev("b", "") + "\n\n", "ab", model.ErrStreamCut},
		{"error event after tokens", "data: " + ev("a", "") + "\n\ndata: {\"error\":{\"message\":\"oom\"}}\n\n", "a", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			s, err := newClient(t, srv.URL+"/v1").Complete(context.Background(), model.Request{Prompt: "p"})
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := drain(t, s)
			if got != tc.want {
				t.Errorf("text %q, want %q", got, tc.want)
			}
			switch {
			case tc.name == "error event after tokens":
				if err == nil || !strings.Contains(err.Error(), "oom") {
					t.Errorf("err = %v, want the server's message", err)
				}
			case tc.wantErr == nil && err != nil:
				t.Errorf("err = %v", err)
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Errorf("err = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func TestClientListsModels(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Script{})
	names, err := newClient(t, srv.URL).Models(context.Background())
	if err != nil || len(names) != 1 || names[0] != modeltest.Name {
		t.Errorf("Models = %v, %v; want [%s]", names, err, modeltest.Name)
	}
}

func TestNewClientRejectsBadURL(t *testing.T) {
	for _, u := range []string{"", "localhost:8000", "ftp://x/v1", "http://"} {
		if _, err := model.NewClient(u); err == nil {
			t.Errorf("NewClient(%q): no error", u)
		}
	}
}

func TestClientUsageOfAStreamClosedEarly(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Text: strings.Repeat("abcd", 50), Chunk: 4}}})
	prompt := strings.Repeat("p", 40)
	for _, tc := range []struct {
		name       string
		continuous bool
		wantPrompt int
		estimated  bool
	}{
		{"continuous usage stats (default)", true, 10, false},
		// No server figure before the end: the prompt is estimated (40 bytes, at most 2.5 a
		// token, rounded up, plus one: 17) and marked so.
		{"usage only at the end", false, 17, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := newClient(t, srv.URL, model.WithContinuousUsage(tc.continuous)).Complete(context.Background(), model.Request{Prompt: prompt})
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if _, err := s.Next(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			s.Close()
			u := s.Usage()
			if u.PromptTokens != tc.wantPrompt || u.PromptEstimated != tc.estimated || u.CompletionTokens < 2 || u.CompletionTokens > 3 {
				t.Errorf("usage after Close = %+v, want %d prompt tokens and 2 completion tokens", u, tc.wantPrompt)
			}
		})
	}
}

func TestClientNamesAWrongURL(t *testing.T) {
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!DOCTYPE html><html><body>Open WebUI</body></html>")
	}))
	defer html.Close()
	// A chat-only server: /v1/chat/completions and /v1/models, no /v1/completions.
	chat := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			fmt.Fprint(w, `{"object":"list","data":[{"id":"chat-model","object":"model","owned_by":"someone"}]}`)
		case "/v1/chat/completions":
			fmt.Fprint(w, `{}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"detail":"Not Found"}`)
		}
	}))
	defer chat.Close()
	for _, tc := range []struct{ name, url, want string }{
		{"an HTML page", html.URL, "did you mean " + html.URL + "/v1 ?"},
		{"the completions endpoint instead of the base", chat.URL + "/v1/completions", "did you mean " + chat.URL + "/v1 ?"},
		{"a chat-only server", chat.URL + "/v1", "no text completions endpoint"},
		{"llama.cpp's native endpoint", chat.URL + "/completion", "did you mean " + chat.URL + "/v1 ?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newClient(t, tc.url).Complete(context.Background(), model.Request{Model: "chat-model", Prompt: "int main() {\n"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to say %q", err, tc.want)
			}
		})
	}
}
