package standin

import (
	"fmt"
	"net/http"
)

// The SGLang stand-in follows sgl-project/sglang at 004c82e07d876f6e4a0ad6e15325706b0f478f1a:
//   - python/sglang/srt/entrypoints/openai/serving_completions.py, _generate_completion_stream:
//     events with choices[{index, text, logprobs, finish_reason, matched_stop}] and "model" as
//     the request named it, "usage" in every event with continuous_usage_stats, a last
//     "choices": [] event with the usage (exclude_none) when include_usage, an error after the
//     stream started as data: {"error": {…}}, then data: [DONE];
//   - serving_base.py: create_error_response answers with the flat ErrorResponse
//     {"object": "error", "message", "type", "param", "code"} (protocol.py);
//   - tokenizer_manager.py, the context check: "Requested token count exceeds the model's
//     maximum context length of C tokens. You requested a total of T tokens: N tokens from the
//     input messages and M tokens for the completion. …" (400);
//   - the model name is not checked (one model is served); /v1/models has owned_by "sglang"
//     and max_model_len; /tokenize answers {"tokens", "count", "max_model_len"};
//   - the HTTP server answers only once the model is loaded (connection refused before).
func (s *Server) sglang(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/tokenize" {
		r.URL.Path = "/tokenize"
	}
	flat := func(status int, typ, msg, _ string) any {
		return map[string]any{"object": "error", "message": msg, "type": typ, "param": nil, "code": status}
	}
	s.openAI(w, r, openAIStyle{
		ownedBy: "sglang",
		errBody: flat,
		streamErr: func(msg string) any {
			return map[string]any{"error": flat(500, "InternalServerError", msg, "")}
		},
		tooLong: func(n, m, c int) string {
			return fmt.Sprintf("Requested token count exceeds the model's maximum context length of %d tokens. You requested a total of %d tokens: %d tokens from the input messages and %d tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.",
				c, n+m, n, m)
		},
		notFound: map[string]any{"detail": "Not Found"},
		choiceExtra: func(ch map[string]any) {
			ch["matched_stop"] = nil
		},
	})
}
