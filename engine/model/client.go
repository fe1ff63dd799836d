package model

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultAPIKeyEnv is the environment variable the API key is read from unless WithAPIKeyEnv
// names another.
const DefaultAPIKeyEnv = "HYDRA_API_KEY"

// Timeouts bound the phases of one request. Zero fields mean the defaults of DefaultTimeouts.
type Timeouts struct {
	// Connect bounds the TCP (and TLS) connection set-up.
	Connect time.Duration
	// FirstToken bounds the time from sending the request to the first streamed event; it
	// includes the server's queueing and prefill of the prompt.
	FirstToken time.Duration
	// Idle bounds the silence between two streamed events once the stream runs.
	Idle time.Duration
}

// DefaultTimeouts are generous: a busy server may queue a request and prefill a long prompt.
func DefaultTimeouts() Timeouts {
	return Timeouts{Connect: 10 * time.Second, FirstToken: 2 * time.Minute, Idle: time.Minute}
}

// Client is a Generator for an OpenAI-compatible /v1/completions endpoint (vLLM, SGLang,
// llama.cpp server, Ollama). It streams with server-sent events, asks for usage in the stream
// (stream_options.include_usage) and counts streamed pieces when the server reports none.
//
// Complete retries connection errors, HTTP 429 and 5xx, and streams that end before their first
// event, with exponential backoff (3 tries by default); then it gives up with an error wrapping
// ErrUnavailable. Once the first event arrived nothing is retried: a stream cut after that is an
// error wrapping ErrStreamCut from Stream.Next.
//
// The API key is read from an environment variable (HYDRA_API_KEY unless WithAPIKeyEnv names
// another) when the request is made, sent as "Authorization: Bearer", and never put into error
// text or logs. A Client is safe for concurrent use.
type Client struct {
	base      string // without trailing slash, e.g. http://localhost:8000/v1
	shown     string // base with any password redacted, for error text
	hc        *http.Client
	keyEnv    string
	tries     int
	backoff   time.Duration
	maxWait   time.Duration
	timeouts  Timeouts
	contUsage bool
	loadWait  time.Duration
	fim       string
	progress  func(string)

	infoMu    sync.Mutex
	info      *ServerInfo // what Server learned
	ollamaCtx sync.Map    // model name → ollamaEntry
}

// Option configures a Client.
type Option func(*Client)

// WithAPIKeyEnv names the environment variable holding the API key ("" sends no key).
func WithAPIKeyEnv(name string) Option { return func(c *Client) { c.keyEnv = name } }

// WithHTTPClient uses hc instead of a client built from the Timeouts. Its Transport should
// still bound connection set-up; Client applies the first-token and idle timeouts itself.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithRetry sets how many times a request is tried before its first token (at least 1) and the
// first backoff delay, which doubles after each failed try.
func WithRetry(tries int, backoff time.Duration) Option {
	return func(c *Client) {
		c.tries = max(tries, 1)
		c.backoff = max(backoff, 0)
	}
}

// WithContinuousUsage sets whether requests ask for usage in every streamed event
// (stream_options.continuous_usage_stats, which vLLM and SGLang honour and others ignore). It is
// on by default: a rollout killed before its stream ends still learns its prompt tokens.
func WithContinuousUsage(on bool) Option { return func(c *Client) { c.contUsage = on } }

// DefaultLoadingWait is how long Complete waits for a server that is not up yet (connection
// refused while vLLM or SGLang start, llama.cpp's 503 "Loading model").
const DefaultLoadingWait = 60 * time.Second

// WithLoadingWait sets how long requests wait, retrying with backoff, for a server that is still
// starting or loading its model (0 = try only as often as WithRetry says).
func WithLoadingWait(d time.Duration) Option { return func(c *Client) { c.loadWait = max(d, 0) } }

// WithFIM sets the fill-in-the-middle format: "" or "auto" chooses it from the model's name,
// "off" never sends the suffix, a name from FIMFormats forces that format.
func WithFIM(setting string) Option { return func(c *Client) { c.fim = setting } }

// WithProgress sets a function told, in words, what the client is waiting for (a loading
// server). ContextWithProgress sets one for the requests made under a context.
func WithProgress(fn func(string)) Option { return func(c *Client) { c.progress = fn } }

type progressKey struct{}

// ContextWithProgress returns a context whose requests tell fn what the client is waiting for.
func ContextWithProgress(ctx context.Context, fn func(string)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// say reports progress to the client's and the context's listeners.
func (c *Client) say(ctx context.Context, msg string) {
	if c.progress != nil {
		c.progress(msg)
	}
	if fn, ok := ctx.Value(progressKey{}).(func(string)); ok && fn != nil {
		fn(msg)
	}
}

// WithTimeouts sets the timeouts; zero fields keep their defaults.
func WithTimeouts(t Timeouts) Option {
	return func(c *Client) {
		if t.Connect > 0 {
			c.timeouts.Connect = t.Connect
		}
		if t.FirstToken > 0 {
			c.timeouts.FirstToken = t.FirstToken
		}
		if t.Idle > 0 {
			c.timeouts.Idle = t.Idle
		}
	}
}

// NewClient returns a Client for the API at baseURL, given as OpenAI clients take it
// (e.g. http://localhost:8000/v1); requests go to baseURL + "/completions".
func NewClient(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil {
		return nil, fmt.Errorf("model server URL %q: %w", baseURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("model server URL %q: want http(s)://host[:port]/v1", u.Redacted())
	}
	c := &Client{
		base:      strings.TrimRight(u.String(), "/"),
		shown:     strings.TrimRight(u.Redacted(), "/"),
		keyEnv:    DefaultAPIKeyEnv,
		tries:     3,
		backoff:   500 * time.Millisecond,
		maxWait:   10 * time.Second,
		timeouts:  DefaultTimeouts(),
		contUsage: true,
		loadWait:  DefaultLoadingWait,
	}
	for _, o := range opts {
		o(c)
	}
	if c.hc == nil {
		d := &net.Dialer{Timeout: c.timeouts.Connect, KeepAlive: 30 * time.Second}
		c.hc = &http.Client{Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         d.DialContext,
			TLSHandshakeTimeout: c.timeouts.Connect,
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     90 * time.Second,
		}}
	}
	return c, nil
}

// BaseURL is the API base the client talks to, with any password redacted.
func (c *Client) BaseURL() string { return c.shown }

// completionRequest is the JSON body of POST /completions.
type completionRequest struct {
	Model         string         `json:"model,omitempty"`
	Prompt        string         `json:"prompt"`
	Stream        bool           `json:"stream"`
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
	MaxTokens     int            `json:"max_tokens,omitempty"`
	Temperature   float64        `json:"temperature"`
	Stop          []string       `json:"stop,omitempty"`
	Logprobs      int            `json:"logprobs,omitempty"`
	Seed          int64          `json:"seed,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
	// ContinuousUsageStats asks vLLM and SGLang for usage in every event, so that a stream
	// closed early still knows its prompt tokens. Other servers ignore it.
	ContinuousUsageStats bool `json:"continuous_usage_stats,omitempty"`
}

// completionChunk is one streamed event (and also the shape of a non-streamed response).
type completionChunk struct {
	Choices *[]struct {
		Text         string    `json:"text"`
		FinishReason *string   `json:"finish_reason"`
		Logprobs     *logprobs `json:"logprobs"`
	} `json:"choices"`
	Usage *usageJSON `json:"usage"`
	// Error is OpenAI's {"error": {...}} (vLLM, llama.cpp) or a string (Ollama).
	Error json.RawMessage `json:"error"`
	// Object and Message are the flat error event of SGLang (and older vLLM):
	// {"object": "error", "message": …}.
	Object  string `json:"object"`
	Message string `json:"message"`
	// Content and Stop are in llama.cpp's native /completion events, never in OpenAI's.
	Content *string `json:"content"`
	Stop    *bool   `json:"stop"`
	// Timings is llama.cpp's; cache_n is the prompt tokens its cache served.
	Timings *struct {
		CacheN int `json:"cache_n"`
	} `json:"timings"`
}

// logprobs is a choice's log-probabilities in either shape: the legacy completions one
// {tokens, token_logprobs, top_logprobs: [{token: logprob}]} of vLLM and SGLang, or the chat one
// {content: [{token, logprob, top_logprobs: [{token, logprob}]}]} that llama.cpp
// (tools/server/server-task.cpp, probs_vector_to_json) and Ollama (openai/openai.go,
// ChoiceLogprobs) send on /v1/completions too. llama.cpp with post_sampling_probs sends
// probabilities (prob, top_probs) instead.
type logprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []*float64           `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
	Content       []tokenLogprob       `json:"content"`
}

type tokenLogprob struct {
	Token       string   `json:"token"`
	Logprob     *float64 `json:"logprob"`
	Prob        *float64 `json:"prob"`
	TopLogprobs []struct {
		Token   string   `json:"token"`
		Logprob *float64 `json:"logprob"`
		Prob    *float64 `json:"prob"`
	} `json:"top_logprobs"`
	TopProbs []struct {
		Token string   `json:"token"`
		Prob  *float64 `json:"prob"`
	} `json:"top_probs"`
}

// lp is a log-probability from a logprob or a probability field.
func lp(logprob, prob *float64) (float64, bool) {
	switch {
	case logprob != nil:
		return *logprob, true
	case prob != nil && *prob > 0:
		return math.Log(*prob), true
	}
	return 0, false
}

// legacy converts the chat shape into the legacy one.
func (l *logprobs) legacy() {
	if len(l.Content) == 0 || len(l.Tokens) > 0 {
		return
	}
	for _, c := range l.Content {
		l.Tokens = append(l.Tokens, c.Token)
		v, ok := lp(c.Logprob, c.Prob)
		if ok {
			l.TokenLogprobs = append(l.TokenLogprobs, &v)
		} else {
			l.TokenLogprobs = append(l.TokenLogprobs, nil)
		}
		top := map[string]float64{}
		for _, t := range c.TopLogprobs {
			if v, ok := lp(t.Logprob, t.Prob); ok {
				top[t.Token] = v
			}
		}
		for _, t := range c.TopProbs {
			if v, ok := lp(nil, t.Prob); ok {
				top[t.Token] = v
			}
		}
		if len(top) == 0 {
			top = nil
		}
		l.TopLogprobs = append(l.TopLogprobs, top)
	}
}

type usageJSON struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// UnavailableError is returned by Complete when the server could not be reached or kept failing
// before the first token. It wraps ErrUnavailable and the last failure.
type UnavailableError struct {
	URL    string // the API base, password redacted
	Tries  int
	Reason string // e.g. "connection refused", "HTTP 503 Service Unavailable: overloaded"
	Last   error
	// Waited is how long the client waited for a server that was not up (loading).
	Waited time.Duration
}

func (e *UnavailableError) Error() string {
	tries := "tries"
	if e.Tries == 1 {
		tries = "try"
	}
	if e.Waited > 0 {
		return fmt.Sprintf("model server %s: %s after %d %s in %v: is it running, and has it finished loading its model? (the wait is set with --wait)",
			e.URL, e.Reason, e.Tries, tries, e.Waited)
	}
	return fmt.Sprintf("model server %s: %s after %d %s", e.URL, e.Reason, e.Tries, tries)
}

// Unwrap returns ErrUnavailable and the last failure.
func (e *UnavailableError) Unwrap() []error {
	if e.Last == nil {
		return []error{ErrUnavailable}
	}
	return []error{ErrUnavailable, e.Last}
}

// errRetryable marks a failure worth another try.
type errRetryable struct {
	reason string
	err    error
	after  time.Duration // the server's Retry-After, if any
	// loading marks a server that is not up yet (connection refused, 503): waited for up to
	// the loading wait rather than a number of tries.
	loading bool
}

func (e *errRetryable) Error() string { return e.reason }
func (e *errRetryable) Unwrap() error { return e.err }

// stream is a running completion; it implements Stream.
type stream struct {
	url    string
	cancel context.CancelFunc
	body   io.ReadCloser
	rd     *bufio.Reader
	idle   time.Duration
	timer  *time.Timer

	mu       sync.Mutex // guards timedOut, closed
	timedOut bool
	closed   bool

	// The fields below belong to the goroutine calling Next.
	pending  []Token
	finish   string
	usage    *usageJSON
	counted  int  // tokens delivered, for the usage fallback
	done     bool // [DONE] seen, or the body ended after a finish_reason
	finished bool // a finish_reason was seen
	err      error

	ndjson         bool   // Ollama's native stream: one JSON object a line
	hint           string // the likely fix for a wrong URL
	events         int    // events decoded
	notes          []string
	promptToks     int  // the prompt's tokens as counted when the request was made
	promptExact    bool // counted by the server's tokenizer
	logprobsWanted bool
	cacheN         int // llama.cpp timings.cache_n (prompt tokens served from its cache)
}

// serverError is an error object the server sent inside the stream.
type serverError struct{ msg, raw string }

func (e *serverError) Error() string { return "server error in stream: " + e.msg }

func (s *stream) didTimeOut() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.timedOut
}

// stop ends the request: the timer, the request's context and the response body.
func (s *stream) stop() {
	s.timer.Stop()
	s.cancel()
	if s.body != nil {
		s.body.Close()
	}
}

// Next implements Stream.
func (s *stream) Next(ctx context.Context) (Token, error) {
	for len(s.pending) == 0 {
		if s.err != nil {
			return Token{}, s.err
		}
		if s.done {
			return Token{}, io.EOF
		}
		var stopWatch func() bool
		if ctx != nil && ctx.Done() != nil {
			stopWatch = context.AfterFunc(ctx, s.cancel)
		}
		err := s.fill()
		if stopWatch != nil {
			stopWatch()
		}
		if err != nil && !errors.Is(err, io.EOF) {
			if ctx != nil && ctx.Err() != nil {
				err = fmt.Errorf("model stream from %s: %w", s.url, ctx.Err())
			}
			s.err = err
			s.stop()
		}
	}
	t := s.pending[0]
	s.pending = s.pending[1:]
	s.counted++
	return t, nil
}

// fill reads events until at least one token is pending, the stream ends (io.EOF, with done set)
// or fails. A failure after the first event wraps ErrStreamCut.
func (s *stream) fill() error {
	var data []byte
	for {
		line, err := s.rd.ReadBytes('\n')
		if err != nil {
			if errors.Is(err, io.EOF) && len(bytes.TrimSpace(line)) > 0 {
				// A last event without its blank line: take it.
				err = nil
				line = append(line, '\n')
			}
		}
		if err != nil && data != nil && errors.Is(err, io.EOF) {
			// The body ended inside an event: dispatch it, then see the end on the next read.
			if stop, err := s.dispatch(data); stop {
				return err
			}
			data = nil
		}
		if err != nil {
			s.stop()
			if errors.Is(err, io.EOF) && s.finished {
				s.done = true
				return io.EOF
			}
			s.mu.Lock()
			closed, timedOut := s.closed, s.timedOut
			s.mu.Unlock()
			switch {
			case closed:
				return fmt.Errorf("model stream from %s: closed", s.url)
			case timedOut:
				return fmt.Errorf("model stream from %s: no data for %v: %w", s.url, s.idle, ErrStreamCut)
			case errors.Is(err, io.EOF):
				return fmt.Errorf("model stream from %s ended without [DONE]: %w", s.url, ErrStreamCut)
			}
			return fmt.Errorf("model stream from %s: %w: %w", s.url, ErrStreamCut, err)
		}
		s.timer.Reset(s.idle)
		line = bytes.TrimRight(line, "\r\n")
		if s.ndjson {
			// Ollama's /api/generate: one JSON object a line.
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			if stop, err := s.dispatch(line); stop {
				return err
			}
			continue
		}
		if len(line) == 0 { // end of an event
			if data == nil {
				continue
			}
			if stop, err := s.dispatch(data); stop {
				return err
			}
			data = nil
			continue
		}
		if line[0] == ':' {
			continue // an SSE comment (keep-alive)
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		switch string(field) {
		case "data":
		case "error":
			// Older llama.cpp servers send an error in the stream as "error: {…}".
			value = bytes.TrimPrefix(value, []byte(" "))
			return &serverError{msg: clip(errorMessage(value)), raw: string(value)}
		case "event", "id", "retry":
			continue // carry nothing we use
		default:
			if s.events == 0 && data == nil {
				// Not server-sent events at all: a web page, or plain JSON.
				if isHTML("", line) {
					return &wrongURLError{url: s.url, what: "an HTML page", hint: s.hint}
				}
				if bytes.HasPrefix(bytes.TrimSpace(line), []byte("{")) {
					if stop, err := s.dispatch(line); stop {
						return err
					}
				}
			}
			continue
		}
		value = bytes.TrimPrefix(value, []byte(" "))
		if data != nil {
			data = append(data, '\n')
		}
		data = append(data, value...)
	}
}

// dispatch handles the data of one whole event: "[DONE]" ends the stream (io.EOF), anything else
// is parsed into s.pending. It reports whether fill should return now, with err: at the end, on
// an error, or when tokens are pending.
func (s *stream) dispatch(data []byte) (stop bool, err error) {
	if bytes.Equal(bytes.TrimSpace(data), []byte("[DONE]")) {
		s.done = true
		s.stop()
		return true, io.EOF
	}
	if err := s.event(data); err != nil {
		return true, err
	}
	if s.done { // Ollama's last line
		s.stop()
		if len(s.pending) == 0 {
			return true, io.EOF
		}
		return true, nil
	}
	return len(s.pending) > 0, nil
}

// event decodes one data payload into pending tokens, finish reason and usage.
func (s *stream) event(data []byte) error {
	if s.ndjson {
		return s.ollamaEvent(data)
	}
	var ch completionChunk
	if err := json.Unmarshal(data, &ch); err != nil {
		if s.events == 0 && isHTML("", data) {
			return &wrongURLError{url: s.url, what: "an HTML page", hint: s.hint}
		}
		return fmt.Errorf("model stream from %s: bad event %.80q: %w", s.url, data, err)
	}
	s.events++
	if len(ch.Error) > 0 && string(ch.Error) != "null" {
		return &serverError{msg: clip(errorMessage(data)), raw: string(data)}
	}
	if ch.Object == "error" {
		return &serverError{msg: clip(ch.Message), raw: string(data)}
	}
	if ch.Choices == nil && (ch.Content != nil || ch.Stop != nil) {
		// llama.cpp's native /completion(s) events: {"content", "stop", …}, no "choices".
		return &wrongURLError{url: s.url, what: "llama.cpp's native completion events (no \"choices\", no [DONE])", hint: s.hint}
	}
	if ch.Usage != nil && (ch.Usage.PromptTokens > 0 || ch.Usage.CompletionTokens > 0) {
		// A usage of zeros (Ollama puts one on every event with include_usage) never
		// overwrites real counts.
		s.usage = ch.Usage
	}
	if ch.Timings != nil && ch.Timings.CacheN > 0 {
		s.cacheN = ch.Timings.CacheN
	}
	if ch.Choices == nil {
		return nil
	}
	for _, c := range *ch.Choices {
		if c.Logprobs != nil {
			c.Logprobs.legacy()
		}
		s.pending = append(s.pending, splitTokens(c.Text, c.Logprobs)...)
		if c.FinishReason != nil && *c.FinishReason != "" {
			s.finish = *c.FinishReason
			s.finished = true
		}
	}
	return nil
}

// splitTokens turns one choice's text into Tokens: one per logprobs token when the server sent
// logprobs that add up to the text, else one for the whole piece.
func splitTokens(text string, lp *logprobs) []Token {
	if text == "" {
		return nil
	}
	if lp == nil || len(lp.Tokens) == 0 {
		return []Token{{Text: text}}
	}
	if strings.Join(lp.Tokens, "") == text {
		out := make([]Token, len(lp.Tokens))
		for i, tx := range lp.Tokens {
			out[i].Text = tx
			if i < len(lp.TokenLogprobs) && lp.TokenLogprobs[i] != nil {
				out[i].Logprob = *lp.TokenLogprobs[i]
				out[i].HasLogprob = true
			}
			if i < len(lp.TopLogprobs) {
				out[i].TopLogprobs = lp.TopLogprobs[i]
			}
		}
		return out
	}
	// The tokens do not spell the text (some servers detokenize differently): keep the text whole,
	// with the summed log-probability and the first position's alternatives.
	t := Token{Text: text}
	for _, p := range lp.TokenLogprobs {
		if p != nil {
			t.Logprob += *p
			t.HasLogprob = true
		}
	}
	if len(lp.TopLogprobs) > 0 {
		t.TopLogprobs = lp.TopLogprobs[0]
	}
	return []Token{t}
}

// FinishReason implements Stream.
func (s *stream) FinishReason() string { return s.finish }

// Usage implements Stream: the server's latest figures when it reported any (servers that
// report usage in every event keep it current while the stream runs), else the count of
// delivered tokens as completion tokens.
//
// A stream that ended before the server reported its prompt tokens (a rollout killed at a
// rollback, before llama.cpp's or Ollama's last event) still counts its prompt: as counted when
// the request was made (by the server's tokenizer where it has one, else estimated), marked
// PromptEstimated.
func (s *stream) Usage() Usage {
	var u Usage
	if s.usage != nil {
		u = Usage{PromptTokens: s.usage.PromptTokens, CompletionTokens: s.usage.CompletionTokens}
		if s.usage.PromptTokensDetails != nil {
			u.CachedTokens = s.usage.PromptTokensDetails.CachedTokens
		}
	}
	if u.CachedTokens == 0 && s.cacheN > 0 {
		u.CachedTokens = s.cacheN
	}
	if u.CompletionTokens == 0 {
		u.CompletionTokens = s.counted
	}
	if u.PromptTokens == 0 && s.promptToks > 0 {
		u.PromptTokens = s.promptToks
		u.PromptEstimated = true
	}
	return u
}

// Notes implements Noter: what the request did that the user should know (the prompt cut to
// fit the context, max_tokens lowered).
func (s *stream) Notes() []string { return s.notes }

// Close implements Stream. It is safe to call more than once and from another goroutine.
func (s *stream) Close() error {
	s.mu.Lock()
	already := s.closed
	s.closed = true
	s.mu.Unlock()
	if already {
		return nil
	}
	s.stop()
	return nil
}

// connReason names a connection failure briefly ("connection refused").
func connReason(err error) string {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed before a response"
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return "cannot resolve host " + dnsErr.Name
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "connection timed out"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// readErrorBody extracts a short message from an error response: the OpenAI-style
// {"error": {"message": …}}, or the start of the body.
func readErrorBody(resp *http.Response) string {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(b, &e) == nil && len(e.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(e.Error, &obj) == nil && obj.Message != "" {
			return clip(obj.Message)
		}
		var s string
		if json.Unmarshal(e.Error, &s) == nil && s != "" {
			return clip(s)
		}
	}
	return clip(strings.TrimSpace(string(b)))
}

func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// retryAfter reads a Retry-After header given in seconds.
func retryAfter(resp *http.Response) time.Duration {
	if v := resp.Header.Get("Retry-After"); v != "" {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
			return time.Duration(n) * time.Second
		}
	}
	return 0
}

// redact removes the API key from text a server might have echoed.
func redact(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[REDACTED]")
}

// redactErr keeps err's chain but drops the key from its text when it appears there.
func redactErr(err error, key string) error {
	if err == nil || key == "" || !strings.Contains(err.Error(), key) {
		return err
	}
	return &redactedError{msg: redact(err.Error(), key), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Models lists the model names the server offers (GET /models).
func (c *Client) Models(ctx context.Context) ([]string, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/models", nil)
	if err != nil {
		return nil, fmt.Errorf("model server %s: %w", c.shown, err)
	}
	if c.keyEnv != "" {
		if key := os.Getenv(c.keyEnv); key != "" {
			hreq.Header.Set("Authorization", "Bearer "+key)
		}
	}
	resp, err := c.hc.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("model server %s: %s: %w", c.shown, connReason(err), ErrUnavailable)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("model server %s: list models: HTTP %s: %s", c.shown, resp.Status, readErrorBody(resp))
	}
	var out struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&out); err != nil {
		return nil, fmt.Errorf("model server %s: list models: %w", c.shown, err)
	}
	names := make([]string, len(out.Data))
	for i, d := range out.Data {
		names[i] = d.ID
	}
	return names, nil
}
