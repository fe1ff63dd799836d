package model

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// contextError is what a server's "context exceeded" rejection says, as far as it says it.
type contextError struct {
	Context int // the model's context length (0 when not said)
	Prompt  int // the prompt's tokens (0 when not said)
}

// The wordings of "prompt + max_tokens exceed the context", from the servers' sources:
//   - vLLM, vllm/entrypoints/renderer / serving_engine.py (2025–26): "You passed 52 input tokens
//     and requested 4096 output tokens. However, the model's context length is only 4096
//     tokens, resulting in a maximum input length of 0 tokens. …", and the older "This model's
//     maximum context length is 4096 tokens. However, you requested 4148 tokens (52 in the
//     messages, 4096 in the completion)", "'max_tokens' or 'max_completion_tokens' is too
//     large: 4096. This model's maximum context length is 4096 tokens and your request has 52
//     input tokens (4096 > 4096 - 52)", "However, your request has 5000 input tokens";
//   - SGLang, python/sglang/srt/entrypoints/openai/serving_base.py / tokenizer_manager.py:
//     "Requested token count exceeds the model's maximum context length of 4096 tokens. You
//     requested a total of 4148 tokens: 52 tokens from the input messages and 4096 tokens for
//     the completion. …", "The input (5000 tokens) is longer than the model's context length
//     (4096 tokens)";
//   - llama.cpp, tools/server/server-context.cpp: {"error": {"code": 400, "message": "request
//     (5000 tokens) exceeds the available context size (4096 tokens), try increasing it",
//     "type": "exceed_context_size_error", "n_prompt_tokens": 5000, "n_ctx": 4096}}.
var (
	reContext = []*regexp.Regexp{
		regexp.MustCompile(`context length is only (\d+) tokens`),
		regexp.MustCompile(`maximum context length (?:is|of) (\d+) tokens`),
		regexp.MustCompile(`context length \((\d+) tokens\)`),
		regexp.MustCompile(`available context size \((\d+) tokens\)`),
	}
	rePrompt = []*regexp.Regexp{
		regexp.MustCompile(`You passed (\d+) input tokens`),
		regexp.MustCompile(`prompt contains (?:at least )?(\d+) input tokens`),
		regexp.MustCompile(`request has (\d+) input tokens`),
		regexp.MustCompile(`\((\d+) in the messages`),
		regexp.MustCompile(`(\d+) tokens from the input`),
		regexp.MustCompile(`The input \((\d+) tokens\)`),
		regexp.MustCompile(`request \((\d+) tokens\) exceeds`),
	}
	reExceeded = regexp.MustCompile(`(?i)context length|context size|context window|maximum input length`)
)

// parseContextError reads a 400's body: ok when it says the context is exceeded.
func parseContextError(body []byte) (contextError, bool) {
	var ce contextError
	var llama struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
			NPrompt int    `json:"n_prompt_tokens"`
			NCtx    int    `json:"n_ctx"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &llama) == nil && llama.Error.Type == "exceed_context_size_error" {
		return contextError{Context: llama.Error.NCtx, Prompt: llama.Error.NPrompt}, true
	}
	msg := errorMessage(body)
	if !reExceeded.MatchString(msg) {
		return ce, false
	}
	for _, re := range reContext {
		if m := re.FindStringSubmatch(msg); m != nil {
			ce.Context, _ = strconv.Atoi(m[1])
			break
		}
	}
	for _, re := range rePrompt {
		if m := re.FindStringSubmatch(msg); m != nil {
			ce.Prompt, _ = strconv.Atoi(m[1])
			break
		}
	}
	// Said without figures (older llama.cpp: "the request exceeds the available context size,
	// try increasing it"): still a context error; the retry counts the prompt more cautiously.
	return ce, true
}

// errorMessage is the message of an error body in any of the servers' shapes: OpenAI's
// {"error": {"message": …}} (vLLM, llama.cpp, Ollama's /v1), the flat {"object": "error",
// "message": …} (SGLang, older vLLM), Ollama's {"error": "…"}, or the body's text.
func errorMessage(b []byte) string {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(b, &e) == nil {
		if len(e.Error) > 0 {
			var obj struct {
				Message string `json:"message"`
			}
			if json.Unmarshal(e.Error, &obj) == nil && obj.Message != "" {
				return obj.Message
			}
			var s string
			if json.Unmarshal(e.Error, &s) == nil && s != "" {
				return s
			}
		}
		if e.Message != "" {
			return e.Message
		}
		if len(e.Detail) > 0 {
			var s string
			if json.Unmarshal(e.Detail, &s) == nil && s != "" {
				return s
			}
		}
	}
	return strings.TrimSpace(string(b))
}

// estimateTokens is a deliberately high estimate of the tokens in s, for servers that cannot
// count them (Ollama): C++ runs at 2.5–4 bytes a token in the common code models' vocabularies
// (dense where digits and punctuation are, Qwen's splits every digit), so one token per 2.5
// bytes rarely undercounts.
func estimateTokens(s string) int {
	return (2*len(s)+4)/5 + 1
}

// fitPlan is how one request is made to fit the context.
type fitPlan struct {
	maxTokens  int
	prefix     string // the prompt as sent (cut from its start when it did not fit)
	suffix     string // the FIM suffix as sent (cut from its end)
	cutPrefix  int    // bytes cut from the prompt's start
	cutSuffix  int    // bytes cut from the suffix's end
	promptToks int    // prompt tokens as counted (or estimated) for the plan
	exact      bool   // promptToks was counted by the server's tokenizer
}

// contextMargin is kept free besides prompt and max_tokens: counts can be off by a few tokens
// (special tokens, a BOS the tokenizer endpoint does not count, an estimate).
func contextMargin(ctxLen int, exact bool) int {
	if exact {
		return 8 + ctxLen/200
	}
	return 16 + ctxLen/20
}

// plan fits prompt (and suffix) and max_tokens into ctxLen tokens, given count (prompt tokens
// of the text as it would be sent, exact or estimated). It asks for
// min(want, ctxLen - count - margin) tokens; when that leaves less than a quarter of the context
// (or want, when smaller) the prompt is cut from its start at a line boundary, and a long
// suffix from its end, until it fits.
func plan(ctxLen, want int, prefix, suffix string, count func(prefix, suffix string) (int, bool)) fitPlan {
	p := fitPlan{maxTokens: want, prefix: prefix, suffix: suffix}
	if ctxLen <= 0 {
		return p
	}
	n, exact := count(prefix, suffix)
	margin := contextMargin(ctxLen, exact)
	p.promptToks, p.exact = n, exact
	room := ctxLen - n - margin
	reserve := min(want, max(ctxLen/4, 1))
	if want <= 0 {
		reserve = max(ctxLen/4, 1)
	}
	if room >= reserve {
		if want <= 0 || want > room {
			p.maxTokens = room
		}
		return p
	}
	// Cut: keep the share of the text that fits, by the bytes-per-token of this text.
	total := len(prefix) + len(suffix)
	budget := ctxLen - reserve - margin
	keep := max(total*budget/max(n, 1), 0)
	keepSuffix := min(len(suffix), keep/4)
	keepPrefix := max(keep-keepSuffix, 0)
	for try := 0; try < 4; try++ {
		p.prefix = cutStart(prefix, keepPrefix)
		p.suffix = cutEnd(suffix, keepSuffix)
		p.cutPrefix = len(prefix) - len(p.prefix)
		p.cutSuffix = len(suffix) - len(p.suffix)
		n, exact = count(p.prefix, p.suffix)
		p.promptToks, p.exact = n, exact
		room = ctxLen - n - contextMargin(ctxLen, exact)
		if room >= reserve || (keepPrefix == 0 && keepSuffix == 0) {
			break
		}
		keepPrefix, keepSuffix = keepPrefix*3/4, keepSuffix*3/4
	}
	if want > 0 {
		p.maxTokens = max(min(want, room), 1)
	} else {
		p.maxTokens = max(room, 1)
	}
	return p
}

// cutStart keeps at most keep bytes of the end of s, starting at a line start when it can.
func cutStart(s string, keep int) string {
	if keep >= len(s) {
		return s
	}
	t := s[len(s)-keep:]
	if i := strings.IndexByte(t, '\n'); i >= 0 && i+1 < len(t) {
		t = t[i+1:]
	}
	return t
}

// cutEnd keeps at most keep bytes of the start of s, ending at a line end when it can.
func cutEnd(s string, keep int) string {
	if keep >= len(s) {
		return s
	}
	t := s[:keep]
	if i := strings.LastIndexByte(t, '\n'); i >= 0 {
		t = t[:i+1]
	}
	return t
}

// cutNote says what plan cut, for the summary.
func (p fitPlan) cutNote(ctxLen int, prompt string) string {
	if p.cutPrefix == 0 && p.cutSuffix == 0 {
		return ""
	}
	msg := fmt.Sprintf("the prompt did not fit the model's context (%d tokens): the model saw it without its first %d lines", ctxLen,
		strings.Count(prompt[:p.cutPrefix], "\n"))
	if p.cutSuffix > 0 {
		msg += fmt.Sprintf(" and the code after the insertion point without its last %d bytes", p.cutSuffix)
	}
	return msg + "; the checker still checks the whole document"
}
