package modeltest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hydra-lsp/hydra/engine/model"
	"github.com/hydra-lsp/hydra/engine/model/modeltest"
)

func text(t *testing.T, c *model.Client, prompt string, p model.Params) (string, error) {
	t.Helper()
	s, err := c.Complete(context.Background(), model.Request{Prompt: prompt, Params: p})
	if err != nil {
		return "", err
	}
	defer s.Close()
	var sb strings.Builder
	for {
		tok, err := s.Next(context.Background())
		if err == io.EOF {
			return sb.String(), nil
		}
		if err != nil {
			return sb.String(), err
		}
		sb.WriteString(tok.Text)
	}
}

func TestRulesMatchInOrderWithTimes(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
		{PromptSuffix: "{\n", PromptContains: "add", Times: 1, Text: "first"},
		{PromptPrefix: "int", Text: "second"},
		{PromptContains: "zzz", Text: "third"},
	}})
	c, _ := model.NewClient(srv.URL, model.WithRetry(1, 0))
	for _, tc := range []struct{ prompt, want string }{
		{"int add() {\n", "first"},
		{"int add() {\n", "second"}, // the first rule is used up
		{"x zzz", "third"},
	} {
		got, err := text(t, c, tc.prompt, model.Params{})
		if err != nil || got != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.prompt, got, err, tc.want)
		}
	}
	_, err := text(t, c, "nothing matches", model.Params{})
	if err == nil || !strings.Contains(err.Error(), "no rule matches") {
		t.Errorf("unmatched prompt: err = %v", err)
	}
	var rules []int
	for _, call := range srv.Calls() {
		rules = append(rules, call.Rule)
	}
	if len(rules) != 4 || rules[0] != 0 || rules[1] != 1 || rules[2] != 2 || rules[3] != -1 {
		t.Errorf("recorded rules %v, want [0 1 2 -1]", rules)
	}
}

func TestStopSequencesCutTheText(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Text: "a;\nb;\n\n\nc;\n"}}})
	c, _ := model.NewClient(srv.URL)
	got, err := text(t, c, "p", model.Params{Stop: []string{"\n\n"}})
	if err != nil || got != "a;\nb;" {
		t.Errorf("got %q, %v; want \"a;\\nb;\"", got, err)
	}
}

func TestNonStreamedResponseAndModels(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Text: "whole"}}})
	resp, err := http.Post(srv.URL+"/completions", "application/json", strings.NewReader(`{"prompt":"p","stream":false}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Model   string `json:"model"`
		Choices []struct {
			Text string `json:"text"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Model != modeltest.Name || len(out.Choices) != 1 || out.Choices[0].Text != "whole" {
		t.Errorf("response %+v", out)
	}
}

func TestLoadScript(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(`{"rules":[{"prompt_suffix":"{\n","text":"}\n","chunk":2,"delay_ms":1,"times":2}]}`), 0o644)
	s, err := modeltest.LoadScript(good)
	if err != nil || len(s.Rules) != 1 || s.Rules[0].Chunk != 2 || s.Rules[0].Times != 2 {
		t.Errorf("LoadScript = %+v, %v", s, err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"rules":[{"txet":"typo"}]}`), 0o644)
	if _, err := modeltest.LoadScript(bad); err == nil || !strings.Contains(err.Error(), "txet") {
		t.Errorf("unknown field: err = %v", err)
	}
}
