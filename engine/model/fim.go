package model

import (
	"fmt"
	"slices"
	"strings"
)

// FIM is a fill-in-the-middle prompt format: how a code model is shown the text before and after
// the insertion point so that it writes what goes between. The special markers are sent as text;
// the servers (vLLM, SGLang, llama.cpp, Ollama in raw mode) tokenize them as the model's special
// tokens.
type FIM struct {
	// Name is the format's name, as the fim setting and --fim take it.
	Name string
	// Families are lower-case substrings of model names that use the format.
	Families []string
	// Prefix, Suffix and Middle are the markers; SuffixFirst puts the suffix before the prefix
	// (Codestral).
	Prefix, Suffix, Middle string
	SuffixFirst            bool
}

// FIMFormats are the formats Hydra knows, from each model family's own documentation:
// Qwen2.5-Coder (<|fim_prefix|>…<|fim_suffix|>…<|fim_middle|>), DeepSeek-Coder
// (<｜fim▁begin｜>…<｜fim▁hole｜>…<｜fim▁end｜>), StarCoder and StarCoder2
// (<fim_prefix>…<fim_suffix>…<fim_middle>), Code Llama ("<PRE> …" " <SUF>…" " <MID>") and
// Codestral ([SUFFIX]…[PREFIX]…).
var FIMFormats = []FIM{
	{Name: "qwen", Families: []string{"qwen2.5-coder", "qwen2.5_coder", "qwen-coder", "qwen3-coder"}, Prefix: "<|fim_prefix|>", Suffix: "<|fim_suffix|>", Middle: "<|fim_middle|>"},
	{Name: "deepseek", Families: []string{"deepseek-coder", "deepseek_coder"}, Prefix: "<｜fim▁begin｜>", Suffix: "<｜fim▁hole｜>", Middle: "<｜fim▁end｜>"},
	{Name: "starcoder", Families: []string{"starcoder", "santacoder", "bigcode"}, Prefix: "<fim_prefix>", Suffix: "<fim_suffix>", Middle: "<fim_middle>"},
	{Name: "codellama", Families: []string{"codellama", "code-llama", "code_llama"}, Prefix: "<PRE> ", Suffix: " <SUF>", Middle: " <MID>"},
	{Name: "codestral", Families: []string{"codestral"}, Prefix: "[PREFIX]", Suffix: "[SUFFIX]", SuffixFirst: true},
}

// FIMOff is the fim setting that turns fill-in-the-middle off; FIMAuto (or "") chooses the format
// from the model's name.
const (
	FIMOff  = "off"
	FIMAuto = "auto"
)

// FIMNames lists the values the fim setting takes.
func FIMNames() []string {
	names := []string{FIMAuto, FIMOff}
	for _, f := range FIMFormats {
		names = append(names, f.Name)
	}
	return names
}

// ParseFIM checks a fim setting: "", "auto", "off" or a format's name.
func ParseFIM(setting string) (string, error) {
	s := strings.ToLower(strings.TrimSpace(setting))
	if s == "" {
		return FIMAuto, nil
	}
	if slices.Contains(FIMNames(), s) {
		return s, nil
	}
	return "", fmt.Errorf("fim %q: want one of %s", setting, strings.Join(FIMNames(), ", "))
}

// FIMFor returns the format a fim setting means for a model: the named one, the one whose
// family the model's name contains (setting "" or "auto"), or nil (off, or no known family).
func FIMFor(setting, modelName string) *FIM {
	s := strings.ToLower(strings.TrimSpace(setting))
	if s == FIMOff {
		return nil
	}
	if s != "" && s != FIMAuto {
		for i := range FIMFormats {
			if FIMFormats[i].Name == s {
				return &FIMFormats[i]
			}
		}
		return nil
	}
	name := strings.ToLower(modelName)
	for i := range FIMFormats {
		for _, fam := range FIMFormats[i].Families {
			if strings.Contains(name, fam) {
				return &FIMFormats[i]
			}
		}
	}
	return nil
}

// Prompt is the prompt that asks the model for the text between prefix and suffix. Everything
// that changes between attempts (the generated text, the feedback comment) is at the end of
// prefix, so a server's prefix cache keeps what comes before.
func (f *FIM) Prompt(prefix, suffix string) string {
	if f.SuffixFirst {
		return f.Suffix + suffix + f.Prefix + prefix
	}
	return f.Prefix + prefix + f.Suffix + suffix + f.Middle
}
