// Package model is the engine's view of a language model: a streamed text completion, as an
// OpenAI-compatible /v1/completions endpoint serves it. Client (client.go) talks to a real
// server (vLLM, SGLang, llama.cpp server, Ollama); the engine only sees the Generator interface.
package model

import (
	"context"
	"errors"
	"io"
	"strings"
)

// Params are the sampling parameters of one completion request.
type Params struct {
	MaxTokens   int      `json:"max_tokens,omitempty"`
	Temperature float64  `json:"temperature"`
	Stop        []string `json:"stop,omitempty"`
	// Logprobs asks for the log-probabilities of this many top alternatives per token (0 = none).
	Logprobs int `json:"logprobs,omitempty"`
	// Seed, when non-zero, is passed to servers that honour it.
	Seed int64 `json:"seed,omitempty"`
}

// Request is one completion: the model continues Prompt.
type Request struct {
	Model  string
	Prompt string
	// Suffix is the text after the insertion point. A client that knows the model's
	// fill-in-the-middle format sends it too (see FIM); others ignore it.
	Suffix string
	Params Params
}

// Token is one streamed piece of text. Servers may send several tokens in one piece.
type Token struct {
	Text string
	// Logprob of the sampled token, when asked for (0 otherwise).
	Logprob float64
	// TopLogprobs of the alternatives, when asked for.
	TopLogprobs map[string]float64
	// HasLogprob tells whether the server reported Logprob (a missing one is not certainty).
	HasLogprob bool
}

// Usage is what the server billed for a request (or, when it reports nothing, what was counted).
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// CachedTokens is the part of the prompt served from the server's prefix cache, when reported.
	CachedTokens int `json:"cached_tokens"`
	// PromptEstimated tells that PromptTokens was counted by the client (the stream ended
	// before the server reported usage), not reported by the server.
	PromptEstimated bool `json:"prompt_estimated,omitempty"`
}

// Stream is one streamed completion.
type Stream interface {
	// Next returns the next token; io.EOF after the last one. A stream cut by the server after
	// tokens arrived returns an error wrapping ErrStreamCut.
	Next(ctx context.Context) (Token, error)
	// FinishReason is the server's reason once Next returned io.EOF ("stop", "length", …).
	FinishReason() string
	// Usage is valid once Next returned io.EOF (or an error).
	Usage() Usage
	// Close stops the stream at once (closes the HTTP response).
	Close() error
}

// Noter is implemented by streams that have something to tell the user about the request as
// sent: the prompt was cut to fit the model's context, max_tokens was lowered, the server sent
// no log-probabilities. The search reports each note once.
type Noter interface {
	Notes() []string
}

// Generator starts streamed completions.
type Generator interface {
	Complete(ctx context.Context, req Request) (Stream, error)
}

// ErrStreamCut marks a stream that ended before the server said it was finished.
var ErrStreamCut = errors.New("model stream cut")

// ErrUnavailable marks a model server that could not be reached or kept failing (connection
// refused, 5xx or 429 after retries) before the first token.
var ErrUnavailable = errors.New("model server unavailable")

// Collect reads s to its end: the text, the tokens, and the error that ended it (nil for a
// clean end).
func Collect(ctx context.Context, s Stream) (string, []Token, error) {
	var sb strings.Builder
	var toks []Token
	for {
		tok, err := s.Next(ctx)
		if err == io.EOF {
			return sb.String(), toks, nil
		}
		if err != nil {
			return sb.String(), toks, err
		}
		sb.WriteString(tok.Text)
		toks = append(toks, tok)
	}
}
