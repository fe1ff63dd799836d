package lsp_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/hydra-lsp/hydra/engine/model/modeltest"
	"github.com/hydra-lsp/hydra/lsp"
)

// The tests in this file are issue 16's server side, over real pipes: where generated code
// goes from wherever the cursor is (the same rule for every client), errors that were in the
// document before, the user's typing during a generation, diagnostics that follow the
// document, and inline completion.

const (
	sumSig  = "#include <vector>\n\n// Returns the sum of the elements of v.\nint sum(const std::vector<int>& v) {"
	sumBody = "  int total = 0;\n  for (int x : v) total += x;\n  return total;\n}\n"
	// sumMore is what a model writes on after the function when nothing stops it.
	sumMore = "\nint main() {\n  return sum({1, 2, 3});\n}\n"
)

func TestGenerateFromWhereTheCursorIs(t *testing.T) {
	tests := []struct {
		name   string
		doc    string
		cursor int // byte offset of the cursor in doc
		want   string
		client clientOptions
	}{
		{
			// The first case: Esc after typing the signature leaves Neovim's cursor on
			// the `{`; the buffer's last line, no `}` anywhere. The body went in 6 times.
			name: "Neovim, cursor on the { of a signature on the last line", doc: sumSig + "\n",
			cursor: len(sumSig) - 1, want: sumSig + "\n" + sumBody, client: clientOptions{neovim: true},
		},
		{
			name: "VS Code, cursor after the { at the end of the document", doc: sumSig,
			cursor: len(sumSig), want: sumSig + "\n" + sumBody,
		},
		{
			name: "eglot, cursor at the start of the signature line", doc: sumSig + "\n",
			cursor: strings.LastIndexByte(sumSig, '\n') + 1, want: sumSig + "\n" + sumBody,
			client: clientOptions{unversioned: true, noProgress: true},
		},
		{
			// An auto-paired `}` and the blank line the user left: no blank line before it.
			name: "Neovim, signature with its } and a blank line between", doc: sumSig + "\n\n}\n" + sumMore,
			cursor: len(sumSig) - 1, want: sumSig + "\n" + sumBody + sumMore, client: clientOptions{neovim: true},
		},
		{
			name: "from the blank line inside the body", doc: sumSig + "\n\n}\n",
			cursor: len(sumSig) + 1, want: sumSig + "\n" + sumBody,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
				// The model would write on past the function; the server must stop it there.
				{PromptSuffix: "int sum(const std::vector<int>& v) {\n", Text: sumBody + sumMore, Chunk: 6, DelayMS: 10},
			}})
			o := tt.client
			o.initOptions = map[string]any{"hydra": map[string]any{"modelUrl": model.URL}}
			c := startServer(t, o)
			dir := t.TempDir()
			uri := "file://" + filepath.Join(dir, "sum.cpp")
			c.open(uri, "cpp", tt.doc)
			sum, err := c.generate(uri, position(tt.doc, tt.cursor))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("summary: %+v", sum)
			got := c.text(uri)
			if got != tt.want && got != tt.want+"\n" {
				t.Fatalf("document after generation:\n%q\nwant:\n%q", got, tt.want)
			}
			if !sum.OK || sum.Attempts != 1 {
				t.Fatalf("summary %+v, want accepted in 1 attempt", sum)
			}
			if n := len(model.Handler.Calls()); n != 1 {
				t.Errorf("%d model requests, want 1", n)
			}
			if err := compiles(t, dir, "final.cpp", got, "-std=c++17"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// clangErrors returns the error lines clang-19 reports for text (none when it compiles).
func clangErrors(t *testing.T, dir, text string) []string {
	t.Helper()
	err := compiles(t, dir, "check.cpp", text, "-std=c++17")
	if err == nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if strings.Contains(l, "error:") && !strings.Contains(l, "clang-19 ") {
			out = append(out, l)
		}
	}
	return out
}

func TestErrorsThatWereThereBeforeAreNotTheModels(t *testing.T) {
	const above = "#include <vector>\n\nint broken() { return undefined_thing; }\n\n// Returns the sum of the elements of v.\nint sum(const std::vector<int>& v) {\n"
	const below = sumSig + "\n\nint main() {\n  return sum({1, 2}) + missing_var;\n}\n"
	const typo = "  int total = 0;\n  for (int x : v) totl += x;\n  return total;\n}\n"
	tests := []struct {
		name         string
		doc          string
		rules        []modeltest.Rule
		wantAttempts int
		wantOld      string // the old error the summary names
	}{
		{
			name: "an error above the cursor", doc: above,
			rules:        []modeltest.Rule{{PromptSuffix: "int sum(const std::vector<int>& v) {\n", Text: sumBody, Chunk: 6}},
			wantAttempts: 1, wantOld: "undefined_thing",
		},
		{
			name: "an error below the cursor", doc: below,
			rules:        []modeltest.Rule{{PromptSuffix: "int sum(const std::vector<int>& v) {\n", Text: sumBody + sumMore, Chunk: 6}},
			wantAttempts: 1, wantOld: "missing_var",
		},
		{
			// The model's own error still counts, and is repaired, with an old error around.
			name: "an error above and the model's own typo", doc: above,
			rules: []modeltest.Rule{
				{PromptContains: "  int total = 0;\n// hydra-feedback:", Text: "  for (int x : v) total += x;\n  return total;\n}\n", Chunk: 6},
				{PromptSuffix: "int sum(const std::vector<int>& v) {\n", Text: typo, Chunk: 6},
			},
			wantAttempts: 2, wantOld: "undefined_thing",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := modeltest.NewServer(t, modeltest.Script{Rules: tt.rules})
			c := startServer(t, clientOptions{initOptions: map[string]any{"hydra": map[string]any{"modelUrl": model.URL}}})
			dir := t.TempDir()
			uri := "file://" + filepath.Join(dir, "sum.cpp")
			c.open(uri, "cpp", tt.doc)
			brace := strings.Index(tt.doc, "v) {") + 3
			sum, err := c.generate(uri, position(tt.doc, brace))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("summary: %+v", sum)
			for _, call := range model.Handler.Calls() {
				t.Logf("model request %d, prompt ending %q", call.Rule, call.Prompt[max(0, len(call.Prompt)-160):])
			}
			if !sum.OK || sum.Reason != "accepted" || sum.Attempts != tt.wantAttempts {
				t.Fatalf("summary %+v, want accepted in %d attempt(s)", sum, tt.wantAttempts)
			}
			if n := len(model.Handler.Calls()); n != tt.wantAttempts {
				t.Errorf("%d model requests, want %d: old errors must not spend attempts", n, tt.wantAttempts)
			}
			if sum.PreexistingErrors != 1 || strings.Count(sum.Message, "there before") != 1 || !strings.Contains(sum.Message, tt.wantOld) {
				t.Errorf("summary message %q (%d old errors), want the old error named once", sum.Message, sum.PreexistingErrors)
			}
			got := c.text(uri)
			if !strings.Contains(got, "v) {\n"+sumBody) {
				t.Fatalf("document after generation:\n%s\nwant the body after the signature", got)
			}
			// The generated body compiles: the only error left is the old one.
			errs := clangErrors(t, dir, got)
			if len(errs) != 1 || !strings.Contains(errs[0], tt.wantOld) {
				t.Fatalf("clang errors %v, want only the old one (%s)", errs, tt.wantOld)
			}
			c.mu.Lock()
			progress := append([]lsp.ProgressParams(nil), c.progress...)
			c.mu.Unlock()
			for _, p := range progress {
				t.Logf("progress: %v", p.Value)
				if m, ok := p.Value.(map[string]any); ok && m["kind"] == "report" && strings.Contains(fmt.Sprint(m["message"]), tt.wantOld) {
					t.Errorf("a progress report blames the old error: %v", m["message"])
				}
			}
		})
	}
}

func TestTypingDuringGenerationIsKeptAndCheckedAgain(t *testing.T) {
	doc := sumSig + "\n"
	regionStart := len(doc)
	tests := []struct {
		name     string
		at       func(text string) int // where the user types, in the client's text then
		typed    string
		client   clientOptions
		wantOK   bool
		wantStop string // the reason when the typing stops the generation
		wantMsg  string
	}{
		{name: "a comment above", at: func(string) int { return 0 }, typed: "// note\n", wantOK: true, wantMsg: "it compiles"},
		{name: "broken code above", at: func(string) int { return 0 }, typed: "int oops = ;\n", wantMsg: "does not compile"},
		{name: "broken code below, Neovim", at: func(text string) int { return len(text) }, typed: "int later = ;\n",
			client: clientOptions{neovim: true}, wantMsg: "does not compile"},
		// The Emacs case: point stayed at the region's start and "// hi" commented out
		// the first generated line while Hydra said "done".
		{name: "typing at the start of the generated lines", at: func(string) int { return regionStart }, typed: "// hi",
			wantStop: "user_edit", wantMsg: "does not compile"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
				{PromptSuffix: "int sum(const std::vector<int>& v) {\n", Text: sumBody, Chunk: 6, DelayMS: 30},
			}})
			o := tt.client
			o.initOptions = map[string]any{"hydra": map[string]any{"modelUrl": model.URL}}
			c := startServer(t, o)
			dir := t.TempDir()
			uri := "file://" + filepath.Join(dir, "sum.cpp")
			c.open(uri, "cpp", doc)
			typedOnce := false
			c.beforeApply = func(n int) {
				if n == 1 && !typedOnce { // after the first generated line is in
					typedOnce = true
					text := c.text(uri)
					off := tt.at(text)
					c.userEdit(uri, off, off, tt.typed)
				}
			}
			sum, err := c.generate(uri, position(doc, len(sumSig)-1))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("summary: %+v", sum)
			got := c.text(uri)
			if !typedOnce || !strings.Contains(got, tt.typed) {
				t.Fatalf("the user's typing %q is not in the document:\n%s", tt.typed, got)
			}
			if !sum.Rechecked || sum.OK != tt.wantOK || !strings.Contains(sum.Message, tt.wantMsg) {
				t.Fatalf("summary %+v, want rechecked, ok %v, message saying %q", sum, tt.wantOK, tt.wantMsg)
			}
			if tt.wantStop != "" && sum.Reason != tt.wantStop {
				t.Fatalf("reason %q, want %q", sum.Reason, tt.wantStop)
			}
			errs := clangErrors(t, dir, got)
			if (len(errs) == 0) != tt.wantOK || (sum.DocumentErrors == 0) != tt.wantOK {
				t.Fatalf("clang errors %v, summary says %d: the summary must match the document", errs, sum.DocumentErrors)
			}
			if tt.wantStop == "" && !strings.Contains(got, sumBody) {
				t.Fatalf("document:\n%s\nwant the whole body", got)
			}
		})
	}
}

// TestTypingThatOvertakesEveryEditDoesNotStopGeneration: the user keeps typing above the
// generated code, and each keystroke lands between Hydra's edit and the client's answer, so the
// client refuses the edit (its version is stale) and reports the keystroke only after the
// refusal. More refusals in a row than maxRejected must not stop the generation: each is redone
// against the new text. (Seen under load in TestSoakUnderLoad: 21 refusals, edit_rejected.)
func TestTypingThatOvertakesEveryEditDoesNotStopGeneration(t *testing.T) {
	const doc = "// typed:\n" + sumSig + "\n"
	model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
		{PromptSuffix: "int sum(const std::vector<int>& v) {\n", Text: sumBody, Chunk: 2, DelayMS: 10},
	}})
	c := startServer(t, clientOptions{initOptions: map[string]any{"hydra": map[string]any{"modelUrl": model.URL}}})
	uri := "file://" + filepath.Join(t.TempDir(), "sum.cpp")
	c.open(uri, "cpp", doc)
	const overtaken = 30 // more than the server's maxRejected (20)
	typed := 0
	c.beforeApply = func(int) {
		if typed < overtaken {
			typed++
			c.userEditLate(uri, len("// typed:"), len("// typed:"), "x")
		}
	}
	sum, err := c.generate(uri, position(doc, len("// typed:\n")+len(sumSig)-1))
	if err != nil {
		t.Fatal(err)
	}
	got := c.text(uri)
	t.Logf("summary: %+v", sum)
	if typed < overtaken {
		t.Fatalf("only %d edits were overtaken, want %d", typed, overtaken)
	}
	if !sum.OK || sum.Reason != "accepted" {
		t.Fatalf("summary %+v, want accepted: typing that overtakes edits must not stop generation", sum)
	}
	want := "// typed:" + strings.Repeat("x", overtaken) + "\n" + sumSig + "\n" + sumBody
	if !strings.HasPrefix(got, want) {
		t.Fatalf("document:\n%s\nwant it to start with:\n%s", got, want)
	}
}

func TestDiagnosticsFollowTheDocument(t *testing.T) {
	model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
		{PromptSuffix: "// two\n", Text: "int one() { return 1; }\nint two() { return tow; }\n", Chunk: 8},
	}})
	c := startServer(t, clientOptions{initOptions: map[string]any{"hydra": map[string]any{"modelUrl": model.URL, "maxAttempts": 1}}})
	dir := t.TempDir()
	uri := "file://" + filepath.Join(dir, "two.cpp")
	const doc = "// two\n"
	c.open(uri, "cpp", doc)
	sum, err := c.generate(uri, position(doc, len(doc)))
	if err != nil || sum.OK || sum.Diagnostics == 0 {
		t.Fatalf("generation: %v %+v, want a failure with diagnostics", err, sum)
	}
	diags := func() []lsp.Diagnostic {
		c.mu.Lock()
		defer c.mu.Unlock()
		return append([]lsp.Diagnostic(nil), c.diags[uri]...)
	}
	c.waitFor("diagnostics", time.Minute, func() bool { return len(c.diags[uri]) > 0 })
	first := diags()[0]
	t.Logf("document %q, diagnostic %+v", c.text(uri), first)

	// A line inserted above: the diagnostic moves down with its line.
	c.userEdit(uri, 0, 0, "#include <cstdio>\n")
	c.waitFor("the diagnostic to move", time.Minute, func() bool {
		d := c.diags[uri]
		return len(d) > 0 && d[0].Range.Start.Line == first.Range.Start.Line+1
	})
	// The user edits its line: it is cleared.
	text := c.text(uri)
	lineStart := 0
	for i := 0; i < first.Range.Start.Line+1; i++ {
		lineStart = strings.IndexByte(text[lineStart:], '\n') + lineStart + 1
	}
	c.userEdit(uri, lineStart, lineStart, "// ")
	c.waitFor("the diagnostic to clear", time.Minute, func() bool { return len(c.diags[uri]) == 0 })
}

// inline asks for an inline completion as an editor does when the user pauses (automatic
// trigger) or asks (invoked).
func (c *client) inline(uri string, pos lsp.Position, automatic bool) (lsp.InlineCompletionList, error) {
	kind := 1
	if automatic {
		kind = 2
	}
	var list lsp.InlineCompletionList
	err := c.call("textDocument/inlineCompletion", lsp.InlineCompletionParams{
		TextDocument: lsp.TextDocumentIdentifier{URI: uri}, Position: pos,
		Context: lsp.InlineCompletionContext{TriggerKind: kind}}, &list)
	return list, err
}

func TestInlineCompletionIsCheapAndVisible(t *testing.T) {
	t.Run("nothing inside a comment or a string", func(t *testing.T) {
		model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Text: "int two() { return 2; }\n"}}})
		c := startServer(t, clientOptions{initOptions: map[string]any{"modelUrl": model.URL}})
		uri := "file://" + filepath.Join(t.TempDir(), "c.cpp")
		const doc = "#include <cstdio>\n// prints the sum of\nvoid f() { std::puts(\"hello, \"); }\n"
		c.open(uri, "cpp", doc)
		for _, at := range []int{strings.Index(doc, "sum of") + 4, strings.Index(doc, "hello, ") + 6} {
			list, err := c.inline(uri, position(doc, at), true)
			if err != nil || len(list.Items) != 0 {
				t.Fatalf("inline completion at %d: %v %+v, want no items", at, err, list)
			}
		}
		if n := len(model.Handler.Calls()); n != 0 {
			t.Fatalf("%d model requests for completions inside a comment and a string", n)
		}
	})
	t.Run("its own small attempt budget", func(t *testing.T) {
		for _, tc := range []struct {
			setting any
			want    int
		}{{nil, 2}, {1, 1}} {
			model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Text: "int two() { return tow; }\n"}}})
			cfg := map[string]any{"modelUrl": model.URL}
			if tc.setting != nil {
				cfg["inlineMaxAttempts"] = tc.setting
			}
			c := startServer(t, clientOptions{initOptions: map[string]any{"hydra": cfg}})
			uri := "file://" + filepath.Join(t.TempDir(), "two.cpp")
			c.open(uri, "cpp", "// two\n")
			list, err := c.inline(uri, lsp.Position{Line: 1}, false)
			if err != nil || len(list.Items) != 0 {
				t.Fatalf("inline: %v %+v, want no items for a continuation that never compiles", err, list)
			}
			if n := len(model.Handler.Calls()); n != tc.want {
				t.Fatalf("inlineMaxAttempts %v: %d model requests, want %d", tc.setting, n, tc.want)
			}
		}
	})
	t.Run("thinking progress and the first checked lines while it works", func(t *testing.T) {
		model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
			{PromptSuffix: "int sum(const std::vector<int>& v) {\n", Text: sumBody, Chunk: 6, DelayMS: 30}}})
		c := startServer(t, clientOptions{initOptions: map[string]any{"modelUrl": model.URL}})
		uri := "file://" + filepath.Join(t.TempDir(), "sum.cpp")
		c.open(uri, "cpp", sumSig+"\n")
		list, err := c.inline(uri, lsp.Position{Line: 4}, false)
		if err != nil || len(list.Items) != 1 || list.Items[0].InsertText != sumBody {
			t.Fatalf("inline: %v %+v, want the body", err, list)
		}
		c.mu.Lock()
		progress := append([]lsp.ProgressParams(nil), c.progress...)
		partials := append([]json.RawMessage(nil), c.partials...)
		c.mu.Unlock()
		begun := false
		for _, p := range progress {
			if m, ok := p.Value.(map[string]any); ok && m["kind"] == "begin" && strings.Contains(fmt.Sprint(m["title"]), "thinking") {
				begun = true
			}
		}
		if !begun {
			t.Errorf("no \"thinking\" progress while the inline completion worked: %+v", progress)
		}
		if len(partials) == 0 {
			t.Fatal("no hydra/inlineCompletionPartial before the answer")
		}
		var first lsp.InlinePartialParams
		if err := json.Unmarshal(partials[0], &first); err != nil || first.Text == "" || !strings.HasPrefix(sumBody, first.Text) {
			t.Fatalf("first partial %s: %v, want a checked prefix of the body", partials[0], err)
		}
	})
	t.Run("typing cancels a stale request, its search and its model stream", func(t *testing.T) {
		model := slowModel(t)
		c := startServer(t, clientOptions{initOptions: map[string]any{"modelUrl": model.URL}})
		uri := "file://" + filepath.Join(t.TempDir(), "many.cpp")
		c.open(uri, "cpp", slowPrefix)
		done := make(chan error, 1)
		go func() {
			_, err := c.inline(uri, lsp.Position{Line: 1}, false)
			done <- err
		}()
		deadline := time.Now().Add(time.Minute)
		for len(checkerProcesses(c.marker)) == 0 || len(model.Handler.Calls()) == 0 {
			if time.Now().After(deadline) {
				t.Fatal("the search never started")
			}
			time.Sleep(10 * time.Millisecond)
		}
		c.userEdit(uri, 0, 0, "// typed\n") // no $/cancelRequest: the change alone makes it stale
		select {
		case err := <-done:
			var rpcErr *jsonrpc2.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != -32801 {
				t.Fatalf("stale inline completion answered %v, want ContentModified (-32801)", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("the stale inline completion was not cancelled")
		}
		deadline = time.Now().Add(10 * time.Second)
		for len(checkerProcesses(c.marker)) > 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if ps := checkerProcesses(c.marker); len(ps) > 0 {
			t.Fatalf("checker processes alive after the stale request: %v", ps)
		}
	})
}

func TestOneSummaryPerGeneration(t *testing.T) {
	for _, clientShows := range []bool{false, true} {
		t.Run(fmt.Sprintf("clientShowsSummary=%v", clientShows), func(t *testing.T) {
			model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
				{PromptSuffix: "int sum(const std::vector<int>& v) {\n", Text: sumBody, Chunk: 6}}})
			cfg := map[string]any{"modelUrl": model.URL}
			if clientShows {
				cfg["clientShowsSummary"] = true
			}
			c := startServer(t, clientOptions{initOptions: map[string]any{"hydra": cfg}})
			uri := "file://" + filepath.Join(t.TempDir(), "sum.cpp")
			c.open(uri, "cpp", sumSig+"\n")
			sum, err := c.generate(uri, position(sumSig, len(sumSig)))
			if err != nil || !sum.OK || sum.Message == "" {
				t.Fatalf("generate: %v %+v", err, sum)
			}
			time.Sleep(200 * time.Millisecond) // a second summary would be on its way by now
			c.mu.Lock()
			msgs := append([]lsp.ShowMessageParams(nil), c.messages...)
			c.mu.Unlock()
			want := 1
			if clientShows {
				want = 0 // the client shows sum.Message itself
			}
			if len(msgs) != want || (want == 1 && msgs[0].Message != sum.Message) {
				t.Fatalf("window/showMessage %+v, want %d carrying the summary %q", msgs, want, sum.Message)
			}
		})
	}
}
