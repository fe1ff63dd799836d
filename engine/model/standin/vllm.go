package standin

import (
	"fmt"
	"net/http"
	"time"
)

// The vLLM stand-in follows vllm-project/vllm at 00463e627b4cbe549b5e9815a2bdb0100ae88ea9:
//   - vllm/entrypoints/openai/serving_completion.py, completion_stream_generator: one event per
//     engine step (a token here) with choices[{index, text, logprobs, finish_reason,
//     stop_reason}], "usage" in every event with stream_options.continuous_usage_stats, a last
//     event with "choices": [] and the usage when include_usage, an error as
//     data: {"error": {…}} followed by data: [DONE];
//   - _create_completion_logprobs: the legacy shape {text_offset, token_logprobs, tokens,
//     top_logprobs: [{token: logprob}]};
//   - vllm/entrypoints/openai/protocol.py (ErrorResponse {"error": {message, type, param,
//     code}}, ModelCard with owned_by "vllm" and max_model_len);
//   - serving_engine.py / renderer: "You passed N input tokens and requested M output tokens.
//     However, the model's context length is only C tokens, …" (400), "The model `x` does not
//     exist." (404);
//   - /tokenize (serving_tokenization.py): {"count", "max_model_len", "tokens", "token_strs"};
//   - the API server listens only once the model is loaded (connection refused before).

func (s *Server) vllm(w http.ResponseWriter, r *http.Request) {
	s.openAI(w, r, openAIStyle{
		ownedBy: "vllm",
		errBody: func(status int, typ, msg, param string) any {
			return map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nilIfEmpty(param), "code": status}}
		},
		streamErr: func(msg string) any {
			return map[string]any{"error": map[string]any{"message": msg, "type": "BadRequestError", "param": nil, "code": 400}}
		},
		unknownModel: func(name string) string { return fmt.Sprintf("The model `%s` does not exist.", name) },
		tooLong: func(n, m, c int) string {
			return fmt.Sprintf("You passed %d input tokens and requested %d output tokens. However, the model's context length is only %d tokens, resulting in a maximum input length of %d tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value=%d)",
				n, m, c, c-m, n)
		},
		notFound: map[string]any{"detail": "Not Found"}, // FastAPI
		choiceExtra: func(ch map[string]any) {
			ch["stop_reason"] = nil
		},
	})
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// openAIStyle is what differs between the vLLM and SGLang stand-ins, both Python servers with
// the same OpenAI completions shape.
type openAIStyle struct {
	ownedBy      string
	errBody      func(status int, typ, msg, param string) any
	streamErr    func(msg string) any
	unknownModel func(name string) string // "" = the model name is not checked
	tooLong      func(n, m, c int) string
	notFound     any
	choiceExtra  func(map[string]any)
}

func (s *Server) openAI(w http.ResponseWriter, r *http.Request, st openAIStyle) {
	switch {
	case r.URL.Path == "/v1/models" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{map[string]any{
			"id": s.cfg.Model, "object": "model", "created": time.Now().Unix(), "owned_by": st.ownedBy,
			"root": s.cfg.Model, "parent": nil, "max_model_len": s.cfg.ContextLen}}})
	case r.URL.Path == "/tokenize" && r.Method == http.MethodPost:
		body, err := readBody(r)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, st.errBody(400, "BadRequestError", err.Error(), ""))
			return
		}
		toks := Tokenize(str(body, "prompt"))
		ids := make([]int, len(toks))
		for i, t := range toks {
			ids[i] = TokenID(t)
		}
		writeJSON(w, http.StatusOK, map[string]any{"count": len(ids), "max_model_len": s.cfg.ContextLen, "tokens": ids, "token_strs": nil})
	case r.URL.Path == "/v1/completions" && r.Method == http.MethodPost:
		s.openAIComplete(w, r, st)
	default:
		writeJSON(w, http.StatusNotFound, st.notFound)
	}
}

func (s *Server) openAIComplete(w http.ResponseWriter, r *http.Request, st openAIStyle) {
	body, err := readBody(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, st.errBody(400, "BadRequestError", err.Error(), ""))
		return
	}
	prompt := str(body, "prompt")
	q := Request{Path: r.URL.Path, Body: body, Model: str(body, "model"), Prompt: prompt, PromptTokens: len(Tokenize(prompt))}
	q.MaxTokens, _ = num(body, "max_tokens")
	if st.unknownModel != nil && q.Model != "" && q.Model != s.cfg.Model {
		q.Rejected = http.StatusNotFound
		s.record(q)
		writeJSON(w, http.StatusNotFound, st.errBody(404, "NotFoundError", st.unknownModel(q.Model), "model"))
		return
	}
	maxTokens := q.MaxTokens
	if maxTokens == 0 {
		maxTokens = s.cfg.ContextLen - q.PromptTokens
	}
	if q.PromptTokens+maxTokens > s.cfg.ContextLen {
		q.Rejected = http.StatusBadRequest
		s.record(q)
		writeJSON(w, http.StatusBadRequest, st.errBody(400, "BadRequestError", st.tooLong(q.PromptTokens, maxTokens, s.cfg.ContextLen), "input_tokens"))
		return
	}
	idx := s.record(q)
	cached := s.cached(prompt)
	rep := s.reply(prompt)
	toks, finish := complete(rep, stops(body["stop"]), maxTokens)
	so := obj(body, "stream_options")
	includeUsage, continuous := truthy(so, "include_usage"), truthy(so, "continuous_usage_stats")
	nlp, wantLP := num(body, "logprobs")
	created := time.Now().Unix()
	id := "cmpl-" + fmt.Sprint(created)
	usage := func(done int) map[string]any {
		return map[string]any{"prompt_tokens": q.PromptTokens, "total_tokens": q.PromptTokens + done, "completion_tokens": done}
	}
	e := startSSE(w)
	offset := 0
	for i, tok := range toks {
		if !s.before(w, r, idx, i, rep, func() {
			e.Send(st.streamErr("the engine failed while generating"))
			e.Send("[DONE]")
		}) {
			return
		}
		var fin any
		if i == len(toks)-1 {
			fin = finish
		}
		var lp any
		if wantLP {
			v := Logprob(i)
			top := map[string]any{tok: v}
			if nlp > 0 {
				top[tok+"_"] = v - 2
			}
			lp = map[string]any{"text_offset": []int{offset}, "token_logprobs": []float64{v}, "tokens": []string{tok}, "top_logprobs": []any{top}}
		}
		offset += len(tok)
		ch := map[string]any{"index": 0, "text": tok, "logprobs": lp, "finish_reason": fin}
		if st.choiceExtra != nil {
			st.choiceExtra(ch)
		}
		ev := map[string]any{"id": id, "object": "text_completion", "created": created, "model": s.cfg.Model,
			"choices": []any{ch}, "usage": nil}
		if continuous {
			ev["usage"] = usage(i + 1)
		}
		if !e.Send(ev) {
			s.served(idx, i)
			return
		}
	}
	if len(toks) == 0 { // an empty completion still finishes
		ch := map[string]any{"index": 0, "text": "", "logprobs": nil, "finish_reason": finish}
		e.Send(map[string]any{"id": id, "object": "text_completion", "created": created, "model": s.cfg.Model, "choices": []any{ch}, "usage": nil})
	}
	s.served(idx, len(toks))
	if includeUsage {
		u := usage(len(toks))
		if cached > 0 {
			u["prompt_tokens_details"] = map[string]any{"cached_tokens": cached}
		}
		e.Send(map[string]any{"id": id, "object": "text_completion", "created": created, "model": s.cfg.Model, "choices": []any{}, "usage": u})
	}
	e.Send("[DONE]")
}
