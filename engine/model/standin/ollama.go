package standin

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// The Ollama stand-in follows ollama/ollama at fb30760996871fa9460115c753afd2c60d4ab0f7:
//   - server/routes.go, GenerateHandler and streamResponse: POST /api/generate streams one JSON
//     object a line (application/x-ndjson), one token each ({"model", "created_at",
//     "response", "done": false}), then {"done": true, "done_reason", "prompt_eval_count",
//     "eval_count", durations}; "raw": true passes the prompt to the model untouched, without
//     raw the model's template renders it (an instruct model's chat template, or its
//     fill-in-the-middle template when "suffix" is given); an error after the stream started is
//     a line {"error": "…"}; an unknown model is 404 {"error": "model 'x' not found"};
//     logprobs (api/types.go, Logprob) ride on each line as [{token, logprob, bytes,
//     top_logprobs}];
//   - middleware/openai.go, CompleteWriter, with openai/openai.go: /v1/completions goes
//     through the same handler without raw (so through the chat template), each event carries
//     "usage" of zeros when stream_options.include_usage is set, the usage comes in a last
//     "choices": [] event, then data: [DONE]; a later error line becomes an empty event and
//     the stream ends without [DONE];
//   - GET /api/version, /api/tags, /api/ps (context_length of a loaded model), POST /api/show
//     (parameters, model_info's <arch>.context_length, capabilities);
//   - everything is written by Go's encoding/json, which escapes <, > and & as \u003c, \u003e
//     and \u0026;
//   - a model is loaded on its first request, which waits for it.

func (s *Server) ollama(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "Ollama is running")
	case r.URL.Path == "/api/version":
		goJSON(w, http.StatusOK, map[string]any{"version": "0.12.3"})
	case r.URL.Path == "/api/tags":
		goJSON(w, http.StatusOK, map[string]any{"models": []any{map[string]any{"name": s.cfg.Model, "model": s.cfg.Model,
			"modified_at": "2026-08-01T10:00:00Z", "size": 4683087332, "digest": "2b0496514337",
			"details": map[string]any{"format": "gguf", "family": "qwen2", "parameter_size": "7.6B", "quantization_level": "Q4_K_M"}}}})
	case r.URL.Path == "/api/ps":
		var models []any
		if s.ollamaLoaded() {
			models = append(models, map[string]any{"name": s.cfg.Model, "model": s.cfg.Model, "size": 6000000000, "digest": "2b0496514337",
				"expires_at": time.Now().Add(5 * time.Minute).Format(time.RFC3339), "size_vram": 6000000000, "context_length": s.cfg.ContextLen})
		}
		goJSON(w, http.StatusOK, map[string]any{"models": models})
	case r.URL.Path == "/api/show" && r.Method == http.MethodPost:
		body, _ := readBody(r)
		name := str(body, "model")
		if name == "" {
			name = str(body, "name")
		}
		if !s.ollamaKnows(name) {
			goJSON(w, http.StatusNotFound, map[string]any{"error": fmt.Sprintf("model '%s' not found", name)})
			return
		}
		params := `stop                           "<|endoftext|>"`
		if s.cfg.ContextLen != 4096 {
			params = fmt.Sprintf("num_ctx                        %d\n%s", s.cfg.ContextLen, params)
		}
		goJSON(w, http.StatusOK, map[string]any{"parameters": params, "template": qwenTemplate,
			"details":      map[string]any{"format": "gguf", "family": "qwen2"},
			"model_info":   map[string]any{"general.architecture": "qwen2", "qwen2.context_length": 32768},
			"capabilities": []string{"completion", "tools", "insert"}})
	case r.URL.Path == "/api/generate" && r.Method == http.MethodPost:
		s.ollamaGenerate(w, r, false)
	case r.URL.Path == "/v1/completions" && r.Method == http.MethodPost:
		s.ollamaGenerate(w, r, true)
	case r.URL.Path == "/v1/models":
		goJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{map[string]any{"id": s.cfg.Model, "object": "model",
			"created": time.Now().Unix(), "owned_by": "library"}}})
	default:
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "404 page not found")
	}
}

// qwenTemplate is the shape of the qwen2.5-coder tag's template: FIM with a suffix, ChatML
// otherwise.
const qwenTemplate = `{{- if .Suffix }}<|fim_prefix|>{{ .Prompt }}<|fim_suffix|>{{ .Suffix }}<|fim_middle|>
{{- else }}<|im_start|>user
{{ .Prompt }}<|im_end|>
<|im_start|>assistant
{{ end }}`

var ollamaState sync.Map // *Server → loaded

func (s *Server) ollamaLoaded() bool {
	_, ok := ollamaState.Load(s)
	return ok
}

func (s *Server) ollamaKnows(name string) bool {
	return name == s.cfg.Model || name+":latest" == s.cfg.Model
}

// goJSON writes v as Ollama's Go server does: encoding/json with HTML escaping.
func goJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	b, _ := json.Marshal(v)
	w.Write(b)
}

func goLine(w http.ResponseWriter, v any) bool {
	b, _ := json.Marshal(v)
	if _, err := w.Write(append(b, '\n')); err != nil {
		return false
	}
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	return true
}

// ollamaGenerate serves /api/generate (openai false) and /v1/completions (openai true).
func (s *Server) ollamaGenerate(w http.ResponseWriter, r *http.Request, openai bool) {
	body, err := readBody(r)
	if err != nil {
		goJSON(w, http.StatusBadRequest, map[string]any{"error": err.Error()})
		return
	}
	name := str(body, "model")
	q := Request{Path: r.URL.Path, Body: body, Model: name, Suffix: str(body, "suffix"), Raw: truthy(body, "raw")}
	opts := obj(body, "options")
	if openai {
		q.MaxTokens, _ = num(body, "max_tokens")
	} else {
		q.MaxTokens, _ = num(opts, "num_predict")
	}
	if !s.ollamaKnows(name) {
		q.Rejected = http.StatusNotFound
		s.record(q)
		msg := fmt.Sprintf("model '%s' not found", name)
		if openai {
			goJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"message": msg, "type": "not_found_error", "param": nil, "code": nil}})
		} else {
			goJSON(w, http.StatusNotFound, map[string]any{"error": msg})
		}
		return
	}
	prompt := str(body, "prompt")
	chat := false
	switch {
	case q.Raw:
	case q.Suffix != "":
		prompt = "<|fim_prefix|>" + prompt + "<|fim_suffix|>" + q.Suffix + "<|fim_middle|>"
	default:
		prompt = "<|im_start|>user\n" + prompt + "<|im_end|>\n<|im_start|>assistant\n"
		chat = true
	}
	q.Prompt = prompt
	q.PromptTokens = min(len(Tokenize(prompt)), s.cfg.ContextLen) // the runner truncates to num_ctx
	if wait := time.Until(s.loaded); wait > 0 && !sleep(r, wait) {
		return
	}
	ollamaState.Store(s, true)
	idx := s.record(q)
	rep := s.reply(str(body, "prompt"))
	text := rep.Text
	if chat {
		// An instruct model answers a chat turn in prose, the code in a fence.
		text = "Here is the completed code:\n\n```cpp\n" + text + "```\n"
	}
	st := opts["stop"]
	if openai {
		st = body["stop"]
	}
	toks, finish := complete(&Reply{Text: text}, stops(st), q.MaxTokens)
	wantLP := !s.cfg.NoLogprobs && (truthy(body, "logprobs") || func() bool { n, _ := num(body, "logprobs"); return n > 0 }())
	model := s.cfg.Model
	created := time.Now()
	now := func() string { return time.Now().UTC().Format(time.RFC3339Nano) }
	var e *sse
	so := obj(body, "stream_options")
	includeUsage := openai && truthy(so, "include_usage")
	id := fmt.Sprintf("cmpl-%d", created.Unix()%999)
	chunk := func(text string, fin any, lp any) map[string]any {
		ch := map[string]any{"text": text, "index": 0, "finish_reason": fin}
		if lp != nil {
			ch["logprobs"] = map[string]any{"content": lp}
		}
		c := map[string]any{"id": id, "object": "text_completion", "created": time.Now().Unix(), "choices": []any{ch},
			"model": model, "system_fingerprint": "fp_ollama"}
		if includeUsage {
			c["usage"] = map[string]any{"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
		}
		return c
	}
	send := func(v map[string]any) bool {
		if e != nil {
			b, _ := json.Marshal(v)
			return e.Send(string(b))
		}
		return goLine(w, v)
	}
	if openai {
		e = startSSE(w)
	} else {
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(http.StatusOK)
	}
	for i, tok := range toks {
		if !s.before(w, r, idx, i, rep, func() {
			if openai {
				// CompleteWriter decodes the error line as an empty GenerateResponse.
				send(chunk("", nil, nil))
			} else {
				goLine(w, map[string]any{"error": "llama runner process has terminated: exit status 2"})
			}
		}) {
			return
		}
		var lp any
		if wantLP {
			v := Logprob(i)
			lp = []any{map[string]any{"token": tok, "logprob": v, "bytes": []byte(tok),
				"top_logprobs": []any{map[string]any{"token": tok, "logprob": v}, map[string]any{"token": tok + "_", "logprob": v - 2}}}}
		}
		var ok bool
		if openai {
			ok = send(chunk(tok, nil, lp))
		} else {
			line := map[string]any{"model": model, "created_at": now(), "response": tok, "done": false}
			if lp != nil {
				line["logprobs"] = lp
			}
			ok = send(line)
		}
		if !ok {
			s.served(idx, i)
			return
		}
	}
	s.served(idx, len(toks))
	if openai {
		send(chunk("", finish, nil))
		if includeUsage {
			u := chunk("", nil, nil)
			u["choices"] = []any{}
			u["usage"] = map[string]any{"prompt_tokens": q.PromptTokens, "completion_tokens": len(toks), "total_tokens": q.PromptTokens + len(toks)}
			send(u)
		}
		e.Send("[DONE]")
		return
	}
	send(map[string]any{"model": model, "created_at": now(), "response": "", "done": true, "done_reason": finish,
		"total_duration": time.Since(created).Nanoseconds(), "load_duration": 1000000, "prompt_eval_count": q.PromptTokens,
		"prompt_eval_duration": 2000000, "eval_count": len(toks), "eval_duration": 3000000})
}

// Prose reports whether text looks like an instruct model's chat answer rather than code.
func Prose(text string) bool {
	return strings.Contains(text, "```") || strings.HasPrefix(text, "Here is")
}
