// Package openaiserver is the server side of the OpenAI-compatible completions API, as Hydra's
// model stand-ins serve it: routing of GET /v1/models and POST /v1/completions, the request
// body, the response objects (completion, streamed event, usage), server-sent events ending in
// "data: [DONE]", and OpenAI-style JSON errors. It holds no model: the scripted stand-in
// (package engine/model/modeltest) and the simulated model (package sim) decide what to
// answer and use this package to say it on the wire. The client side is package engine/model.
package openaiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Model is the model a server answers as, and names in every response.
type Model struct {
	// Name is the model's id: "model" and "system_fingerprint" of every completion, "id" in
	// /v1/models, and "type" of every error.
	Name string
	// OwnedBy is the model's "owned_by" in /v1/models.
	OwnedBy string
	// CompletionID is the "id" of every completion response and streamed event.
	CompletionID string
}

// Serve answers one request: GET /v1/models lists m, POST /v1/completions is passed to complete,
// and anything else is a 404 error. Paths without the /v1 prefix are served too.
func (m Model) Serve(w http.ResponseWriter, r *http.Request, complete http.HandlerFunc) {
	path := strings.TrimPrefix(r.URL.Path, "/v1")
	switch {
	case path == "/models" && r.Method == http.MethodGet:
		WriteJSON(w, http.StatusOK, map[string]any{
			"object": "list",
			"data":   []any{map[string]any{"id": m.Name, "object": "model", "owned_by": m.OwnedBy}},
		})
	case path == "/completions" && r.Method == http.MethodPost:
		complete(w, r)
	default:
		m.WriteError(w, http.StatusNotFound, fmt.Sprintf("%s: no route %s %s", m.Name, r.Method, r.URL.Path))
	}
}

// Request is the part of a completion request the stand-ins read.
type Request struct {
	Model  string
	Prompt string
	Stream bool
	// ContinuousUsage is stream_options.continuous_usage_stats (vLLM, SGLang): usage in every
	// streamed event.
	ContinuousUsage bool
	MaxTokens       int
	Temperature     float64
	// Stop holds the stop sequences, given as one string or a list; every string is kept, empty
	// ones included, and non-strings in a list are dropped.
	Stop []string
	// Logprobs is how many log-probabilities per token were asked for (0 when not asked).
	Logprobs int
	Seed     int64
}

// wireRequest is a completion request's JSON body.
type wireRequest struct {
	StreamOptions struct {
		ContinuousUsageStats bool `json:"continuous_usage_stats"`
	} `json:"stream_options"`
	Model       string  `json:"model"`
	Prompt      any     `json:"prompt"`
	Stream      bool    `json:"stream"`
	MaxTokens   int     `json:"max_tokens"`
	Temperature float64 `json:"temperature"`
	Stop        any     `json:"stop"`
	Logprobs    *int    `json:"logprobs"`
	Seed        int64   `json:"seed"`
}

// ReadRequest decodes the completion request in r's body. The prompt must be one string. On bad
// input it writes a 400 error naming m and returns false.
func (m Model) ReadRequest(w http.ResponseWriter, r *http.Request) (Request, bool) {
	var wr wireRequest
	if err := json.NewDecoder(r.Body).Decode(&wr); err != nil {
		m.WriteError(w, http.StatusBadRequest, fmt.Sprintf("%s: bad request body: %v", m.Name, err))
		return Request{}, false
	}
	prompt, ok := wr.Prompt.(string)
	if !ok {
		m.WriteError(w, http.StatusBadRequest, m.Name+": prompt must be one string")
		return Request{}, false
	}
	req := Request{
		Model: wr.Model, Prompt: prompt, Stream: wr.Stream,
		ContinuousUsage: wr.StreamOptions.ContinuousUsageStats,
		MaxTokens:       wr.MaxTokens, Temperature: wr.Temperature, Seed: wr.Seed,
	}
	switch st := wr.Stop.(type) {
	case string:
		req.Stop = []string{st}
	case []any:
		for _, x := range st {
			if s, ok := x.(string); ok {
				req.Stop = append(req.Stop, s)
			}
		}
	}
	if wr.Logprobs != nil {
		req.Logprobs = *wr.Logprobs
	}
	return req, true
}

// Usage is a usage object: prompt, completion and total tokens, and the prompt tokens a prefix
// cache held.
func Usage(prompt, completion, cached int) map[string]any {
	return map[string]any{
		"prompt_tokens":         prompt,
		"completion_tokens":     completion,
		"total_tokens":          prompt + completion,
		"prompt_tokens_details": map[string]any{"cached_tokens": cached},
	}
}

// Logprobs is a completion's logprobs object: the tokens, their log-probabilities and the top
// alternatives of each.
func Logprobs(tokens []string, values []float64, top []map[string]float64) map[string]any {
	return map[string]any{"tokens": tokens, "token_logprobs": values, "top_logprobs": top}
}

// response is a text_completion object with these choices.
func (m Model) response(choices []any) map[string]any {
	return map[string]any{
		"id": m.CompletionID, "object": "text_completion", "created": time.Now().Unix(),
		"model": m.Name, "system_fingerprint": m.Name, "choices": choices,
	}
}

// choice is one choice; logprobs, when not nil, is its logprobs object.
func choice(text string, finish, logprobs any) map[string]any {
	c := map[string]any{"index": 0, "text": text, "finish_reason": finish}
	if logprobs != nil {
		c["logprobs"] = logprobs
	}
	return c
}

// Completion is a non-streamed response: one choice with the whole text, and the usage.
// logprobs, when not nil, is the choice's logprobs object.
func (m Model) Completion(text, finish string, logprobs any, usage map[string]any) map[string]any {
	resp := m.response([]any{choice(text, finish, logprobs)})
	resp["usage"] = usage
	return resp
}

// Event is one streamed event: one choice with a piece of text. finish is nil but on the last
// event; logprobs, when not nil, is the piece's logprobs object.
func (m Model) Event(text string, finish, logprobs any) map[string]any {
	return m.response([]any{choice(text, finish, logprobs)})
}

// UsageEvent is the streamed event after the last piece that carries the usage and no choices
// (stream_options.include_usage).
func (m Model) UsageEvent(usage map[string]any) map[string]any {
	resp := m.response([]any{})
	resp["usage"] = usage
	return resp
}

// WriteJSON writes v as a JSON response with this status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// WriteError writes an OpenAI-style error response: {"error": {"message", "type", "code"}},
// with m's name as the type.
func (m Model) WriteError(w http.ResponseWriter, status int, msg string) {
	WriteJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": m.Name, "code": status}})
}

// Stream writes a streamed response as server-sent events.
type Stream struct {
	w  http.ResponseWriter
	fl http.Flusher // nil when w cannot flush
}

// StartStream writes the header of a streamed response (200, text/event-stream). The header
// goes out with the first flush.
func StartStream(w http.ResponseWriter) *Stream {
	fl, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &Stream{w: w, fl: fl}
}

// Flush sends what was written so far.
func (s *Stream) Flush() {
	if s.fl != nil {
		s.fl.Flush()
	}
}

// Send writes v as one "data:" event and flushes it. It reports false when the write failed
// (the client went away).
func (s *Stream) Send(v any) bool {
	b, _ := json.Marshal(v)
	if _, err := fmt.Fprintf(s.w, "data: %s\n\n", b); err != nil {
		return false
	}
	s.Flush()
	return true
}

// Done writes the stream's end, "data: [DONE]", and flushes it.
func (s *Stream) Done() {
	fmt.Fprint(s.w, "data: [DONE]\n\n")
	s.Flush()
}

// Sleep waits d, or less when ctx ends first; it reports whether the whole wait passed. A wait of
// d <= 0 passes at once, without looking at ctx.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
