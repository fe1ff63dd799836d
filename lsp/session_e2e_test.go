package lsp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/hydra-lsp/hydra/engine/model/modeltest"
	"github.com/hydra-lsp/hydra/lsp"
)

// slowText is a long program the stand-in streams slowly, so that a test can act while the
// generation runs. It needs no header (so no preamble checkpoint is kept).
func slowText(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "int f%d(int x) { return x + %d; }\n", i, i)
	}
	return b.String()
}

const slowPrefix = "// Many small functions.\n"

func slowModel(t *testing.T) *modeltest.Server {
	return modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
		{Text: slowText(60), Chunk: 8, DelayMS: 40},
	}})
}

func TestCancelStopsGenerationAndEveryCheckerProcess(t *testing.T) {
	tests := []struct {
		name   string
		cancel func(c *client, uri string, token json.RawMessage, id jsonrpc2.ID)
	}{
		{"command hydra.cancel for the document", func(c *client, uri string, _ json.RawMessage, _ jsonrpc2.ID) {
			var res map[string]int
			if err := c.call("workspace/executeCommand", lsp.ExecuteCommandParams{Command: lsp.CommandCancel,
				Arguments: []json.RawMessage{mustJSON(map[string]string{"uri": uri})}}, &res); err != nil || res["cancelled"] != 1 {
				c.t.Errorf("hydra.cancel: %v %v", res, err)
			}
		}},
		{"command hydra.cancel for all", func(c *client, _ string, _ json.RawMessage, _ jsonrpc2.ID) {
			if err := c.call("workspace/executeCommand", lsp.ExecuteCommandParams{Command: lsp.CommandCancel}, nil); err != nil {
				c.t.Error(err)
			}
		}},
		{"$/cancelRequest", func(c *client, _ string, _ json.RawMessage, id jsonrpc2.ID) {
			_ = c.conn.Notify(context.Background(), "$/cancelRequest", map[string]any{"id": id})
		}},
		{"window/workDoneProgress/cancel", func(c *client, _ string, token json.RawMessage, _ jsonrpc2.ID) {
			_ = c.conn.Notify(context.Background(), "window/workDoneProgress/cancel", map[string]any{"token": token})
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := slowModel(t)
			c := startServer(t, clientOptions{initOptions: map[string]any{"modelUrl": model.URL}})
			uri := "file://" + filepath.Join(t.TempDir(), "many.cpp")
			c.open(uri, "cpp", slowPrefix)
			id := jsonrpc2.ID{Num: uint64(1000 + i)}
			w, err := c.conn.DispatchCall(context.Background(), "workspace/executeCommand", lsp.ExecuteCommandParams{
				Command:   lsp.CommandGenerate,
				Arguments: []json.RawMessage{mustJSON(map[string]any{"uri": uri, "position": position(slowPrefix, len(slowPrefix))})},
			}, jsonrpc2.PickID(id))
			if err != nil {
				t.Fatal(err)
			}
			c.waitFor("the first streamed edit", time.Minute, func() bool { return len(c.edits) > 0 })
			if n := len(checkerProcesses(c.marker)); n == 0 {
				t.Fatal("no checker process while generating (the test would prove nothing)")
			}
			var token json.RawMessage
			c.mu.Lock()
			if len(c.progress) > 0 {
				token = c.progress[0].Token
			}
			c.mu.Unlock()
			tt.cancel(c, uri, token, id)

			var sum lsp.Summary
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err = w.Wait(ctx, &sum)
			if err != nil {
				t.Fatalf("generate after cancel: %v", err)
			}
			if sum.OK || sum.Reason != "cancelled" {
				t.Fatalf("summary %+v, want cancelled", sum)
			}
			// What was accepted before the cancel stays, and nothing else.
			if got := c.text(uri); got != slowPrefix+sum.Text || !strings.HasPrefix(slowText(60), sum.Text) {
				t.Fatalf("document after cancel %q, summary text %q", got, sum.Text)
			}
			deadline := time.Now().Add(10 * time.Second)
			for len(checkerProcesses(c.marker)) > 0 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if ps := checkerProcesses(c.marker); len(ps) > 0 {
				t.Fatalf("checker processes alive after cancel: %v", ps)
			}
		})
	}
}

func TestUserEditDuringGeneration(t *testing.T) {
	for _, neovim := range []bool{false, true} {
		name := "an edit before the generated region is kept and generation goes on"
		if neovim {
			name += " (Neovim 0.7 client)"
		}
		t.Run(name, func(t *testing.T) {
			// The stand-in's last piece waits until the client's document shows the first
			// line: the generation then reaches the client in at least two edits, and the user
			// types before the second, whatever the machine's load (not left to the clock).
			var c *client
			uri := "file://" + filepath.Join(t.TempDir(), "acc.cpp")
			first := strings.SplitAfter(accGood, "\n")[0]
			rule := modeltest.Rule{PromptSuffix: "// An accumulator.\n", Text: accGood, Chunk: 4, DelayMS: 30}
			rule.Hold = func(ctx context.Context, _ int, sent, piece string) {
				if len(sent)+len(piece) != len(accGood) {
					return // not the last piece
				}
				for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && ctx.Err() == nil; {
					if strings.Contains(c.text(uri), first) {
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{rule}})
			c = startServer(t, clientOptions{initOptions: map[string]any{"modelUrl": model.URL}, neovim: neovim})
			c.open(uri, "cpp", accPrefix+accSuffix)
			var once sync.Once
			c.beforeApply = func(n int) {
				if n == 1 { // the user types at the top while the second edit is on its way
					once.Do(func() { c.userEdit(uri, 0, 0, "// note from the user\n") })
				}
			}
			sum, err := c.generate(uri, position(accPrefix, len(accPrefix)))
			if err != nil {
				t.Fatal(err)
			}
			want := "// note from the user\n" + accPrefix + accGood + accSuffix
			if got := c.text(uri); got != want || !sum.OK {
				t.Fatalf("document:\n%s\nwant:\n%s\nsummary %+v", got, want, sum)
			}
		})
	}
	t.Run("an edit inside the generated region stops generation and stays", func(t *testing.T) {
		model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
			{Text: slowText(40), Chunk: 8, DelayMS: 30}}})
		c := startServer(t, clientOptions{initOptions: map[string]any{"modelUrl": model.URL}})
		uri := "file://" + filepath.Join(t.TempDir(), "many.cpp")
		c.open(uri, "cpp", slowPrefix)
		var afterUser string
		var once sync.Once
		c.beforeApply = func(n int) {
			if n == 1 { // rename the first generated function while generation goes on
				once.Do(func() {
					i := len(slowPrefix) + len("int f0")
					c.userEdit(uri, i, i, "_mine")
					afterUser = c.text(uri)
				})
			}
		}
		sum, err := c.generate(uri, position(slowPrefix, len(slowPrefix)))
		if err != nil {
			t.Fatal(err)
		}
		if sum.OK || sum.Reason != "user_edit" {
			t.Fatalf("summary %+v, want stopped for user_edit", sum)
		}
		if got := c.text(uri); got != afterUser || !strings.Contains(got, "int f0_mine(int x)") {
			t.Fatalf("document %q, want it as the user left it: %q", got, afterUser)
		}
	})
}

func TestMalformedInputGetsErrorsAndServerKeepsServing(t *testing.T) {
	cmd := exec.Command(hydraBin, "lsp")
	cmd.Env = append(os.Environ(), "HYDRA_CLANG_SHIM="+shimBin)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	logs := &lineLog{t: t}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); logs.stop() }()
	r := bufio.NewReader(stdout)
	send := func(body string) {
		if _, err := fmt.Fprintf(stdin, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(what string, id any, code float64) map[string]any {
		t.Helper()
		m, err := readMessage(r)
		for err == nil && m["method"] != nil { // skip the server's notifications
			m, err = readMessage(r)
		}
		if err != nil {
			t.Fatalf("%s: no response: %v", what, err)
		}
		if fmt.Sprint(m["id"]) != fmt.Sprint(id) {
			t.Fatalf("%s: response %v, want id %v", what, m, id)
		}
		if code != 0 {
			e, _ := m["error"].(map[string]any)
			if e == nil || e["code"] != code {
				t.Fatalf("%s: response %v, want error code %v", what, m, code)
			}
		} else if m["error"] != nil {
			t.Fatalf("%s: unexpected error %v", what, m["error"])
		}
		return m
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"textDocument/codeAction","params":{}}`)
	expect("request before initialize", 0, -32002)
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"capabilities":{"workspace":{"applyEdit":true}}}}`)
	expect("initialize", 1, 0)
	send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	send(`{this is not json`)
	expect("garbage", nil, -32700)
	if _, err := io.WriteString(stdin, "X-Nonsense: 1\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	expect("frame without Content-Length", nil, -32700)
	send(`{"jsonrpc":"2.0","id":7}`)
	expect("neither request nor response", 7, -32600)
	send(`[1,2,3]`)
	expect("batch of numbers", nil, -32600)
	send(`{"jsonrpc":"2.0","id":8,"method":"textDocument/codeAction","params":"oops"}`)
	expect("bad params", 8, -32602)
	send(`{"jsonrpc":"2.0","id":9,"method":"no/suchMethod","params":{}}`)
	expect("unknown method", 9, -32601)
	send(`{"jsonrpc":"2.0","id":10,"method":"workspace/executeCommand","params":{"command":"hydra.generate","arguments":[{"uri":"file:///nope.cpp","position":{"line":0,"character":0}}]}}`)
	m := expect("generate in a document that is not open", 10, -32803)
	if msg := m["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "not open") {
		t.Errorf("error message %q does not say what is wrong", msg)
	}
	// Still serving: a well-formed session goes on to a clean exit.
	send(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///t/a.cpp","languageId":"cpp","version":1,"text":"int x;\n"}}}`)
	send(`{"jsonrpc":"2.0","id":11,"method":"textDocument/codeAction","params":{"textDocument":{"uri":"file:///t/a.cpp"},"range":{"start":{"line":1,"character":0},"end":{"line":1,"character":0}},"context":{"diagnostics":[]}}}`)
	m = expect("code action", 11, 0)
	acts, _ := m["result"].([]any)
	if len(acts) != 1 || acts[0].(map[string]any)["kind"] != lsp.KindGenerate {
		t.Fatalf("code actions %v", m["result"])
	}
	send(`{"jsonrpc":"2.0","id":12,"method":"shutdown"}`)
	expect("shutdown", 12, 0)
	send(`{"jsonrpc":"2.0","method":"exit"}`)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit status after shutdown+exit: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("server did not exit")
	}
}

func TestDeadModelServerGivesAClearMessage(t *testing.T) {
	t.Setenv("HYDRA_MODEL_WAIT", "1s") // the server inherits it: wait one second, not a minute, for a server that is not there
	model := modeltest.NewServer(t, modeltest.Script{})
	url := model.URL
	model.Close() // nothing listens there any more
	c := startServer(t, clientOptions{initOptions: map[string]any{"hydra": map[string]any{"modelUrl": url}}})
	uri := "file://" + filepath.Join(t.TempDir(), "a.cpp")
	c.open(uri, "cpp", accPrefix+accSuffix)
	sum, err := c.generate(uri, position(accPrefix, len(accPrefix)))
	if err != nil {
		t.Fatal(err)
	}
	if sum.OK || !strings.Contains(sum.Message, "unavailable") || !strings.Contains(sum.Message, url) {
		t.Fatalf("summary %+v: want a failure that names the unavailable server", sum)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.messages); n == 0 || c.messages[n-1].Type != lsp.MessageWarning || c.messages[n-1].Message != sum.Message {
		t.Fatalf("showMessage %+v, want a warning with the summary", c.messages)
	}
	if got := c.docs[uri].text; got != accPrefix+accSuffix {
		t.Fatalf("document changed: %q", got)
	}
}

func TestNoModelConfiguredIsAnError(t *testing.T) {
	c := startServer(t, clientOptions{})
	uri := "file://" + filepath.Join(t.TempDir(), "a.cpp")
	c.open(uri, "cpp", accPrefix)
	_, err := c.generate(uri, position(accPrefix, len(accPrefix)))
	var rpcErr *jsonrpc2.Error
	if !errors.As(err, &rpcErr) || !strings.Contains(rpcErr.Message, "modelUrl") {
		t.Fatalf("generate without a model: %v, want an error naming hydra.modelUrl", err)
	}
}

func TestExitLeavesNoProcessBehind(t *testing.T) {
	tests := []struct {
		name     string
		end      func(c *client) int
		wantCode int
	}{
		{"shutdown then exit", func(c *client) int { return c.shutdown() }, 0},
		{"exit without shutdown", func(c *client) int {
			_ = c.conn.Notify(context.Background(), "exit", nil)
			return c.waitExit()
		}, 1},
		{"client vanishes", func(c *client) int {
			c.conn.Close()
			c.stdin.Close()
			return c.waitExit()
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := slowModel(t)
			c := startServer(t, clientOptions{initOptions: map[string]any{"modelUrl": model.URL}})
			dir := t.TempDir()
			// A document with a preamble (kept as a dormant checkpoint) and a generation running.
			uri := "file://" + filepath.Join(dir, "a.cpp")
			c.open(uri, "cpp", "#include <vector>\n"+slowPrefix)
			waitLog(t, c, "checkpointed", time.Minute)
			go func() { _, _ = c.generate(uri, lsp.Position{Line: 2, Character: 0}) }()
			c.waitFor("the first streamed edit", time.Minute, func() bool { return len(c.edits) > 0 })
			if n := len(checkerProcesses(c.marker)); n < 2 {
				t.Fatalf("%d checker processes, want the preamble checkpoint and the generation's", n)
			}
			if code := tt.end(c); code != tt.wantCode {
				t.Errorf("exit status %d, want %d", code, tt.wantCode)
			}
			waitNoProcesses(t, c.marker, 10*time.Second)
		})
	}
}

// waitLog waits for a line of the server's log containing s.
func waitLog(t *testing.T, c *client, s string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(c.stderr.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("the server never logged %q", s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestInlineCompletion(t *testing.T) {
	t.Run("returns the repaired continuation", func(t *testing.T) {
		model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
			{PromptContains: "hydra-feedback:", Text: accRetry},
			{PromptSuffix: "// An accumulator.\n", Text: accBad},
		}})
		c := startServer(t, clientOptions{initOptions: map[string]any{"modelUrl": model.URL}})
		uri := "file://" + filepath.Join(t.TempDir(), "acc.cpp")
		c.open(uri, "cpp", accPrefix+accSuffix)
		pos := position(accPrefix, len(accPrefix))
		var list lsp.InlineCompletionList
		if err := c.call("textDocument/inlineCompletion", lsp.InlineCompletionParams{
			TextDocument: lsp.TextDocumentIdentifier{URI: uri}, Position: pos,
			Context: lsp.InlineCompletionContext{TriggerKind: 1}}, &list); err != nil {
			t.Fatal(err)
		}
		// The cursor is on a blank line with its own break: the item ends without its final
		// break, so that the line's own ends it (no blank line left after the code).
		want := strings.TrimSuffix(accGood, "\n")
		if len(list.Items) != 1 || list.Items[0].InsertText != want || list.Items[0].Range == nil || list.Items[0].Range.Start != pos || list.Items[0].Range.End != pos {
			t.Fatalf("inline items %+v, want the repaired %q at %v", list.Items, want, pos)
		}
		if got := c.text(uri); got != accPrefix+accSuffix {
			t.Fatalf("inline completion edited the document: %q", got)
		}
		if len(c.edits) != 0 {
			t.Fatalf("inline completion sent edits: %+v", c.edits)
		}
	})
	t.Run("at the end of a line the continuation starts a new line", func(t *testing.T) {
		model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Text: "int two() { return 2; }\n"}}})
		c := startServer(t, clientOptions{initOptions: map[string]any{"modelUrl": model.URL}})
		uri := "file://" + filepath.Join(t.TempDir(), "two.c")
		c.open(uri, "c", "// two")
		var list lsp.InlineCompletionList
		if err := c.call("textDocument/inlineCompletion", lsp.InlineCompletionParams{
			TextDocument: lsp.TextDocumentIdentifier{URI: uri}, Position: lsp.Position{Line: 0, Character: 6}}, &list); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 1 || list.Items[0].InsertText != "\nint two() { return 2; }\n" {
			t.Fatalf("inline items %+v", list.Items)
		}
	})
	t.Run("on an indented blank line the item does not repeat the indentation", func(t *testing.T) {
		// After Enter inside a body, editors leave the cursor after the new line's indentation.
		// The model continues after it; its first line has an error, and the repair rolls back
		// to the start of that line, indentation included. The item, inserted at the cursor,
		// must not indent the first line twice.
		const prefix = "int two() {\n"
		model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
			{PromptContains: "hydra-feedback:", Text: "  return 2;\n}\n"},
			{PromptSuffix: prefix + "  ", Text: "return two_;\n}\n"}}})
		c := startServer(t, clientOptions{initOptions: map[string]any{"modelUrl": model.URL}})
		uri := "file://" + filepath.Join(t.TempDir(), "two.cpp")
		c.open(uri, "cpp", prefix+"  ")
		var list lsp.InlineCompletionList
		pos := lsp.Position{Line: 1, Character: 2}
		if err := c.call("textDocument/inlineCompletion", lsp.InlineCompletionParams{
			TextDocument: lsp.TextDocumentIdentifier{URI: uri}, Position: pos}, &list); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 1 || list.Items[0].InsertText != "return 2;\n}\n" || list.Items[0].Range == nil || list.Items[0].Range.Start != pos {
			t.Fatalf("inline items %+v, want %q at the cursor %v", list.Items, "return 2;\n}\n", pos)
		}
	})
	t.Run("honours $/cancelRequest", func(t *testing.T) {
		model := slowModel(t)
		c := startServer(t, clientOptions{initOptions: map[string]any{"modelUrl": model.URL}})
		uri := "file://" + filepath.Join(t.TempDir(), "many.cpp")
		c.open(uri, "cpp", slowPrefix)
		id := jsonrpc2.ID{Num: 4242}
		w, err := c.conn.DispatchCall(context.Background(), "textDocument/inlineCompletion", lsp.InlineCompletionParams{
			TextDocument: lsp.TextDocumentIdentifier{URI: uri}, Position: lsp.Position{Line: 1}}, jsonrpc2.PickID(id))
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(time.Minute)
		for len(checkerProcesses(c.marker)) == 0 || len(model.Calls()) == 0 {
			if time.Now().After(deadline) {
				t.Fatal("the search never started")
			}
			time.Sleep(10 * time.Millisecond)
		}
		_ = c.conn.Notify(context.Background(), "$/cancelRequest", map[string]any{"id": id})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		err = w.Wait(ctx, nil)
		var rpcErr *jsonrpc2.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != -32800 {
			t.Fatalf("cancelled inline completion answered %v, want RequestCancelled (-32800)", err)
		}
		deadline = time.Now().Add(10 * time.Second)
		for len(checkerProcesses(c.marker)) > 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if ps := checkerProcesses(c.marker); len(ps) > 0 {
			t.Fatalf("checker processes alive after cancel: %v", ps)
		}
	})
}

func TestSeveralDocumentsGenerateIndependently(t *testing.T) {
	model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
		{PromptSuffix: "// An accumulator.\n", Text: accGood, Chunk: 5, DelayMS: 10},
		{PromptSuffix: "// Twice.\n", Text: "int twice(int x) {\n  return 2 * x;\n}\n", Chunk: 5, DelayMS: 10},
	}})
	c := startServer(t, clientOptions{initOptions: map[string]any{"modelUrl": model.URL}})
	dir := t.TempDir()
	docs := []struct{ uri, prefix, suffix, want string }{
		{"file://" + filepath.Join(dir, "acc.cpp"), accPrefix, accSuffix, accGood},
		// The cursor at the start of main's line: the new function goes before it, with a
		// blank line between them.
		{"file://" + filepath.Join(dir, "twice.c"), "// Twice.\n", "int main(void) { return twice(0); }\n", "int twice(int x) {\n  return 2 * x;\n}\n\n"},
	}
	var wg sync.WaitGroup
	sums := make([]lsp.Summary, len(docs))
	errs := make([]error, len(docs))
	for i, d := range docs {
		lang := "cpp"
		if strings.HasSuffix(d.uri, ".c") {
			lang = "c"
		}
		c.open(d.uri, lang, d.prefix+d.suffix)
		wg.Add(1)
		go func() {
			defer wg.Done()
			sums[i], errs[i] = c.generate(d.uri, position(d.prefix, len(d.prefix)))
		}()
	}
	wg.Wait()
	for i, d := range docs {
		if errs[i] != nil || !sums[i].OK {
			t.Fatalf("%s: %v %+v", d.uri, errs[i], sums[i])
		}
		if got := c.text(d.uri); got != d.prefix+d.want+d.suffix {
			t.Fatalf("%s:\n%s\nwant:\n%s", d.uri, got, d.prefix+d.want+d.suffix)
		}
	}
}

func TestConfigurationFromAllThreeSources(t *testing.T) {
	model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Text: "int two() { return 2; }\n"}}})
	c := startServer(t, clientOptions{
		// initializationOptions: a model URL that a later source replaces, and a token budget.
		initOptions: map[string]any{"hydra": map[string]any{"modelUrl": "http://127.0.0.1:1/v1", "maxTokens": 200}},
		// workspace/configuration: the live stand-in and where the API key is.
		config: map[string]any{"modelUrl": model.URL, "apiKeyEnv": "HYDRA_TEST_KEY"},
		env:    []string{"HYDRA_TEST_KEY=sekrit", "HYDRA_MODEL=from-env"},
	})
	c.waitFor("workspace/configuration", time.Minute, func() bool { return c.configReq >= 1 })
	// workspace/didChangeConfiguration: the model name (the server then pulls again).
	_ = c.conn.Notify(context.Background(), "workspace/didChangeConfiguration",
		map[string]any{"settings": map[string]any{"hydra": map[string]any{"model": "stand-in-2"}}})
	c.waitFor("the pull after didChangeConfiguration", time.Minute, func() bool { return c.configReq >= 2 })

	uri := "file://" + filepath.Join(t.TempDir(), "two.c")
	c.open(uri, "c", "// two\n")
	sum, err := c.generate(uri, lsp.Position{Line: 1})
	if err != nil || !sum.OK {
		t.Fatalf("generate: %v %+v", err, sum)
	}
	calls := model.Calls()
	if len(calls) == 0 {
		t.Fatal("the stand-in was never called")
	}
	call := calls[0]
	if call.Model != "stand-in-2" || call.Authorization != "Bearer sekrit" || call.Params.MaxTokens > 200 || call.Params.MaxTokens == 0 {
		t.Fatalf("request model %q, auth %q, max_tokens %d; want stand-in-2, Bearer sekrit, ≤200",
			call.Model, call.Authorization, call.Params.MaxTokens)
	}
}

func TestCompileFlagsAreFoundAndReloaded(t *testing.T) {
	dir := t.TempDir()
	flagsFile := filepath.Join(dir, "compile_flags.txt")
	if err := os.WriteFile(flagsFile, []byte("-DGREETING=42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Text: "int answer(void) { return GREETING; }\n"}}})
	c := startServer(t, clientOptions{initOptions: map[string]any{"modelUrl": model.URL, "maxAttempts": 1}})
	const doc = "// The answer.\n"
	a := "file://" + filepath.Join(dir, "a.c")
	c.open(a, "c", doc)
	sum, err := c.generate(a, lsp.Position{Line: 1})
	if err != nil || !sum.OK {
		t.Fatalf("with -DGREETING from compile_flags.txt: %v %+v", err, sum)
	}
	if err := os.WriteFile(flagsFile, []byte("-DOTHER=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitLog(t, c, "reloading", time.Minute)
	b := "file://" + filepath.Join(dir, "b.c")
	c.open(b, "c", doc)
	sum, err = c.generate(b, lsp.Position{Line: 1})
	if err != nil || sum.OK {
		t.Fatalf("after compile_flags.txt lost -DGREETING: %v %+v, want a failure", err, sum)
	}
	c.waitFor("diagnostics", time.Minute, func() bool { return len(c.diags[b]) > 0 })
	c.mu.Lock()
	d := c.diags[b][0]
	c.mu.Unlock()
	if !strings.Contains(d.Message, "GREETING") || d.Source != "hydra" {
		t.Fatalf("diagnostic %+v, want the undeclared GREETING from source hydra", d)
	}
}

func TestWarmPreambleCheckpoint(t *testing.T) {
	model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{PromptSuffix: "// An accumulator.\n", Text: accGood}}})
	c := startServer(t, clientOptions{initOptions: map[string]any{"modelUrl": model.URL}})
	const prefix = "#include <bits/stdc++.h>\n\n// An accumulator.\n"
	warmDir, coldDir := t.TempDir(), t.TempDir()

	// Cold: a document generated at once, before its preamble could be checkpointed.
	cold := "file://" + filepath.Join(coldDir, "cold.cpp")
	c.open(cold, "cpp", prefix+accSuffix)
	coldSum, err := c.generate(cold, position(prefix, len(prefix)))
	if err != nil || !coldSum.OK {
		t.Fatalf("cold generation: %v %+v", err, coldSum)
	}

	a := "file://" + filepath.Join(warmDir, "a.cpp")
	c.open(a, "cpp", prefix+accSuffix)
	waitLog(t, c, "a.cpp ("+fmt.Sprint(len("#include <bits/stdc++.h>\n"))+" bytes) checkpointed", 2*time.Minute)
	warmSum, err := c.generate(a, position(prefix, len(prefix)))
	if err != nil || !warmSum.OK || !warmSum.Warm {
		t.Fatalf("warm generation: %v %+v", err, warmSum)
	}
	// Another document with the same preamble and flags shares the checkpoint.
	b := "file://" + filepath.Join(warmDir, "b.cpp")
	c.open(b, "cpp", prefix+accSuffix)
	sharedSum, err := c.generate(b, position(prefix, len(prefix)))
	if err != nil || !sharedSum.OK || !sharedSum.Warm {
		t.Fatalf("shared warm generation: %v %+v", err, sharedSum)
	}
	for _, u := range []string{cold, a, b} {
		if got := c.text(u); got != prefix+accGood+accSuffix {
			t.Fatalf("%s: %q", u, got)
		}
	}
	t.Logf("cold generation found a warm checkpoint: %v (expected false unless the machine stalled)", coldSum.Warm)
	t.Logf("time to first checked line: cold %d ms, warm %d ms, shared %d ms (cold/warm %.1fx)",
		coldSum.TimeToFirstCheckMs, warmSum.TimeToFirstCheckMs, sharedSum.TimeToFirstCheckMs,
		float64(coldSum.TimeToFirstCheckMs)/float64(max(warmSum.TimeToFirstCheckMs, 1)))
}

func TestBrokenCodeBeforeTheCursorIsNotTheModels(t *testing.T) {
	model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Text: "int two(void) { return 2; }\n"}}})
	c := startServer(t, clientOptions{initOptions: map[string]any{"modelUrl": model.URL}})
	uri := "file://" + filepath.Join(t.TempDir(), "broken.c")
	const doc = "int x = ;\n// two\n"
	c.open(uri, "c", doc)
	sum, err := c.generate(uri, lsp.Position{Line: 2})
	if err != nil {
		t.Fatal(err)
	}
	// The error was there before: generation goes on past it, and the summary names it once.
	if !sum.OK || sum.Reason != "accepted" || sum.PreexistingErrors != 1 ||
		!strings.Contains(sum.Message, "(line 1: expected expression)") {
		t.Fatalf("summary %+v, want accepted, naming the old error", sum)
	}
	if got := c.text(uri); got != doc+"int two(void) { return 2; }\n" {
		t.Fatalf("document: %q", got)
	}
	c.mu.Lock()
	diags := c.diags[uri]
	c.mu.Unlock()
	if len(diags) != 0 {
		t.Fatalf("hydra published diagnostics %+v for an error that is not the model's", diags)
	}
}
