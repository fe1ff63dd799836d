package lsp_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/hydra-lsp/hydra/engine/model/modeltest"
	"github.com/hydra-lsp/hydra/lsp"
)

// The real clangd-19 behind the real `hydra lsp`, over pipes: what Hydra does not handle is
// answered by clangd under ids of Hydra's, cancel reaches clangd, clangd's diagnostics arrive
// merged with Hydra's, a killed clangd comes back while generation goes on, and nothing
// outlives the server.

const clangdMain = `#include <vector>

int twice(int x) { return 2 * x; }

int main() {
  int unused = 1;
  std::vector<int> v;
  return twice(21);
}

// Returns three.
`

func TestClangdBehindHydra(t *testing.T) {
	if _, err := exec.LookPath("clangd-19"); err != nil {
		t.Fatalf("clangd-19 is not installed (scripts/install-deps.sh installs it): %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "compile_flags.txt"), []byte("-std=c++17\n-Wall\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
		{PromptSuffix: "// Returns three.\n", Text: "int three() { return 3; }\n"},
		{PromptSuffix: "// Broken.\n", Text: "int broken() { return undefined_name; }\n"},
	}})
	c := startServer(t, clientOptions{initOptions: map[string]any{"hydra": map[string]any{
		"modelUrl": model.URL, "maxAttempts": 1, "clangd": true, "clangdArgs": []string{"--log=verbose"}}}})

	// The initialize answer is clangd's capabilities with Hydra's.
	var init struct {
		Capabilities struct {
			DefinitionProvider     bool `json:"definitionProvider"`
			HoverProvider          bool `json:"hoverProvider"`
			CompletionProvider     any  `json:"completionProvider"`
			ExecuteCommandProvider struct {
				Commands []string `json:"commands"`
			} `json:"executeCommandProvider"`
			CodeActionProvider struct {
				CodeActionKinds []string `json:"codeActionKinds"`
			} `json:"codeActionProvider"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(c.initResult, &init); err != nil {
		t.Fatal(err)
	}
	caps := init.Capabilities
	if !caps.DefinitionProvider || !caps.HoverProvider || caps.CompletionProvider == nil ||
		!contains(caps.ExecuteCommandProvider.Commands, lsp.CommandGenerate) ||
		!contains(caps.ExecuteCommandProvider.Commands, "clangd.applyFix") ||
		!contains(caps.CodeActionProvider.CodeActionKinds, lsp.KindGenerate) {
		t.Fatalf("merged capabilities lack clangd's or Hydra's: %s", c.initResult)
	}

	uri := "file://" + filepath.Join(dir, "main.cpp")
	c.open(uri, "cpp", clangdMain)
	waitClangdDiag(t, c, uri, "unused")
	at := func(needle string, delta int) lsp.Position {
		return position(clangdMain, strings.Index(clangdMain, needle)+delta)
	}
	tdp := func(p lsp.Position) map[string]any {
		return map[string]any{"textDocument": map[string]any{"uri": uri}, "position": p}
	}

	// Definition, hover and completion are answered by clangd.
	var defs []struct {
		URI   string    `json:"uri"`
		Range lsp.Range `json:"range"`
	}
	if err := c.call("textDocument/definition", tdp(at("twice(21)", 1)), &defs); err != nil {
		t.Fatalf("definition: %v", err)
	}
	if len(defs) != 1 || defs[0].URI != uri || defs[0].Range.Start.Line != 2 {
		t.Fatalf("definition of twice: %+v, want line 3 of main.cpp", defs)
	}
	var completion struct {
		Items []struct {
			Label      string `json:"label"`
			FilterText string `json:"filterText"`
		} `json:"items"`
	}
	// As the user types it: a new line "  std::vec" in main, completion at its end.
	typed := strings.Index(clangdMain, "  return twice")
	c.userEdit(uri, typed, typed, "  std::vec\n")
	if err := c.call("textDocument/completion", tdp(position(c.text(uri), typed+len("  std::vec"))), &completion); err != nil {
		t.Fatalf("completion: %v", err)
	}
	found := false
	for _, it := range completion.Items {
		found = found || it.FilterText == "vector" || strings.TrimSpace(it.Label) == "vector"
	}
	if !found {
		t.Fatalf("completion at std::vec does not offer vector: %+v", completion.Items)
	}
	c.userEdit(uri, typed, typed+len("  std::vec\n"), "")
	if c.text(uri) != clangdMain {
		t.Fatalf("undo: %q", c.text(uri))
	}

	// Request ids are mapped: the client's string id is answered, clangd saw an id of Hydra's.
	hoverID := jsonrpc2.ID{Str: "client-hover-id", IsString: true}
	var hover struct {
		Contents struct {
			Value string `json:"value"`
		} `json:"contents"`
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.conn.Call(ctx, "textDocument/hover", tdp(at("twice(21)", 1)), &hover, jsonrpc2.PickID(hoverID)); err != nil {
		t.Fatalf("hover: %v", err)
	}
	if !strings.Contains(hover.Contents.Value, "twice") {
		t.Fatalf("hover: %+v", hover)
	}
	// clangd's log comes through Hydra's stderr, a pipe of its own: it may trail the answer.
	hoverSeen := regexp.MustCompile(`clangd: I\[[^]]*\] <-- textDocument/hover\((\d+)\)`)
	for deadline := time.Now().Add(10 * time.Second); !hoverSeen.MatchString(c.stderr.String()); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("clangd's log shows no hover with a numeric id:\n%s", c.stderr.String())
		}
	}
	if strings.Contains(c.stderr.String(), "client-hover-id") {
		t.Fatal("the client's request id reached clangd")
	}

	// $/cancelRequest reaches clangd, under clangd's id: a hover on a document whose preamble
	// (all of the standard library) is still being built is cancelled, and clangd's answer
	// comes back to the client's id.
	heavy := "file://" + filepath.Join(dir, "heavy.cpp")
	const heavyText = "#include <bits/stdc++.h>\nint f() { return 1; }\n"
	c.open(heavy, "cpp", heavyText)
	cancelID := jsonrpc2.ID{Str: "client-cancel-id", IsString: true}
	w, err := c.conn.DispatchCall(ctx, "textDocument/hover", map[string]any{
		"textDocument": map[string]any{"uri": heavy}, "position": position(heavyText, strings.Index(heavyText, "f()"))},
		jsonrpc2.PickID(cancelID))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.conn.Notify(ctx, "$/cancelRequest", map[string]any{"id": cancelID}); err != nil {
		t.Fatal(err)
	}
	var rpcErr *jsonrpc2.Error
	if err := w.Wait(ctx, nil); !errors.As(err, &rpcErr) || rpcErr.Code != -32800 {
		t.Fatalf("cancelled hover answered %v, want RequestCancelled (-32800)", err)
	}
	waitLog(t, c, "<-- $/cancelRequest", 10*time.Second)

	// clangd's diagnostics are merged with Hydra's (a generation that fails).
	broken := "file://" + filepath.Join(dir, "broken.cpp")
	const brokenText = "int main() {\n  int unused = 1;\n  return 0;\n}\n\n// Broken.\n"
	c.open(broken, "cpp", brokenText)
	if sum, err := c.generate(broken, position(brokenText, len(brokenText))); err != nil || sum.OK {
		t.Fatalf("generation of broken(): %v %+v, want a failure", err, sum)
	}
	c.waitFor("hydra's and clangd's diagnostics together", time.Minute, func() bool {
		return hasSource(c.diags[broken], "hydra", "undefined_name") && hasSource(c.diags[broken], "clang", "unused")
	})

	// Generation works with clangd behind Hydra, and clangd sees the generated text.
	if sum, err := c.generate(uri, position(clangdMain, len(clangdMain))); err != nil || !sum.OK {
		t.Fatalf("generation: %v %+v", err, sum)
	}
	if err := c.call("textDocument/hover", tdp(position(c.text(uri), strings.Index(c.text(uri), "three()"))), &hover); err != nil ||
		!strings.Contains(hover.Contents.Value, "three") {
		t.Fatalf("clangd does not know the generated three(): %v %+v", err, hover)
	}

	// clangd killed twice: Hydra says so once, generates meanwhile, and clangd comes back with
	// the documents as they are.
	for round := 0; round < 2; round++ {
		old := clangdPid(t, c)
		if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		name := "after" + strconv.Itoa(round) + ".cpp"
		doc := "file://" + filepath.Join(dir, name)
		c.open(doc, "cpp", "// Returns three.\n")
		if sum, err := c.generate(doc, lsp.Position{Line: 1}); err != nil || !sum.OK {
			t.Fatalf("generation after clangd was killed: %v %+v", err, sum)
		}
		deadline := time.Now().Add(time.Minute)
		for {
			hover.Contents.Value = ""
			err := c.call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": doc}, "position": lsp.Position{Line: 1, Character: 5}}, &hover)
			if err == nil && strings.Contains(hover.Contents.Value, "three") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("clangd did not come back: %v %+v", err, hover)
			}
			time.Sleep(200 * time.Millisecond)
		}
		if now := clangdPid(t, c); now == old {
			t.Fatalf("clangd pid %d after the kill, the same as before", now)
		}
	}
	waitClangdDiag(t, c, uri, "unused")
	c.mu.Lock()
	told := 0
	for _, m := range c.messages {
		if strings.Contains(m.Message, "clangd stopped") {
			told++
		}
	}
	c.mu.Unlock()
	if told != 1 {
		t.Fatalf("told %d times that clangd stopped, want once", told)
	}

	// Code actions are clangd's and Hydra's; running one of clangd's (a tweak, with the restarted
	// clangd) goes to clangd, whose workspace/applyEdit reaches the client through Hydra.
	var actions []struct {
		Title     string            `json:"title"`
		Kind      string            `json:"kind"`
		Command   json.RawMessage   `json:"command"`
		Arguments []json.RawMessage `json:"arguments"`
	}
	rng := lsp.Range{Start: at("std::vector", 5), End: at("std::vector", 5)}
	if err := c.call("textDocument/codeAction", lsp.CodeActionParams{TextDocument: lsp.TextDocumentIdentifier{URI: uri},
		Range: rng, Context: lsp.CodeActionContext{Diagnostics: []lsp.Diagnostic{}}}, &actions); err != nil {
		t.Fatalf("codeAction: %v", err)
	}
	var tweak *lsp.ExecuteCommandParams
	hydraAction := false
	for _, a := range actions {
		hydraAction = hydraAction || a.Kind == lsp.KindGenerate
		if string(a.Command) == `"clangd.applyTweak"` && strings.Contains(a.Title, "using-declaration") {
			tweak = &lsp.ExecuteCommandParams{Command: "clangd.applyTweak", Arguments: a.Arguments}
		}
	}
	if tweak == nil || !hydraAction {
		t.Fatalf("code actions %+v, want clangd's using-declaration tweak and Hydra's generate", actions)
	}
	if err := c.call("workspace/executeCommand", tweak, nil); err != nil {
		t.Fatalf("clangd.applyTweak: %v", err)
	}
	if got := c.text(uri); !strings.Contains(got, "using std::vector;") || strings.Contains(got, "std::vector<int> v") {
		t.Fatalf("after clangd's tweak the document is:\n%s", got)
	}

	if code := c.shutdown(); code != 0 {
		t.Fatalf("exit status %d", code)
	}
	waitNoProcesses(t, c.marker, 10*time.Second)
}

// waitClangdDiag waits for a diagnostic of clangd (its source is "clang") of uri whose message contains text.
func waitClangdDiag(t *testing.T, c *client, uri, text string) {
	t.Helper()
	c.waitFor("clangd's diagnostic "+text, 2*time.Minute, func() bool { return hasSource(c.diags[uri], "clang", text) })
}

func hasSource(ds []lsp.Diagnostic, source, text string) bool {
	for _, d := range ds {
		if d.Source == source && strings.Contains(d.Message, text) {
			return true
		}
	}
	return false
}

// clangdPid returns the pid of the server's live clangd (waiting for one).
func clangdPid(t *testing.T, c *client) int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		for _, p := range processes(c.marker) {
			pid, exe, _ := strings.Cut(p, ":")
			if strings.HasPrefix(exe, "clangd") {
				n, _ := strconv.Atoi(pid)
				return n
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no clangd process: %v", processes(c.marker))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestClangdEndsAtShutdown: clangd has exited by the time the shutdown is answered, so the
// server's exit is immediate. eglot deletes the server's process right after it sends exit;
// a server still stopping clangd then showed "Server exited with status 9".
func TestClangdEndsAtShutdown(t *testing.T) {
	if _, err := exec.LookPath("clangd-19"); err != nil {
		t.Fatalf("clangd-19 is not installed (scripts/install-deps.sh installs it): %v", err)
	}
	c := startServer(t, clientOptions{initOptions: map[string]any{"hydra": map[string]any{"clangd": true}}})
	uri := "file://" + filepath.Join(t.TempDir(), "main.cpp")
	c.open(uri, "cpp", clangdMain)
	pid := clangdPid(t, c)
	if err := c.call("shutdown", nil, nil); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	// Hydra reaps clangd before it answers: the pid is gone, not a zombie.
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("clangd (pid %d) still exists after the shutdown answer: kill 0 = %v", pid, err)
	}
	_ = c.conn.Notify(context.Background(), "exit", nil)
	if code := c.waitExit(); code != 0 {
		t.Fatalf("exit status %d", code)
	}
}

// TestClangdDiesWithHydra kills the server with SIGKILL (no exit, no cleanup of its own): the
// clangd behind it must not outlive it.
func TestClangdDiesWithHydra(t *testing.T) {
	if _, err := exec.LookPath("clangd-19"); err != nil {
		t.Fatalf("clangd-19 is not installed (scripts/install-deps.sh installs it): %v", err)
	}
	c := startServer(t, clientOptions{initOptions: map[string]any{"hydra": map[string]any{"clangd": true}}})
	uri := "file://" + filepath.Join(t.TempDir(), "main.cpp")
	c.open(uri, "cpp", clangdMain)
	clangdPid(t, c) // it runs
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = c.cmd.Wait()
	// The marker's processes, clangd among them, must be gone (a zombie not yet reaped by
	// whoever inherited it counts as gone).
	waitNoProcesses(t, c.marker, 10*time.Second)
}

// TestWithoutClangd asks for clangd where there is none, and where it will not start: the user
// is told, and the server is Hydra alone, as without the setting.
func TestWithoutClangd(t *testing.T) {
	for _, tc := range []struct{ name, path, want string }{
		{"missing", "/nonexistent/clangd-19", "clangd is not available"},
		{"fails to start", "false", "clangd did not start"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startServer(t, clientOptions{initOptions: map[string]any{"hydra": map[string]any{"clangd": true, "clangdPath": tc.path}}})
			c.waitFor("the warning", 10*time.Second, func() bool {
				for _, m := range c.messages {
					if m.Type == lsp.MessageWarning && strings.Contains(m.Message, tc.want) {
						return true
					}
				}
				return false
			})
			var caps map[string]any
			if err := json.Unmarshal(c.initResult, &struct {
				Capabilities *map[string]any `json:"capabilities"`
			}{&caps}); err != nil {
				t.Fatal(err)
			}
			if _, ok := caps["definitionProvider"]; ok {
				t.Fatalf("capabilities without clangd offer definitions: %v", caps)
			}
			var rpcErr *jsonrpc2.Error
			err := c.call("textDocument/definition", map[string]any{"textDocument": map[string]any{"uri": "file:///x.cpp"},
				"position": lsp.Position{}}, nil)
			if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc2.CodeMethodNotFound {
				t.Fatalf("definition without clangd: %v, want method not found", err)
			}
			if code := c.shutdown(); code != 0 {
				t.Fatalf("exit status %d", code)
			}
		})
	}
}
