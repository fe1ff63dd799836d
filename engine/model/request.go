package model

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"
	"time"
)

// httpError is a response other than 200 that is not worth retrying (a 4xx other than 429).
type httpError struct {
	url    string // the endpoint, password redacted
	status int
	line   string // e.g. "400 Bad Request"
	msg    string
	body   []byte
	hint   string // what to do about it, when known
}

func (e *httpError) Error() string {
	s := fmt.Sprintf("model server %s: HTTP %s", e.url, e.line)
	if e.msg != "" {
		s += ": " + e.msg
	}
	if e.hint != "" {
		s += " — " + e.hint
	}
	return s
}

// ErrWrongURL marks a model server URL that does not answer like an OpenAI-compatible API
// base: an HTML page, llama.cpp's native events, a server without text completions.
var ErrWrongURL = errors.New("not an OpenAI-compatible completions endpoint")

// wrongURLError says what answered at the URL and what the user likely meant.
type wrongURLError struct {
	url  string
	what string
	hint string
}

func (e *wrongURLError) Error() string {
	s := fmt.Sprintf("model server URL %s: %s, not an OpenAI-compatible completion stream", e.url, e.what)
	if e.hint != "" {
		s += "; " + e.hint
	}
	return s
}

func (e *wrongURLError) Unwrap() error { return ErrWrongURL }

// urlHint is the likely fix for a URL that answered wrongly: the same server's /v1 base (also
// when the URL names an endpoint, …/v1/completions, instead of the base).
func (c *Client) urlHint() string {
	base := strings.TrimRight(c.shown, "/")
	for _, ep := range []string{"/chat/completions", "/completions", "/completion"} {
		if strings.HasSuffix(base, ep) {
			b := strings.TrimSuffix(base, ep)
			if !strings.HasSuffix(b, "/v1") {
				b += "/v1"
			}
			return fmt.Sprintf("did you mean %s ? (the API base, without the endpoint)", b)
		}
	}
	if strings.HasSuffix(base, "/v1") {
		return "is it the API base of an OpenAI-compatible server (vLLM, SGLang, llama-server, Ollama)?"
	}
	return fmt.Sprintf("did you mean %s/v1 ?", base)
}

// wire is one request as sent.
type wire struct {
	url    string
	body   []byte
	ndjson bool // Ollama's /api/generate streams JSON lines, not server-sent events
}

// Complete starts a streamed completion. It returns once the server sent the first event of the
// stream (so failures before the first token are retried here), or an error: one wrapping
// ErrUnavailable when the server stayed unreachable or failing, ErrWrongURL when the URL does
// not answer like an OpenAI completions endpoint, another for a request the server rejects (4xx
// other than 429) or a cancelled ctx. ctx governs the whole stream: cancelling it closes the
// response.
//
// On first use the client learns what the server is (Server): the context length, so that
// max_tokens is min(Params.MaxTokens, context − prompt − margin) and a prompt that cannot fit
// is cut from its start (for the model only: the stream's Notes say so); the server's
// tokenizer, to count the prompt; the one model it serves, when Request.Model is empty. A 400
// that says the context is exceeded is parsed and the request retried once with a size that
// fits. With Ollama the request goes to its native /api/generate with raw: true, so that
// instruct models continue the code instead of chatting. With a fill-in-the-middle format for
// the model (WithFIM) Request.Suffix is sent too.
func (c *Client) Complete(ctx context.Context, req Request) (Stream, error) {
	info, err := c.Server(ctx)
	if err != nil {
		return nil, err
	}
	name, err := c.pickModel(info, req.Model)
	if err != nil {
		return nil, err
	}
	ctxLen, insert := c.contextLen(ctx, info, name)
	suffix := ""
	var fim *FIM
	if strings.TrimSpace(req.Suffix) != "" && !strings.EqualFold(strings.TrimSpace(c.fim), FIMOff) {
		fim = FIMFor(c.fim, name)
		if fim != nil || (info.Kind == KindOllama && insert) {
			suffix = req.Suffix
		}
	}
	if suffix != "" && ctxLen == 0 {
		suffix = cutEnd(suffix, 8<<10) // no context known: keep the suffix modest
	}
	count := func(prefix, suffix string) (int, bool) {
		text := prefix
		if fim != nil && suffix != "" {
			text = fim.Prompt(prefix, suffix)
		} else if suffix != "" {
			text = prefix + suffix
		}
		if n, ok := c.tokenize(ctx, info.Kind, name, text); ok {
			return n, true
		}
		return estimateTokens(text), false
	}
	want := req.Params.MaxTokens
	p := plan(ctxLen, want, req.Prompt, suffix, count)
	s, err := c.start(ctx, info, name, fim, req, p)
	var he *httpError
	if errors.As(err, &he) && he.status == http.StatusBadRequest {
		if ce, ok := parseContextError(he.body); ok {
			// The server counted differently: plan again with its figures, once.
			if ce.Context > 0 {
				ctxLen = ce.Context
			}
			// Our count of what was sent, to scale by the server's.
			base := p.promptToks
			if base == 0 {
				base, _ = count(p.prefix, p.suffix)
			}
			counted := func(prefix, suffix string) (int, bool) {
				n, _ := count(prefix, suffix)
				if ce.Prompt == 0 || base == 0 {
					return n*3/2 + 1, false // the server counts more than we thought, by how much it did not say
				}
				return (n*ce.Prompt + base - 1) / base, true
			}
			if ctxLen > 0 {
				p = plan(ctxLen, want, req.Prompt, suffix, counted)
				s, err = c.start(ctx, info, name, fim, req, p)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if note := p.cutNote(ctxLen, req.Prompt); note != "" {
		s.notes = append(s.notes, note)
	}
	if want > 0 && p.maxTokens < want && ctxLen > 0 {
		s.notes = append(s.notes, fmt.Sprintf("max_tokens was lowered to fit the model's context of %d tokens", ctxLen))
	}
	switch {
	case p.promptToks > 0: // counted for the plan
		s.promptToks, s.promptExact = p.promptToks, p.exact
	default:
		n, exact := count(p.prefix, p.suffix)
		s.promptToks, s.promptExact = n, exact
	}
	return s, nil
}

// contextLen is the context length of model name (0 when unknown), and for Ollama whether the
// model's template takes a suffix.
func (c *Client) contextLen(ctx context.Context, info *ServerInfo, name string) (int, bool) {
	switch {
	case info.Kind == KindOllama:
		return c.ollamaContext(ctx, name)
	case info.ContextLen > 0:
		return info.ContextLen, false
	}
	if m := info.Model(name); m != nil {
		return m.ContextLen, false
	}
	if len(info.Models) == 1 {
		return info.Models[0].ContextLen, false
	}
	return 0, false
}

// start builds the request for plan p and sends it.
func (c *Client) start(ctx context.Context, info *ServerInfo, name string, fim *FIM, req Request, p fitPlan) (*stream, error) {
	prompt := p.prefix
	if fim != nil && p.suffix != "" {
		prompt = fim.Prompt(p.prefix, p.suffix)
	}
	var w wire
	if info.Kind == KindOllama {
		w = c.ollamaRequest(name, prompt, fim == nil && p.suffix != "", p.suffix, req.Params, p.maxTokens)
	} else {
		body, err := json.Marshal(completionRequest{
			Model:         name,
			Prompt:        prompt,
			Stream:        true,
			StreamOptions: &streamOptions{IncludeUsage: true, ContinuousUsageStats: c.contUsage},
			MaxTokens:     p.maxTokens,
			Temperature:   req.Params.Temperature,
			Stop:          req.Params.Stop,
			Logprobs:      req.Params.Logprobs,
			Seed:          req.Params.Seed,
		})
		if err != nil {
			return nil, fmt.Errorf("encode completion request: %w", err)
		}
		w = wire{url: c.base + "/completions", body: body}
	}
	key := ""
	if c.keyEnv != "" {
		key = os.Getenv(c.keyEnv)
	}
	var s *stream
	err := c.retry(ctx, key, func() error {
		var err error
		s, err = c.try(ctx, w, key)
		return err
	})
	if err != nil {
		var he *httpError
		if errors.As(err, &he) && he.status == http.StatusNotFound {
			he.hint = c.notFoundHint(info, name, he.msg)
		}
		return nil, err
	}
	s.logprobsWanted = req.Params.Logprobs > 0
	return s, nil
}

// notFoundHint explains a 404: an unknown model (vLLM "The model `x` does not exist.", Ollama
// "model 'x' not found"), or a server without /completions.
func (c *Client) notFoundHint(info *ServerInfo, name, msg string) string {
	low := strings.ToLower(msg)
	if strings.Contains(low, "model") && (strings.Contains(low, "not exist") || strings.Contains(low, "not found")) {
		if ids := info.IDs(); len(ids) > 0 {
			return fmt.Sprintf("model %q is not served there; it serves: %s", name, strings.Join(ids, ", "))
		}
		return fmt.Sprintf("model %q is not served there", name)
	}
	if !strings.HasSuffix(strings.TrimRight(c.shown, "/"), "/v1") {
		return c.urlHint()
	}
	return "the server has no text completions endpoint (a chat-only server?); Hydra needs /v1/completions"
}

// retry runs one attempt after another: a server that is not up yet (connection refused or
// reset, 503) is waited for with backoff for up to the loading wait, saying so through
// progress; other retryable failures (429, other 5xx, a stream that ended before its first
// event) get the client's number of tries. Then it gives up with an UnavailableError.
func (c *Client) retry(ctx context.Context, key string, attempt func() error) error {
	start := time.Now()
	wait := c.backoff
	said := time.Time{}
	for tries := 1; ; tries++ {
		err := attempt()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("model server %s: %w", c.shown, ctx.Err())
		}
		var r *errRetryable
		var le *loadingError
		loading := false
		switch {
		case errors.As(err, &le):
			r = &errRetryable{reason: le.reason, err: err}
			loading = true
		case errors.As(err, &r):
			loading = r.loading
		default:
			return redactErr(err, key)
		}
		elapsed := time.Since(start)
		if tries >= c.tries && (!loading || elapsed >= c.loadWait) {
			u := &UnavailableError{URL: c.shown, Tries: tries, Reason: redact(r.reason, key), Last: redactErr(r.err, key)}
			if loading && c.loadWait > 0 {
				u.Waited = elapsed.Round(time.Second)
			}
			return u
		}
		d := wait
		if r.after > 0 {
			d = min(max(d, r.after), c.maxWait)
		}
		if loading {
			d = max(min(d, c.loadWait-elapsed), time.Millisecond)
			if time.Since(said) >= 2*time.Second || said.IsZero() {
				said = time.Now()
				c.say(ctx, fmt.Sprintf("waiting for the model server %s (%s): %.0fs of %.0fs",
					c.shown, redact(r.reason, key), elapsed.Seconds(), c.loadWait.Seconds()))
			}
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("model server %s: %w", c.shown, ctx.Err())
		case <-t.C:
		}
		wait = min(wait*2, 4*time.Second)
	}
}

// waitLoading is retry for calls that are not completions (learning what the server is).
func (c *Client) waitLoading(ctx context.Context, attempt func() error) error {
	return c.retry(ctx, "", attempt)
}

// try makes one request and reads up to its first event.
func (c *Client) try(ctx context.Context, w wire, key string) (*stream, error) {
	rctx, cancel := context.WithCancel(ctx)
	hreq, err := http.NewRequestWithContext(rctx, http.MethodPost, w.url, bytes.NewReader(w.body))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("model server %s: %w", c.shown, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if !w.ndjson {
		hreq.Header.Set("Accept", "text/event-stream")
	}
	if key != "" {
		hreq.Header.Set("Authorization", "Bearer "+key)
	}
	s := &stream{cancel: cancel, url: c.shown, idle: c.timeouts.Idle, ndjson: w.ndjson, hint: c.urlHint()}
	// One timer serves the first-token and the idle timeout: it fires cancel, which aborts
	// whatever read is blocked.
	s.timer = time.AfterFunc(c.timeouts.FirstToken, func() {
		s.mu.Lock()
		s.timedOut = true
		s.mu.Unlock()
		cancel()
	})
	resp, err := c.hc.Do(hreq)
	if err != nil {
		s.stop()
		if s.didTimeOut() {
			return nil, &errRetryable{reason: fmt.Sprintf("no response within %v", c.timeouts.FirstToken), err: err}
		}
		return nil, &errRetryable{reason: connReason(err), err: err, loading: true}
	}
	shownURL := strings.Replace(w.url, c.base, c.shown, 1)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<10))
		s.stop()
		resp.Body.Close()
		msg := clip(errorMessage(b))
		reason := fmt.Sprintf("HTTP %s", resp.Status)
		if msg != "" {
			reason += ": " + msg
		}
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			return nil, &errRetryable{reason: reason, err: fmt.Errorf("%s", reason), after: retryAfter(resp),
				loading: resp.StatusCode == http.StatusServiceUnavailable}
		}
		if isHTML(resp.Header.Get("Content-Type"), b) {
			return nil, &wrongURLError{url: shownURL, what: fmt.Sprintf("HTTP %s with an HTML page", resp.Status), hint: c.urlHint()}
		}
		return nil, &httpError{url: shownURL, status: resp.StatusCode, line: resp.Status, msg: msg, body: b}
	}
	if ct := resp.Header.Get("Content-Type"); isHTML(ct, nil) {
		s.stop()
		resp.Body.Close()
		return nil, &wrongURLError{url: shownURL, what: "an HTML page", hint: c.urlHint()}
	}
	s.body = resp.Body
	s.rd = bufio.NewReaderSize(resp.Body, 64<<10)
	if err := s.fill(); err != nil {
		if errors.Is(err, io.EOF) && s.done {
			return s, nil // an empty completion, properly finished
		}
		s.stop()
		var wu *wrongURLError
		if errors.As(err, &wu) {
			wu.url = shownURL
			return nil, wu
		}
		if s.didTimeOut() {
			return nil, &errRetryable{reason: fmt.Sprintf("no token within %v", c.timeouts.FirstToken), err: err}
		}
		var se *serverError
		if errors.As(err, &se) {
			if ce, ok := parseContextError([]byte(se.raw)); ok && (ce.Context > 0 || ce.Prompt > 0) {
				return nil, &httpError{url: shownURL, status: http.StatusBadRequest, line: "400 (in the stream)", msg: se.msg, body: []byte(se.raw)}
			}
			return nil, &errRetryable{reason: "stream error: " + se.msg, err: err}
		}
		return nil, &errRetryable{reason: "stream ended before its first token", err: err}
	}
	return s, nil
}

// isHTML tells whether a response is a web page (a wrong URL: a web UI, a proxy's page).
func isHTML(contentType string, body []byte) bool {
	if mt, _, err := mime.ParseMediaType(contentType); err == nil && (mt == "text/html" || mt == "application/xhtml+xml") {
		return true
	}
	b := bytes.TrimSpace(body)
	return len(b) > 0 && (bytes.HasPrefix(bytes.ToLower(b[:min(len(b), 15)]), []byte("<!doctype html")) || bytes.HasPrefix(bytes.ToLower(b), []byte("<html")))
}
