// Package modeltest is a SCRIPTED STAND-IN for a language model: an OpenAI-compatible
// /v1/completions server that answers from a fixed script instead of a model, for tests of the
// engine, the language server and the editor clients. It is not a model and never claims to be
// one: every response names itself "scripted-stand-in" (in "model" and "system_fingerprint").
//
// A Script is a list of Rules; a request is answered by the first rule that matches its prompt
// (contains / starts with / ends with) and has uses left. A rule streams its text in pieces of a
// few bytes (each piece is one "token"), optionally with delays, logprobs, an HTTP error status
// instead, or a connection cut after some pieces. Requests are recorded for assertions.
//
// Call NewServer in a test; `hydra sim-server --script FILE.json` serves the same Script (the JSON
// form of these types) from a separate process, for tests that spawn `hydra lsp`.
package modeltest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hydra-lsp/hydra/engine/model"
	"github.com/hydra-lsp/hydra/engine/model/openaiserver"
	"github.com/hydra-lsp/hydra/internal/textops"
)

// Name is what the stand-in calls itself in every response.
const Name = "scripted-stand-in"

// Script is what the stand-in answers. Its JSON form is the file `hydra sim-server --script` reads:
//
//	{"rules": [
//	  {"prompt_suffix": "int add(int a, int b) {\n", "text": "  return a + b;\n}\n", "chunk": 4},
//	  {"prompt_contains": "// error:", "times": 1, "status": 500},
//	  {"text": "}\n"}
//	]}
type Script struct {
	Rules []Rule `json:"rules"`
}

// Rule matches requests and says how to answer them. Empty conditions match every prompt.
type Rule struct {
	// PromptContains, PromptPrefix and PromptSuffix must all hold when set.
	PromptContains string `json:"prompt_contains,omitempty"`
	PromptPrefix   string `json:"prompt_prefix,omitempty"`
	PromptSuffix   string `json:"prompt_suffix,omitempty"`
	// Times limits the rule to its first Times matching requests (0 = no limit); later requests
	// fall through to the rules after it.
	Times int `json:"times,omitempty"`

	// Status, when set, answers with this HTTP status and an OpenAI-style error body carrying
	// Message instead of a completion (e.g. 500, 503 or 429 to test retries, 400 for rejects).
	Status  int    `json:"status,omitempty"`
	Message string `json:"message,omitempty"`

	// Text is the completion. It is streamed in pieces of Chunk bytes (default 4, never
	// splitting a UTF-8 character); each piece counts as one token. The request's max_tokens
	// and stop sequences are honoured.
	Text  string `json:"text,omitempty"`
	Chunk int    `json:"chunk,omitempty"`
	// FirstDelayMS is waited before the first piece, DelayMS before each later one.
	FirstDelayMS int `json:"first_delay_ms,omitempty"`
	DelayMS      int `json:"delay_ms,omitempty"`
	// Cut ends the stream abruptly (no finish reason, no [DONE]) after CutAfter pieces.
	Cut      bool `json:"cut,omitempty"`
	CutAfter int  `json:"cut_after,omitempty"`
	// FinishReason is sent with the last piece (default "stop"; "length" when max_tokens cut
	// the text).
	FinishReason string `json:"finish_reason,omitempty"`
	// Logprobs, when the request asks for logprobs, gives piece i the log-probability
	// Logprobs[i % len(Logprobs)] (default -0.05), with itself as the only top alternative.
	Logprobs []float64 `json:"logprobs,omitempty"`
	// NoUsage leaves out the usage event, as servers that ignore stream_options do.
	NoUsage bool `json:"no_usage,omitempty"`
	// Hold, when set (from Go only), is called before piece i is sent, with the text sent so
	// far and the piece; the stream waits until it returns. A test uses it to pace the stream
	// by what its client has seen instead of by the clock. It must return when ctx ends.
	Hold func(ctx context.Context, i int, sent, piece string) `json:"-"`
}

// Call is one recorded request.
type Call struct {
	Model  string
	Prompt string
	Params model.Params
	Stream bool
	// Rule is the index of the rule that answered, -1 when none matched.
	Rule int
	// Authorization is the request's Authorization header.
	Authorization string
}

// LoadScript reads a Script from a JSON file.
func LoadScript(path string) (Script, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Script{}, fmt.Errorf("read script: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return Script{}, fmt.Errorf("script %s: %w", path, err)
	}
	return s, nil
}

// Handler serves a Script as an OpenAI-compatible API: POST /v1/completions (streamed or not)
// and GET /v1/models. Paths without the /v1 prefix are served too. It is safe for concurrent use.
type Handler struct {
	script Script

	mu      sync.Mutex // guards the fields below
	used    []int      // requests answered per rule
	calls   []Call
	prompts []string // earlier prompts, for the cached-token estimate
}

// NewHandler returns a Handler answering from s.
func NewHandler(s Script) *Handler {
	return &Handler{script: s, used: make([]int, len(s.Rules))}
}

// Calls returns the requests received so far, oldest first.
func (h *Handler) Calls() []Call {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Call(nil), h.calls...)
}

// api is how the stand-in names itself on the wire.
var api = openaiserver.Model{Name: Name, OwnedBy: "hydra-tests", CompletionID: "cmpl-" + Name}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	api.Serve(w, r, h.complete)
}

func (h *Handler) complete(w http.ResponseWriter, r *http.Request) {
	req, ok := api.ReadRequest(w, r)
	if !ok {
		return
	}
	prompt := req.Prompt

	h.mu.Lock()
	idx := -1
	for i, rule := range h.script.Rules {
		if rule.matches(prompt) && (rule.Times == 0 || h.used[i] < rule.Times) {
			idx = i
			h.used[i]++
			break
		}
	}
	h.calls = append(h.calls, Call{
		Model: req.Model, Prompt: prompt, Stream: req.Stream, Rule: idx,
		Params:        model.Params{MaxTokens: req.MaxTokens, Temperature: req.Temperature, Stop: req.Stop, Logprobs: req.Logprobs, Seed: req.Seed},
		Authorization: r.Header.Get("Authorization"),
	})
	cached := 0
	for _, p := range h.prompts {
		cached = max(cached, textops.CommonPrefix(p, prompt))
	}
	h.prompts = append(h.prompts, prompt)
	if len(h.prompts) > 64 {
		h.prompts = h.prompts[1:]
	}
	h.mu.Unlock()

	if idx < 0 {
		tail := prompt[max(0, len(prompt)-60):]
		api.WriteError(w, http.StatusBadRequest, fmt.Sprintf("%s: no rule matches the prompt (ending %q)", Name, tail))
		return
	}
	rule := h.script.Rules[idx]
	if rule.Status != 0 {
		msg := rule.Message
		if msg == "" {
			msg = fmt.Sprintf("%s: scripted failure %d", Name, rule.Status)
		}
		api.WriteError(w, rule.Status, msg)
		return
	}

	pieces, finish := rule.pieces(req)
	usage := openaiserver.Usage(estimateTokens(len(prompt)), len(pieces), cached/4)
	if !req.Stream {
		h.whole(w, rule, pieces, finish, usage, req.Logprobs)
		return
	}
	h.stream(w, r, rule, pieces, finish, usage, req.Logprobs, req.ContinuousUsage && !rule.NoUsage)
}

func (h *Handler) whole(w http.ResponseWriter, rule Rule, pieces []string, finish string, usage map[string]any, lp int) {
	var lps any
	if lp > 0 {
		lps = rule.logprobs(pieces, 0)
	}
	openaiserver.WriteJSON(w, http.StatusOK, api.Completion(strings.Join(pieces, ""), finish, lps, usage))
}

func (h *Handler) stream(w http.ResponseWriter, r *http.Request, rule Rule, pieces []string, finish string, usage map[string]any, lp int, continuous bool) {
	s := openaiserver.StartStream(w)
	s.Flush()
	wait := func(ms int) bool {
		return openaiserver.Sleep(r.Context(), time.Duration(ms)*time.Millisecond)
	}
	for i, p := range pieces {
		if rule.Cut && i >= rule.CutAfter {
			cut(w)
			return
		}
		delay := rule.DelayMS
		if i == 0 {
			delay = rule.FirstDelayMS
		}
		if !wait(delay) {
			return
		}
		if rule.Hold != nil {
			rule.Hold(r.Context(), i, strings.Join(pieces[:i], ""), p)
			if r.Context().Err() != nil {
				return
			}
		}
		var fin any
		if i == len(pieces)-1 {
			fin = finish
		}
		var lps any
		if lp > 0 {
			lps = rule.logprobs([]string{p}, i)
		}
		ev := api.Event(p, fin, lps)
		if continuous {
			// vLLM's continuous usage stats: the usage so far in every event.
			u := maps.Clone(usage)
			u["completion_tokens"] = i + 1
			ev["usage"] = u
		}
		if !s.Send(ev) {
			return
		}
	}
	if rule.Cut {
		cut(w)
		return
	}
	if len(pieces) == 0 {
		if !wait(rule.FirstDelayMS) || !s.Send(api.Event("", finish, nil)) {
			return
		}
	}
	if !rule.NoUsage {
		s.Send(api.UsageEvent(usage))
	}
	s.Done()
}

// cut drops the connection without finishing the response.
func cut(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	// No hijacking (HTTP/2): abort the handler, which resets the stream.
	panic(http.ErrAbortHandler)
}

func (r Rule) matches(prompt string) bool {
	return strings.Contains(prompt, r.PromptContains) &&
		strings.HasPrefix(prompt, r.PromptPrefix) &&
		strings.HasSuffix(prompt, r.PromptSuffix)
}

// pieces cuts the rule's text for req: stop sequences, then max_tokens.
func (r Rule) pieces(req openaiserver.Request) ([]string, string) {
	text := r.Text
	finish := r.FinishReason
	if finish == "" {
		finish = "stop"
	}
	for _, s := range req.Stop {
		if s == "" {
			continue
		}
		if i := strings.Index(text, s); i >= 0 {
			text = text[:i]
			finish = "stop"
		}
	}
	n := r.Chunk
	if n <= 0 {
		n = 4
	}
	var out []string
	for len(text) > 0 {
		k := min(n, len(text))
		for k < len(text) && !utf8.RuneStart(text[k]) {
			k++
		}
		out = append(out, text[:k])
		text = text[k:]
	}
	if req.MaxTokens > 0 && len(out) > req.MaxTokens {
		out = out[:req.MaxTokens]
		finish = "length"
	}
	return out, finish
}

// logprobs is the OpenAI completions logprobs object for pieces starting at index first.
func (r Rule) logprobs(pieces []string, first int) map[string]any {
	var lps []float64
	var top []map[string]float64
	for i, p := range pieces {
		v := -0.05
		if len(r.Logprobs) > 0 {
			v = r.Logprobs[(first+i)%len(r.Logprobs)]
		}
		lps = append(lps, v)
		top = append(top, map[string]float64{p: v})
	}
	return openaiserver.Logprobs(pieces, lps, top)
}

// estimateTokens is the stand-in's prompt-token count: one per 4 bytes, rounded up. It is an
// estimate, like the rest of this stand-in's usage figures.
func estimateTokens(n int) int { return (n + 3) / 4 }
