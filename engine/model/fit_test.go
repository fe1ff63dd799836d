package model

import (
	"strings"
	"testing"
)

func TestParseContextErrorOfEachServer(t *testing.T) {
	for _, tc := range []struct {
		name, body   string
		ctx, prompt  int
		contextError bool
	}{
		{"vLLM", `{"error":{"message":"You passed 52 input tokens and requested 4096 output tokens. However, the model's context length is only 4096 tokens, resulting in a maximum input length of 0 tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value=52)","type":"BadRequestError","param":"input_tokens","code":400}}`, 4096, 52, true},
		{"vLLM, max_tokens too large", `{"error":{"message":"'max_tokens' or 'max_completion_tokens' is too large: 4096. This model's maximum context length is 4096 tokens and your request has 52 input tokens (4096 > 4096 - 52). None","type":"BadRequestError","param":null,"code":400}}`, 4096, 52, true},
		{"vLLM, older", `{"object":"error","message":"This model's maximum context length is 2048 tokens. However, you requested 2100 tokens (52 in the messages, 2048 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`, 2048, 52, true},
		{"SGLang", `{"object":"error","message":"Requested token count exceeds the model's maximum context length of 4096 tokens. You requested a total of 4148 tokens: 52 tokens from the input messages and 4096 tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.","type":"BadRequestError","param":null,"code":400}`, 4096, 52, true},
		{"llama.cpp", `{"error":{"code":400,"message":"request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}`, 4096, 5000, true},
		{"llama.cpp, no figures", `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"invalid_request_error"}}`, 0, 0, true},
		{"another 400", `{"error":{"message":"temperature must be non-negative","type":"BadRequestError","code":400}}`, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ce, ok := parseContextError([]byte(tc.body))
			if ok != tc.contextError || ce.Context != tc.ctx || ce.Prompt != tc.prompt {
				t.Errorf("got %+v ok=%v, want context %d prompt %d ok=%v", ce, ok, tc.ctx, tc.prompt, tc.contextError)
			}
		})
	}
}

func TestPlanFitsAndCutsAtLines(t *testing.T) {
	perByte := func(p, s string) (int, bool) { return len(p) + len(s), true } // one token a byte
	p := plan(1000, 4096, strings.Repeat("x", 100), "", perByte)
	if p.maxTokens+100 > 1000 || p.maxTokens < 850 || p.cutPrefix != 0 {
		t.Errorf("plan %+v: want max_tokens lowered to fit, nothing cut", p)
	}
	prompt := strings.Repeat("line of code\n", 200) // 2600 bytes
	p = plan(1000, 4096, prompt, "", perByte)
	if p.cutPrefix == 0 || !strings.HasSuffix(prompt, p.prefix) || !strings.HasPrefix(p.prefix, "line") || p.promptToks+p.maxTokens > 1000 || p.maxTokens < 200 {
		t.Errorf("plan cut %d bytes, prompt %d tokens, max %d: want a line-aligned tail that leaves a quarter of the context", p.cutPrefix, p.promptToks, p.maxTokens)
	}
	if note := p.cutNote(1000, prompt); !strings.Contains(note, "without its first") {
		t.Errorf("note %q", note)
	}
	if p := plan(0, 4096, prompt, "", perByte); p.maxTokens != 4096 || p.prefix != prompt {
		t.Errorf("unknown context: plan %+v, want the request as asked", p)
	}
}

func TestFIMChosenFromTheModelName(t *testing.T) {
	for name, want := range map[string]string{
		"Qwen/Qwen2.5-Coder-7B": "qwen", "qwen2.5-coder:7b": "qwen", "deepseek-ai/deepseek-coder-6.7b-base": "deepseek",
		"bigcode/starcoder2-15b": "starcoder", "codellama:7b-code": "codellama", "mistralai/Codestral-22B-v0.1": "codestral",
		"meta-llama/Llama-3.1-8B": "",
	} {
		got := ""
		if f := FIMFor("auto", name); f != nil {
			got = f.Name
		}
		if got != want {
			t.Errorf("%s: format %q, want %q", name, got, want)
		}
	}
	if FIMFor("off", "qwen2.5-coder") != nil || FIMFor("starcoder", "llama").Name != "starcoder" {
		t.Error("the setting does not override the name")
	}
	if _, err := ParseFIM("bogus"); err == nil {
		t.Error("a bad fim setting is accepted")
	}
}
