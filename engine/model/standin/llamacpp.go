package standin

import (
	"fmt"
	"net/http"
	"time"
)

// The llama.cpp stand-in follows ggml-org/llama.cpp, tools/server/ at server-task.cpp
// 17f5f8a80d8ac9c18c23ecb2321640daeec77096 and server-context.cpp
// fb4026604c67c682f552337ec9b91eced0abd35a:
//   - server_task_result_cmpl_partial::to_json_oaicompat_partial: one event per token,
//     choices[{text, index, logprobs, finish_reason: null}], logprobs in the chat shape
//     {"content": [{id, token, bytes, logprob, top_logprobs: [{id, token, bytes, logprob}]}]}
//     (completion_token_output::probs_vector_to_json) even on /v1/completions;
//   - server_task_result_cmpl_final::to_json_oaicompat: a last event with text "" and
//     finish_reason "stop" or "length" (the n_predict limit, or a full context), "usage"
//     (with prompt_tokens_details.cached_tokens) and "timings" — stream_options is not read;
//     then data: [DONE];
//   - an error during the stream: data: {"error": {code, message, type}}, and the stream ends;
//   - while the model loads every endpoint answers 503 {"error": {"code": 503, "message":
//     "Loading model", "type": "unavailable_error"}};
//   - a prompt that does not fit: 400 {"error": {"code": 400, "message": "request (N tokens)
//     exceeds the available context size (C tokens), try increasing it", "type":
//     "exceed_context_size_error", "n_prompt_tokens": N, "n_ctx": C}}; max_tokens beyond the
//     context is not refused (generation stops at the full context);
//   - the model name is not checked; /v1/models has owned_by "llamacpp"; GET /props has
//     default_generation_settings.n_ctx; POST /tokenize {"content", "add_special"} →
//     {"tokens": [ids]} (a BOS token counts when add_special);
//   - POST /completion and /completions (without /v1) are the native endpoint: events
//     {"index", "content", "tokens", "stop": false, "id_slot", "tokens_predicted",
//     "tokens_evaluated"}, a last one with "stop": true, and no [DONE].

const llamaBOS = 1 // the stand-in model adds a BOS token, as most GGUF models do

func (s *Server) llamacpp(w http.ResponseWriter, r *http.Request) {
	if s.loading() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"error": map[string]any{"code": 503, "message": "Loading model", "type": "unavailable_error"}})
		return
	}
	switch {
	case r.URL.Path == "/health":
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok"})
	case r.URL.Path == "/v1/models" || r.URL.Path == "/models":
		writeJSON(w, http.StatusOK, map[string]any{
			"models": []any{map[string]any{"name": s.cfg.Model, "model": s.cfg.Model, "type": "model", "capabilities": []string{"completion"}}},
			"object": "list",
			"data": []any{map[string]any{"id": s.cfg.Model, "object": "model", "created": time.Now().Unix(), "owned_by": "llamacpp",
				"meta": map[string]any{"vocab_type": 2, "n_vocab": 151936, "n_ctx_train": 32768, "n_embd": 3584, "n_params": 7615616512, "size": 8098525184}}},
		})
	case r.URL.Path == "/props":
		writeJSON(w, http.StatusOK, map[string]any{
			"default_generation_settings": map[string]any{"id": 0, "id_task": -1, "n_ctx": s.cfg.ContextLen, "speculative": false, "is_processing": false,
				"params": map[string]any{"n_predict": -1, "temperature": 0.8}},
			"total_slots": 1, "model_path": "/models/" + s.cfg.Model, "chat_template": "{{ messages }}", "build_info": "b6500-standin",
		})
	case r.URL.Path == "/tokenize" && r.Method == http.MethodPost:
		body, err := readBody(r)
		if err != nil {
			s.llamaError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
			return
		}
		var ids []int
		if truthy(body, "add_special") {
			ids = append(ids, llamaBOS)
		}
		for _, t := range Tokenize(str(body, "content")) {
			ids = append(ids, TokenID(t))
		}
		if ids == nil {
			ids = []int{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"tokens": ids})
	case r.URL.Path == "/v1/completions" && r.Method == http.MethodPost:
		s.llamaComplete(w, r, false)
	case (r.URL.Path == "/completion" || r.URL.Path == "/completions") && r.Method == http.MethodPost:
		s.llamaComplete(w, r, true)
	case r.URL.Path == "/":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><html><head><title>llama.cpp - chat</title></head><body></body></html>")
	default:
		s.llamaError(w, http.StatusNotFound, "not_found_error", "File Not Found")
	}
}

func (s *Server) llamaError(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "message": msg, "type": typ}})
}

func (s *Server) llamaComplete(w http.ResponseWriter, r *http.Request, native bool) {
	body, err := readBody(r)
	if err != nil {
		s.llamaError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	prompt := str(body, "prompt")
	q := Request{Path: r.URL.Path, Body: body, Model: str(body, "model"), Prompt: prompt, PromptTokens: llamaBOS + len(Tokenize(prompt))}
	var ok bool
	if q.MaxTokens, ok = num(body, "max_tokens"); !ok {
		q.MaxTokens, _ = num(body, "n_predict")
	}
	if q.PromptTokens >= s.cfg.ContextLen {
		q.Rejected = http.StatusBadRequest
		s.record(q)
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": 400,
			"message": fmt.Sprintf("request (%d tokens) exceeds the available context size (%d tokens), try increasing it", q.PromptTokens, s.cfg.ContextLen),
			"type":    "exceed_context_size_error", "n_prompt_tokens": q.PromptTokens, "n_ctx": s.cfg.ContextLen}})
		return
	}
	idx := s.record(q)
	cached := s.cached(prompt)
	rep := s.reply(prompt)
	limit := s.cfg.ContextLen - q.PromptTokens // generation stops at the full context
	if q.MaxTokens > 0 {
		limit = min(limit, q.MaxTokens)
	}
	toks, finish := complete(rep, stops(body["stop"]), limit)
	nlp, wantLP := num(body, "logprobs")
	if !wantLP {
		nlp, wantLP = num(body, "n_probs")
	}
	wantLP = wantLP && nlp > 0
	created := time.Now().Unix()
	id := fmt.Sprintf("chatcmpl-standin%d", created)
	e := startSSE(w)
	for i, tok := range toks {
		if !s.before(w, r, idx, i, rep, func() {
			e.Send(map[string]any{"error": map[string]any{"code": 500, "message": "llama_decode failed", "type": "server_error"}})
		}) {
			return
		}
		if native {
			if !e.Send(map[string]any{"index": 0, "content": tok, "tokens": []int{TokenID(tok)}, "stop": false, "id_slot": -1,
				"tokens_predicted": i + 1, "tokens_evaluated": q.PromptTokens}) {
				s.served(idx, i)
				return
			}
			continue
		}
		var lp any
		if wantLP {
			v := Logprob(i)
			top := []any{map[string]any{"id": TokenID(tok), "token": tok, "bytes": []byte(tok), "logprob": v}}
			if nlp > 1 {
				top = append(top, map[string]any{"id": TokenID(tok + "_"), "token": tok + "_", "bytes": []byte(tok + "_"), "logprob": v - 2})
			}
			lp = map[string]any{"content": []any{map[string]any{"id": TokenID(tok), "token": tok, "bytes": []byte(tok), "logprob": v, "top_logprobs": top}}}
		}
		if !e.Send(map[string]any{"choices": []any{map[string]any{"text": tok, "index": 0, "logprobs": lp, "finish_reason": nil}},
			"created": created, "model": s.cfg.Model, "system_fingerprint": "b6500-standin", "object": "text_completion", "id": id}) {
			s.served(idx, i)
			return
		}
	}
	s.served(idx, len(toks))
	timings := map[string]any{"cache_n": cached, "prompt_n": q.PromptTokens - cached, "prompt_ms": 1.5, "predicted_n": len(toks), "predicted_ms": 2.5}
	if native {
		stopType := "eos"
		if finish == "length" {
			stopType = "limit"
		}
		e.Send(map[string]any{"index": 0, "content": "", "tokens": []int{}, "id_slot": 0, "stop": true, "model": s.cfg.Model,
			"tokens_predicted": len(toks), "tokens_evaluated": q.PromptTokens, "stop_type": stopType, "stopping_word": "",
			"tokens_cached": q.PromptTokens + len(toks), "timings": timings})
		return
	}
	e.Send(map[string]any{"choices": []any{map[string]any{"text": "", "index": 0, "logprobs": nil, "finish_reason": finish}},
		"created": created, "model": s.cfg.Model, "system_fingerprint": "b6500-standin", "object": "text_completion",
		"usage": map[string]any{"completion_tokens": len(toks), "prompt_tokens": q.PromptTokens, "total_tokens": q.PromptTokens + len(toks),
			"prompt_tokens_details": map[string]any{"cached_tokens": cached}},
		"id": id, "timings": timings})
	e.Send("[DONE]")
}
