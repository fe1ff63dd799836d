package lsp_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/lsp"
)

// TypeScript's own language server (TypeScript 7's `tsc --lsp --stdio`, the compiler the
// TypeScript checker runs) behind the real `hydra lsp`, beside clangd, over pipes, as eglot
// gets them by default: one server for C/C++ and TypeScript documents, each request answered
// by the server of its document's language (workspace/symbol by both), Hydra's code actions on
// both, and no process left.

const tsTwice = "function twice(x: number): number {\n  return 2 * x;\n}\n\nexport const n = twice(21);\n"

func TestTypeScriptServerBehindHydra(t *testing.T) {
	if _, err := exec.LookPath("clangd-19"); err != nil {
		t.Fatalf("clangd-19 is not installed (scripts/install-deps.sh installs it): %v", err)
	}
	c := startServer(t, clientOptions{clientName: "eglot"})
	var init struct {
		Capabilities struct {
			HoverProvider          any `json:"hoverProvider"`
			ExecuteCommandProvider struct {
				Commands []string `json:"commands"`
			} `json:"executeCommandProvider"`
			CompletionProvider struct {
				TriggerCharacters []string `json:"triggerCharacters"`
			} `json:"completionProvider"`
		} `json:"capabilities"`
		ServerInfo lsp.ServerInfo `json:"serverInfo"`
	}
	if err := json.Unmarshal(c.initResult, &init); err != nil {
		t.Fatal(err)
	}
	// eglot's default: both servers behind Hydra, named in serverInfo; the completion trigger
	// characters are both servers' ('`' is TypeScript's only, '>' clangd's only).
	if !strings.Contains(init.ServerInfo.Version, "clangd") || !strings.Contains(init.ServerInfo.Version, "typescript") ||
		init.Capabilities.HoverProvider == nil || !contains(init.Capabilities.ExecuteCommandProvider.Commands, lsp.CommandGenerate) ||
		!contains(init.Capabilities.CompletionProvider.TriggerCharacters, "`") || !contains(init.Capabilities.CompletionProvider.TriggerCharacters, ">") {
		t.Fatalf("initialize answer lacks a server's capabilities: %s", c.initResult)
	}

	dir := t.TempDir()
	ts := "file://" + filepath.Join(dir, "twice.ts")
	cpp := "file://" + filepath.Join(dir, "main.cpp")
	c.open(ts, "typescript", tsTwice)
	c.open(cpp, "cpp", clangdMain)
	hover := func(uri, text, needle string) string {
		t.Helper()
		var h struct {
			Contents json.RawMessage `json:"contents"`
		}
		deadline := time.Now().Add(time.Minute)
		for {
			err := c.call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri},
				"position": position(text, strings.Index(text, needle)+1)}, &h)
			if err == nil && len(h.Contents) > 0 && string(h.Contents) != "null" {
				return string(h.Contents)
			}
			if time.Now().After(deadline) {
				t.Fatalf("hover on %s in %s: %v %s", needle, uri, err, h.Contents)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// TypeScript's server answers on the .ts document (its signature, in TypeScript's words),
	// clangd on the .cpp one.
	if got := hover(ts, tsTwice, "twice(21)"); !strings.Contains(got, "function twice(x: number): number") {
		t.Fatalf("hover on twice in the .ts document: %s, want TypeScript's signature", got)
	}
	if got := hover(cpp, clangdMain, "twice(21)"); !strings.Contains(got, "int twice(int x)") && !strings.Contains(got, "twice") {
		t.Fatalf("hover on twice in the .cpp document: %s, want clangd's", got)
	}
	var defs []struct {
		URI   string    `json:"uri"`
		Range lsp.Range `json:"range"`
	}
	if err := c.call("textDocument/definition", map[string]any{"textDocument": map[string]any{"uri": ts},
		"position": position(tsTwice, strings.Index(tsTwice, "twice(21)")+1)}, &defs); err != nil {
		t.Fatalf("definition: %v", err)
	}
	if len(defs) != 1 || defs[0].URI != ts || defs[0].Range.Start.Line != 0 {
		t.Fatalf("definition of twice in the .ts document: %+v, want its line 1", defs)
	}
	// A request about no document (workspace/symbol) goes to both servers, the answers joined:
	// twice is found in the .ts document (TypeScript's server) and in the .cpp one (clangd's).
	var found map[string]bool
	deadline := time.Now().Add(time.Minute)
	for !found[ts] || !found[cpp] {
		var syms []struct {
			Name     string `json:"name"`
			Location struct {
				URI string `json:"uri"`
			} `json:"location"`
		}
		err := c.call("workspace/symbol", map[string]any{"query": "twice"}, &syms)
		found = map[string]bool{}
		for _, sym := range syms {
			if strings.Contains(sym.Name, "twice") {
				found[sym.Location.URI] = true
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("workspace/symbol twice: %v, found in %v; want both %s and %s", err, found, ts, cpp)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// A user's edit reaches TypeScript's server: a new function is hovered after it is typed.
	c.userEdit(ts, len(tsTwice), len(tsTwice), "export function thrice(y: number) { return 3 * y; }\n")
	if got := hover(ts, c.text(ts), "thrice("); !strings.Contains(got, "thrice(y: number): number") {
		t.Fatalf("hover on the typed thrice: %s", got)
	}
	// TypeScript's diagnostics reach the client through Hydra's merge.
	bad := "file://" + filepath.Join(dir, "bad.ts")
	c.open(bad, "typescript", "export const s: string = 42;\n")
	c.waitFor("TypeScript's diagnostic", time.Minute, func() bool {
		for _, d := range c.diags[bad] {
			if d.Source != "hydra" && strings.Contains(d.Message, "not assignable to type 'string'") {
				return true
			}
		}
		return false
	})
	// Code actions on the .ts document: Hydra's generate is offered.
	var actions []struct {
		Kind string `json:"kind"`
	}
	end := position(c.text(ts), len(c.text(ts)))
	if err := c.call("textDocument/codeAction", lsp.CodeActionParams{TextDocument: lsp.TextDocumentIdentifier{URI: ts},
		Range: lsp.Range{Start: end, End: end}, Context: lsp.CodeActionContext{Diagnostics: []lsp.Diagnostic{}}}, &actions); err != nil {
		t.Fatalf("codeAction: %v", err)
	}
	offered := false
	for _, a := range actions {
		offered = offered || a.Kind == lsp.KindGenerate
	}
	if !offered {
		t.Fatalf("code actions on the .ts document %+v, want Hydra's generate", actions)
	}
	if code := c.shutdown(); code != 0 {
		t.Fatalf("exit status %d", code)
	}
	waitNoProcesses(t, c.marker, 10*time.Second)
}

// TestTypeScriptServerOff: with typescriptServer false (and for clients other than eglot by
// default) no TypeScript server runs, and requests Hydra does not handle on a .ts document get
// no answer from anyone else.
func TestTypeScriptServerOff(t *testing.T) {
	c := startServer(t, clientOptions{clientName: "eglot", initOptions: map[string]any{"hydra": map[string]any{"typescriptServer": false, "clangd": false}}})
	if strings.Contains(string(c.initResult), "typescript") {
		t.Fatalf("initialize answer names TypeScript's server, which is off: %s", c.initResult)
	}
	ts := "file://" + filepath.Join(t.TempDir(), "twice.ts")
	c.open(ts, "typescript", tsTwice)
	if err := c.call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": ts},
		"position": position(tsTwice, strings.Index(tsTwice, "twice(21)")+1)}, nil); err == nil {
		t.Fatalf("hover answered with no server behind Hydra")
	}
	if code := c.shutdown(); code != 0 {
		t.Fatalf("exit status %d", code)
	}
}
