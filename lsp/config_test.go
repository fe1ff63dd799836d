package lsp

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestConfigSourcesOverlayInOrderAndEnvFillsTheRest(t *testing.T) {
	env := map[string]string{
		"HYDRA_MODEL_URL": "http://env:1",
		"HYDRA_MODEL":     "env-model",
		"HYDRA_API_KEY":   "env-key",
		"MY_KEY":          "my-key",
	}
	s := newConfigStore(func(k string) string { return env[k] })

	if c := s.get(); c.ModelURL != "http://env:1" || c.Model != "env-model" || c.APIKey != "env-key" {
		t.Fatalf("environment fallbacks not used: %+v", c)
	}
	steps := []struct {
		src  configSource
		raw  string
		want Config
	}{
		{sourceInitOptions, `{"hydra": {"modelUrl": "http://init:2", "maxTokens": 100, "clangFlags": ["-DA"]}}`,
			Config{ModelURL: "http://init:2", Model: "env-model", MaxTokens: 100, ClangFlags: []string{"-DA"}, APIKey: "env-key"}},
		{sourceDidChange, `{"model": "flat-model", "apiKeyEnv": "MY_KEY", "policy": "tokpol"}`,
			Config{ModelURL: "http://init:2", Model: "flat-model", APIKeyEnv: "MY_KEY", Policy: "tokpol", MaxTokens: 100, ClangFlags: []string{"-DA"}, APIKey: "my-key"}},
		{sourceConfiguration, `{"maxAttempts": 3, "clangFlags": []}`,
			Config{ModelURL: "http://init:2", Model: "flat-model", APIKeyEnv: "MY_KEY", Policy: "tokpol", MaxTokens: 100, MaxAttempts: 3, ClangFlags: []string{}, APIKey: "my-key"}},
		{sourceDidChange, `null`,
			Config{ModelURL: "http://init:2", Model: "flat-model", APIKeyEnv: "MY_KEY", Policy: "tokpol", MaxTokens: 100, MaxAttempts: 3, ClangFlags: []string{}, APIKey: "my-key"}},
	}
	for i, st := range steps {
		if err := s.apply(st.src, json.RawMessage(st.raw)); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		got := s.get()
		if len(got.ClangFlags) == 0 && len(st.want.ClangFlags) == 0 {
			got.ClangFlags, st.want.ClangFlags = nil, nil
		}
		if !reflect.DeepEqual(got, st.want) {
			t.Fatalf("step %d (%s): config\n%+v\nwant\n%+v", i, st.src, got, st.want)
		}
	}
	for field, want := range map[string]configSource{"modelUrl": sourceInitOptions, "model": sourceDidChange, "maxAttempts": sourceConfiguration} {
		if got := s.source(field); got != want {
			t.Errorf("%s set by %q, want %q", field, got, want)
		}
	}
}

func TestConfigRejectsMalformedSettings(t *testing.T) {
	s := newConfigStore(func(string) string { return "" })
	for _, raw := range []string{`[1,2]`, `{"hydra": {"maxTokens": "many"}}`, `"x"`} {
		if err := s.apply(sourceDidChange, json.RawMessage(raw)); err == nil {
			t.Errorf("settings %s were accepted", raw)
		}
	}
	if c := s.get(); c.MaxTokens != 0 {
		t.Fatalf("a rejected setting changed the configuration: %+v", c)
	}
}
