package model

import (
	"encoding/json"
	"fmt"
)

// Ollama's /v1/completions renders the prompt through the model's chat template
// (openai/openai.go, FromCompleteRequest → server/routes.go, GenerateHandler), so the default
// instruct tags (`ollama pull qwen2.5-coder`) answer a C++ prefix in prose. Its native
// POST /api/generate with "raw": true passes the prompt to the model as it is. "suffix" (without
// raw) puts prefix and suffix through the model's own fill-in-the-middle template instead; the
// client uses that only for models whose template takes one (capability "insert") and whose FIM
// format it does not know itself. Shapes from api/types.go (GenerateRequest,
// GenerateResponse, Logprob) at ollama/ollama fb30760996871fa9460115c753afd2c60d4ab0f7.

// ollamaGenerate is the body of POST /api/generate.
type ollamaGenerate struct {
	Model       string         `json:"model"`
	Prompt      string         `json:"prompt"`
	Suffix      string         `json:"suffix,omitempty"`
	Raw         bool           `json:"raw,omitempty"`
	Stream      bool           `json:"stream"`
	Options     map[string]any `json:"options"`
	Logprobs    bool           `json:"logprobs,omitempty"`
	TopLogprobs int            `json:"top_logprobs,omitempty"`
}

// ollamaRequest builds the native request: raw, or through the model's template with suffix.
func (c *Client) ollamaRequest(name, prompt string, useSuffix bool, suffix string, p Params, maxTokens int) wire {
	opts := map[string]any{"temperature": p.Temperature}
	if maxTokens > 0 {
		opts["num_predict"] = maxTokens
	}
	if len(p.Stop) > 0 {
		opts["stop"] = p.Stop
	}
	if p.Seed != 0 {
		opts["seed"] = p.Seed
	}
	g := ollamaGenerate{Model: name, Prompt: prompt, Raw: true, Stream: true, Options: opts}
	if useSuffix {
		g.Raw, g.Suffix = false, suffix
	}
	if p.Logprobs > 0 {
		g.Logprobs, g.TopLogprobs = true, min(p.Logprobs, 20)
	}
	body, _ := json.Marshal(g) // plain values: cannot fail
	return wire{url: c.root() + "/api/generate", body: body, ndjson: true}
}

// ollamaLine is one line of /api/generate's stream (or its error line {"error": "…"}).
type ollamaLine struct {
	Response        string         `json:"response"`
	Done            bool           `json:"done"`
	DoneReason      string         `json:"done_reason"`
	PromptEvalCount int            `json:"prompt_eval_count"`
	EvalCount       int            `json:"eval_count"`
	Logprobs        []tokenLogprob `json:"logprobs"`
	Error           string         `json:"error"`
}

// ollamaEvent decodes one line of Ollama's native stream.
func (s *stream) ollamaEvent(data []byte) error {
	var l ollamaLine
	if err := json.Unmarshal(data, &l); err != nil {
		if s.events == 0 && isHTML("", data) {
			return &wrongURLError{url: s.url, what: "an HTML page", hint: s.hint}
		}
		return fmt.Errorf("model stream from %s: bad line %.80q: %w", s.url, data, err)
	}
	s.events++
	if l.Error != "" {
		return &serverError{msg: clip(l.Error), raw: string(data)}
	}
	var lps *logprobs
	if len(l.Logprobs) > 0 {
		lps = &logprobs{Content: l.Logprobs}
		lps.legacy()
	}
	s.pending = append(s.pending, splitTokens(l.Response, lps)...)
	if l.Done {
		if l.PromptEvalCount > 0 || l.EvalCount > 0 {
			s.usage = &usageJSON{PromptTokens: l.PromptEvalCount, CompletionTokens: l.EvalCount}
		}
		s.finish = l.DoneReason
		if s.finish == "" {
			s.finish = "stop"
		}
		s.finished = true
		s.done = true
	}
	return nil
}
