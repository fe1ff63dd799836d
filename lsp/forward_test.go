package lsp

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestClangdInitParams(t *testing.T) {
	raw := json.RawMessage(`{"processId": 42, "rootUri": "file:///p",
		"capabilities": {"offsetEncoding": ["utf-8"], "general": {"positionEncodings": ["utf-32", "utf-8"]},
		"textDocument": {"hover": {"contentFormat": ["markdown"]}}},
		"initializationOptions": {"hydra": {"clangd": true}}}`)
	out, err := clangdInitParams(raw, encUTF8, []string{"-std=c++20"})
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		ProcessID    *int   `json:"processId"`
		RootURI      string `json:"rootUri"`
		Capabilities struct {
			OffsetEncoding []string `json:"offsetEncoding"`
			General        struct {
				PositionEncodings []string `json:"positionEncodings"`
			} `json:"general"`
			TextDocument map[string]any `json:"textDocument"`
		} `json:"capabilities"`
		InitializationOptions struct {
			FallbackFlags []string       `json:"fallbackFlags"`
			Hydra         map[string]any `json:"hydra"`
		} `json:"initializationOptions"`
	}
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatal(err)
	}
	if p.ProcessID != nil || p.RootURI != "file:///p" || p.Capabilities.OffsetEncoding != nil ||
		!reflect.DeepEqual(p.Capabilities.General.PositionEncodings, []string{"utf-8"}) ||
		p.Capabilities.TextDocument["hover"] == nil ||
		!reflect.DeepEqual(p.InitializationOptions.FallbackFlags, []string{"-std=c++20"}) || p.InitializationOptions.Hydra == nil {
		t.Fatalf("clangd's initialize params: %s", out)
	}
	if _, err := clangdInitParams(json.RawMessage(`[1]`), encUTF16, nil); err == nil {
		t.Fatal("params that are not an object: no error")
	}
}

func TestMergeInitialize(t *testing.T) {
	own := InitializeResult{
		Capabilities: ServerCapabilities{
			PositionEncoding:         "utf-16",
			TextDocumentSync:         TextDocumentSyncOptions{OpenClose: true, Change: 2},
			CodeActionProvider:       CodeActionOptions{CodeActionKinds: []string{KindGenerate}},
			ExecuteCommandProvider:   ExecuteCommandOptions{Commands: []string{CommandGenerate, CommandCancel}},
			InlineCompletionProvider: &InlineCompletionOptions{},
		},
		ServerInfo: ServerInfo{Name: "hydra", Version: "1.0"},
	}
	// A client without code action literals: clangd says codeActionProvider: true.
	clangd := json.RawMessage(`{"serverInfo": {"name": "clangd", "version": "19.1.7"}, "offsetEncoding": "utf-16",
		"capabilities": {"definitionProvider": true, "codeActionProvider": true, "positionEncoding": "utf-16",
		"textDocumentSync": {"openClose": true, "change": 2, "save": true},
		"executeCommandProvider": {"commands": ["clangd.applyFix", "clangd.applyTweak"]}}}`)
	b, err := json.Marshal(mergeInitialize(own, clangd))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Capabilities struct {
			DefinitionProvider     bool                  `json:"definitionProvider"`
			CodeActionProvider     CodeActionOptions     `json:"codeActionProvider"`
			ExecuteCommandProvider ExecuteCommandOptions `json:"executeCommandProvider"`
			TextDocumentSync       struct {
				Save bool `json:"save"`
			} `json:"textDocumentSync"`
			InlineCompletionProvider any `json:"inlineCompletionProvider"`
		} `json:"capabilities"`
		ServerInfo     ServerInfo `json:"serverInfo"`
		OffsetEncoding any        `json:"offsetEncoding"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	c := got.Capabilities
	if !c.DefinitionProvider || !c.TextDocumentSync.Save || c.InlineCompletionProvider == nil ||
		!reflect.DeepEqual(c.CodeActionProvider.CodeActionKinds, []string{"quickfix", "refactor", "info", KindGenerate}) ||
		!reflect.DeepEqual(c.ExecuteCommandProvider.Commands, []string{"clangd.applyFix", "clangd.applyTweak", CommandGenerate, CommandCancel}) ||
		got.ServerInfo.Name != "hydra" || got.ServerInfo.Version != "1.0 (with clangd 19.1.7)" || got.OffsetEncoding != nil {
		t.Fatalf("merged initialize answer: %s", b)
	}
	// An answer that does not decode leaves Hydra's own.
	if r, ok := mergeInitialize(own, json.RawMessage(`"x"`)).(InitializeResult); !ok || !reflect.DeepEqual(r, own) {
		t.Fatalf("bad clangd answer: %+v", r)
	}
}

func TestClangdArgs(t *testing.T) {
	if got := clangdArgs(nil); !reflect.DeepEqual(got, []string{"--log=error"}) {
		t.Fatalf("default args %q", got)
	}
	if got := clangdArgs([]string{"--log=verbose", "-j=2"}); !reflect.DeepEqual(got, []string{"--log=verbose", "-j=2"}) {
		t.Fatalf("args with a log level %q", got)
	}
	if got := clangdArgs([]string{"-j=2"}); !reflect.DeepEqual(got, []string{"--log=error", "-j=2"}) {
		t.Fatalf("args without a log level %q", got)
	}
}

func TestClangdWanted(t *testing.T) {
	on, off := true, false
	eglot := InitializeParams{ClientInfo: &struct {
		Name    string `json:"name"`
		Version string `json:"version,omitempty"`
	}{Name: "Eglot"}}
	for _, tc := range []struct {
		cfg  Config
		p    InitializeParams
		want bool
	}{
		{Config{}, InitializeParams{}, false},
		{Config{}, eglot, true},
		{Config{Clangd: &off}, eglot, false},
		{Config{Clangd: &on}, InitializeParams{}, true},
	} {
		if got := clangdWanted(tc.cfg, tc.p); got != tc.want {
			t.Errorf("clangdWanted(%+v, %+v) = %v, want %v", tc.cfg, tc.p.ClientInfo, got, tc.want)
		}
	}
}

func TestLabelClangdProgress(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"token":"backgroundIndexProgress","value":{"kind":"begin","title":"indexing","percentage":0}}`,
			`{"token":"backgroundIndexProgress","value":{"kind":"begin","percentage":0,"title":"clangd: indexing"}}`},
		{`{"token":7,"value":{"kind":"begin"}}`, `{"token":7,"value":{"kind":"begin","title":"clangd"}}`},
		// Reports and ends carry no title: the client keeps the begin's.
		{`{"token":"t","value":{"kind":"report","message":"4/32","percentage":12}}`,
			`{"token":"t","value":{"kind":"report","message":"4/32","percentage":12}}`},
		{`{"token":"t","value":{"kind":"begin","title":"clangd: building"}}`,
			`{"token":"t","value":{"kind":"begin","title":"clangd: building"}}`},
		{`not json`, `not json`},
	} {
		got := string(labelProgress("clangd", json.RawMessage(c.in)))
		var g, w any
		if json.Unmarshal([]byte(got), &g) != nil || json.Unmarshal([]byte(c.want), &w) != nil {
			if got != c.want {
				t.Errorf("labelProgress(clangd, %s) = %s, want %s", c.in, got, c.want)
			}
			continue
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("labelProgress(clangd, %s) = %s, want %s", c.in, got, c.want)
		}
	}
}
