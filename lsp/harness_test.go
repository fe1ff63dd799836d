package lsp_test

// The end-to-end tests of this package spawn the real `hydra lsp` binary and talk JSON-RPC to
// it over pipes, as an editor does, from the test client below (built on
// github.com/sourcegraph/jsonrpc2 and this package's wire types). The checker is the real Clang
// shim; the only stand-in is the language model: engine/model/modeltest's SCRIPTED STAND-IN,
// an OpenAI-compatible server that answers from a fixed script.

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/hydra-lsp/hydra/checkers/wholefile"
	"github.com/hydra-lsp/hydra/lsp"
)

var (
	hydraBin string // the hydra binary built for these tests
	shimBin  string // the Clang shim (make build)
	repoRoot string
)

func TestMain(m *testing.M) {
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lsp tests:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func setup(m *testing.M) (int, error) {
	wd, err := os.Getwd()
	if err != nil {
		return 0, err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			repoRoot = dir
			break
		}
		if filepath.Dir(dir) == dir {
			return 0, errors.New("no go.mod above the working directory")
		}
	}
	shimBin = os.Getenv("HYDRA_CLANG_SHIM")
	if shimBin == "" {
		shimBin = filepath.Join(repoRoot, "bin", "hydra-clang-shim")
	}
	if _, err := os.Stat(shimBin); err != nil {
		return 0, fmt.Errorf("the Clang shim is missing (%v): run `make build` at the repo root", err)
	}
	tmp, err := os.MkdirTemp("", "hydra-lsp-test-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	// A private copy of the shim: `make build` elsewhere may rewrite bin/ while tests run.
	shim, err := os.ReadFile(shimBin)
	if err != nil {
		return 0, err
	}
	shimBin = filepath.Join(tmp, "hydra-clang-shim")
	if err := os.WriteFile(shimBin, shim, 0o755); err != nil {
		return 0, err
	}
	hydraBin = filepath.Join(tmp, "hydra")
	args := []string{"build", "-o", hydraBin}
	if os.Getenv("HYDRA_LSP_RACE") == "1" { // the server under the race detector
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "./cmd/hydra")...)
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("build hydra: %v\n%s", err, out)
	}
	// The servers' cache directory (TokPol's learned state, the pictures of searches) is the
	// tests' own: a test run must not change what the user's Hydra has learned. Only after the
	// build, which uses the user's Go build cache (by default under XDG_CACHE_HOME too).
	if err := os.Setenv("XDG_CACHE_HOME", filepath.Join(tmp, "cache")); err != nil {
		return 0, err
	}
	return m.Run(), nil
}

// clientDoc is the test client's copy of a document.
type clientDoc struct {
	version int
	text    string
}

// appliedEdit records one workspace/applyEdit the client applied.
type appliedEdit struct {
	URI     string
	Range   lsp.Range
	NewText string
	Deleted string // the text the edit replaced
}

// client is an LSP client over pipes to a `hydra lsp` process. It applies every
// workspace/applyEdit to its own copy of the documents (refusing stale versions, as VS Code
// does), reports the change back with didChange, and records what the server sends.
type client struct {
	t      *testing.T
	cmd    *exec.Cmd
	conn   *jsonrpc2.Conn
	stdin  io.WriteCloser
	marker string // HYDRA_LSP_TEST_MARKER of the server and every process it starts
	stderr *lineLog
	// initResult is the server's answer to initialize.
	initResult json.RawMessage

	mu        sync.Mutex
	docs      map[string]*clientDoc
	edits     []appliedEdit
	progress  []lsp.ProgressParams
	messages  []lsp.ShowMessageParams
	logTypes  []int // the types of the server's window/logMessage notifications
	diags     map[string][]lsp.Diagnostic
	partials  []json.RawMessage // hydra/inlineCompletionPartial notifications
	configReq int
	// config is what the client answers to workspace/configuration.
	config json.RawMessage
	// beforeApply, when set, runs before each applyEdit is applied (to type "during" generation).
	beforeApply func(n int)
	// refuse makes the client answer applied:false to every edit.
	refuse bool
	// late holds didChange notifications of the user's typing that the client sends only after
	// its answer to the applyEdit being handled (userEditLate).
	late []lsp.DidChangeTextDocumentParams
	// silentEdits makes the client never answer workspace/applyEdit (unanswered counts them).
	silentEdits bool
	unanswered  int
	// neovim makes the client behave as Neovim 0.7 does: didChange is debounced (sent 150 ms
	// after the change, after the applyEdit reply) and a stale versioned edit is dropped while
	// the reply still says applied: true.
	neovim  bool
	outbox  []lsp.DidChangeTextDocumentParams
	flushAt *time.Timer
	waiters []chan struct{}

	// Changes go out in the order the client made them, as an editor sends them on its one
	// connection: each change takes a ticket under mu when it gets its version (ticketNext),
	// and is sent once every earlier ticket was (sendMu, sendTurn, ticketSent). Without this
	// the typing and an applied edit, sent from two goroutines, could reach the server with
	// their versions out of order. (userEditLate's changes take none: they are sent late on
	// purpose.)
	ticketNext int
	sendMu     sync.Mutex
	sendTurn   *sync.Cond
	ticketSent int
}

// clientOptions shape a session.
type clientOptions struct {
	initOptions any
	config      any // workspace/configuration answer; nil = the client does not serve it
	env         []string
	noProgress  bool     // the client does not support window/workDoneProgress
	unversioned bool     // the client does not support documentChanges
	neovim      bool     // debounced didChange, stale edits dropped but reported applied
	args        []string // more arguments of `hydra lsp`
	silentEdits bool     // the client never answers workspace/applyEdit
	dir         string   // the server's working directory ("": the test's)
	relatedInfo bool     // the client shows diagnostics' relatedInformation
	clientName  string   // clientInfo.name ("eglot": the servers behind Hydra by default)
}

// startServer spawns `hydra lsp` and initializes it.
func startServer(t *testing.T, o clientOptions) *client {
	t.Helper()
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	marker := hex.EncodeToString(b)
	cmd := exec.Command(hydraBin, append([]string{"lsp"}, o.args...)...)
	cmd.Env = append(os.Environ(), "HYDRA_CLANG_SHIM="+shimBin, "HYDRA_LSP_TEST_MARKER="+marker,
		"HYDRA_MODEL_URL=", "HYDRA_MODEL=", "HYDRA_API_KEY=")
	cmd.Env = append(cmd.Env, o.env...)
	cmd.Dir = o.dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := &lineLog{t: t}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, cmd: cmd, stdin: stdin, marker: marker, stderr: logs,
		docs: map[string]*clientDoc{}, diags: map[string][]lsp.Diagnostic{}, neovim: o.neovim,
		silentEdits: o.silentEdits}
	c.sendTurn = sync.NewCond(&c.sendMu)
	if o.config != nil {
		c.config, _ = json.Marshal(o.config)
	}
	c.conn = jsonrpc2.NewConn(context.Background(),
		jsonrpc2.NewBufferedStream(rwc{stdout, stdin}, jsonrpc2.VSCodeObjectCodec{}), c)
	t.Cleanup(func() {
		c.conn.Close()
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logs.stop()
		// Whatever happened in the test, nothing it started may outlive it.
		waitNoProcesses(t, marker, 10*time.Second)
	})

	caps := map[string]any{
		"workspace": map[string]any{
			"applyEdit":     true,
			"configuration": o.config != nil,
			"workspaceEdit": map[string]any{"documentChanges": !o.unversioned},
		},
		"window":       map[string]any{"workDoneProgress": !o.noProgress},
		"general":      map[string]any{"positionEncodings": []string{"utf-16"}},
		"textDocument": map[string]any{"publishDiagnostics": map[string]any{"relatedInformation": o.relatedInfo}},
	}
	params := map[string]any{"processId": os.Getpid(), "rootUri": nil, "capabilities": caps}
	if o.initOptions != nil {
		params["initializationOptions"] = o.initOptions
	}
	if o.clientName != "" {
		params["clientInfo"] = map[string]any{"name": o.clientName}
	}
	if err := c.call("initialize", params, &c.initResult); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	var res lsp.InitializeResult
	if err := json.Unmarshal(c.initResult, &res); err != nil {
		t.Fatalf("initialize result: %v", err)
	}
	if res.Capabilities.TextDocumentSync.Change != 2 {
		t.Fatalf("server does not offer incremental sync: %+v", res.Capabilities)
	}
	if err := c.conn.Notify(context.Background(), "initialized", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	return c
}

type rwc struct {
	io.Reader
	io.WriteCloser
}

// lineLog collects the server's log (stderr and window/logMessage) and echoes it to the test log.
type lineLog struct {
	t       *testing.T
	mu      sync.Mutex
	buf     strings.Builder
	stopped bool
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if !l.stopped {
		for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
			l.t.Log("server: " + line)
		}
	}
	return len(p), nil
}

func (l *lineLog) stop() {
	l.mu.Lock()
	l.stopped = true
	l.mu.Unlock()
}

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Handle implements jsonrpc2.Handler: the client's side of server→client messages.
func (c *client) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	var params json.RawMessage
	if req.Params != nil {
		params = *req.Params
	}
	switch req.Method {
	case "workspace/applyEdit":
		var p lsp.ApplyWorkspaceEditParams
		if err := json.Unmarshal(params, &p); err != nil {
			c.t.Errorf("bad applyEdit: %v", err)
			return
		}
		if p.Label != "" {
			c.t.Errorf("applyEdit carries a label %q (Neovim would print it)", p.Label)
		}
		if c.silentEdits {
			c.record(func() { c.unanswered++ })
			return
		}
		applied, why := c.applyWorkspaceEdit(p.Edit)
		_ = conn.Reply(ctx, req.ID, lsp.ApplyWorkspaceEditResult{Applied: applied, FailureReason: why})
		c.mu.Lock()
		late := c.late
		c.late = nil
		c.mu.Unlock()
		for _, n := range late {
			c.sendChange(n)
		}
	case "workspace/configuration":
		c.mu.Lock()
		c.configReq++
		cfg := c.config
		c.mu.Unlock()
		if cfg == nil {
			_ = conn.ReplyWithError(ctx, req.ID, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "no configuration"})
			return
		}
		_ = conn.Reply(ctx, req.ID, []json.RawMessage{cfg})
	case "window/workDoneProgress/create":
		_ = conn.Reply(ctx, req.ID, nil)
	case "$/progress":
		var p lsp.ProgressParams
		_ = json.Unmarshal(params, &p)
		c.record(func() { c.progress = append(c.progress, p) })
	case "window/showMessage":
		var p lsp.ShowMessageParams
		_ = json.Unmarshal(params, &p)
		c.record(func() { c.messages = append(c.messages, p) })
	case "textDocument/publishDiagnostics":
		var p lsp.PublishDiagnosticsParams
		_ = json.Unmarshal(params, &p)
		c.record(func() { c.diags[p.URI] = p.Diagnostics })
	case "window/logMessage":
		// The server's log reaches the client at its level; the test keeps it with stderr's.
		var p lsp.ShowMessageParams
		_ = json.Unmarshal(params, &p)
		c.record(func() { c.logTypes = append(c.logTypes, p.Type) })
		_, _ = fmt.Fprintf(c.stderr, "[logMessage %d] %s\n", p.Type, p.Message)
	case "hydra/inlineCompletionPartial":
		c.record(func() { c.partials = append(c.partials, params) })
	default:
		if !req.Notif {
			_ = conn.ReplyWithError(ctx, req.ID, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: req.Method})
		}
	}
}

func (c *client) record(f func()) {
	c.mu.Lock()
	f()
	ws := c.waiters
	c.waiters = nil
	c.mu.Unlock()
	for _, w := range ws {
		close(w)
	}
}

// waitFor waits until cond (called with c.mu held) holds.
func (c *client) waitFor(what string, timeout time.Duration, cond func() bool) {
	c.t.Helper()
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		if cond() {
			c.mu.Unlock()
			return
		}
		w := make(chan struct{})
		c.waiters = append(c.waiters, w)
		c.mu.Unlock()
		select {
		case <-w:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			c.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// applyWorkspaceEdit applies an edit to the client's documents the way an editor does: a
// versioned edit for another version is refused; each applied edit becomes a new version,
// reported with didChange before the reply.
func (c *client) applyWorkspaceEdit(we lsp.WorkspaceEdit) (bool, string) {
	type docEdits struct {
		uri     string
		version *int
		edits   []lsp.TextEdit
	}
	var all []docEdits
	for _, dc := range we.DocumentChanges {
		all = append(all, docEdits{dc.TextDocument.URI, dc.TextDocument.Version, dc.Edits})
	}
	for uri, es := range we.Changes {
		all = append(all, docEdits{uri, nil, es})
	}
	c.mu.Lock()
	hook, n := c.beforeApply, len(c.edits)
	c.mu.Unlock()
	if hook != nil {
		hook(n)
	}
	c.mu.Lock()
	if c.refuse {
		c.mu.Unlock()
		return false, "refused by the test client"
	}
	var notes []lsp.DidChangeTextDocumentParams
	for _, de := range all {
		d := c.docs[de.uri]
		if d == nil {
			c.mu.Unlock()
			return false, "document not open"
		}
		if de.version != nil && *de.version != d.version {
			c.mu.Unlock()
			if c.neovim {
				return true, "" // Neovim 0.7 prints "newer than edits", skips the edit, and says applied
			}
			return false, fmt.Sprintf("version %d is not the document's %d", *de.version, d.version)
		}
		// The edits of one document all refer to its text before any of them (clangd sends
		// several, Hydra one): applied from the last to the first, each range stays valid.
		edits := append([]lsp.TextEdit(nil), de.edits...)
		sort.SliceStable(edits, func(i, j int) bool {
			a, b := edits[i].Range.Start, edits[j].Range.Start
			return a.Line > b.Line || a.Line == b.Line && a.Character > b.Character
		})
		for _, e := range edits {
			s, en := mustOffset(c.t, d.text, e.Range.Start), mustOffset(c.t, d.text, e.Range.End)
			c.edits = append(c.edits, appliedEdit{URI: de.uri, Range: e.Range, NewText: e.NewText, Deleted: d.text[s:en]})
			r := e.Range
			text := e.NewText
			if c.neovim {
				// Neovim applies the edit its own way and reports the lines it changed; the
				// whole old text as the range is as good for the server (it trims changes).
				r = lsp.Range{End: position(d.text, len(d.text))}
				text = nvimApply(d.text, e)
				d.text = text
			} else {
				d.text = d.text[:s] + e.NewText + d.text[en:]
			}
			d.version++
			notes = append(notes, lsp.DidChangeTextDocumentParams{
				TextDocument:   lsp.VersionedTextDocumentIdentifier{URI: de.uri, Version: d.version},
				ContentChanges: []lsp.TextDocumentContentChangeEvent{{Range: &r, Text: text}},
			})
		}
	}
	ws := c.waiters
	c.waiters = nil
	ticket := c.ticketLocked()
	c.mu.Unlock()
	for _, w := range ws {
		close(w)
	}
	c.sendInTurn(ticket, notes...)
	return true, ""
}

// ticketLocked (c.mu held) gives the next change its place in the order changes are sent.
func (c *client) ticketLocked() int {
	t := c.ticketNext
	c.ticketNext++
	return t
}

// sendInTurn sends ns, the changes of ticket t (taken under c.mu, as their versions were), once
// every change of an earlier ticket has gone out.
func (c *client) sendInTurn(t int, ns ...lsp.DidChangeTextDocumentParams) {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	for c.ticketSent != t {
		c.sendTurn.Wait()
	}
	for _, n := range ns {
		c.sendChange(n)
	}
	c.ticketSent++
	c.sendTurn.Broadcast()
}

// nvimApply applies a text edit the way Neovim 0.7's vim.lsp.util.apply_text_edits does
// (runtime/lua/vim/lsp/util.lua): the buffer is a list of lines that always ends with a line
// break, and a position on the line past the last one is moved to the end of the last line
// with an extra line break inserted ("Some LSP servers may return +1 range of the buffer
// content"). ASCII text only, as in these tests.
func nvimApply(text string, e lsp.TextEdit) string {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	sr, sc, er, ec := e.Range.Start.Line, e.Range.Start.Character, e.Range.End.Line, e.Range.End.Character
	repl := strings.Split(e.NewText, "\n")
	last := len(lines) - 1
	if sr > last {
		sr, sc = last, len(lines[last])
		repl = append([]string{""}, repl...)
	}
	if er > last {
		er, ec = last, len(lines[last])
	}
	sc, ec = min(sc, len(lines[sr])), min(ec, len(lines[er]))
	head, tail := lines[sr][:sc], lines[er][ec:]
	repl[0] = head + repl[0]
	repl[len(repl)-1] += tail
	out := append(append(append([]string(nil), lines[:sr]...), repl...), lines[er+1:]...)
	return strings.Join(out, "\n") + "\n"
}

// sendChange sends a didChange now, or (neovim) queues it for a debounced flush.
func (c *client) sendChange(n lsp.DidChangeTextDocumentParams) {
	if !c.neovim {
		if err := c.conn.Notify(context.Background(), "textDocument/didChange", n); err != nil {
			c.t.Log(err)
		}
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.outbox = append(c.outbox, n)
	if c.flushAt == nil {
		c.flushAt = time.AfterFunc(150*time.Millisecond, func() {
			c.mu.Lock()
			out := c.outbox
			c.outbox, c.flushAt = nil, nil
			c.mu.Unlock()
			for _, n := range out {
				_ = c.conn.Notify(context.Background(), "textDocument/didChange", n)
			}
		})
	}
}

// open opens a document in the client and the server.
func (c *client) open(uri, lang, text string) {
	c.t.Helper()
	c.mu.Lock()
	c.docs[uri] = &clientDoc{version: 1, text: text}
	c.mu.Unlock()
	err := c.conn.Notify(context.Background(), "textDocument/didOpen", lsp.DidOpenTextDocumentParams{
		TextDocument: lsp.TextDocumentItem{URI: uri, LanguageID: lang, Version: 1, Text: text}})
	if err != nil {
		c.t.Fatal(err)
	}
}

// userEdit replaces the bytes [start, end) of the document, as the user typing.
func (c *client) userEdit(uri string, start, end int, text string) {
	c.mu.Lock()
	d := c.docs[uri]
	r := lsp.Range{Start: position(d.text, start), End: position(d.text, end)}
	d.text = d.text[:start] + text + d.text[end:]
	d.version++
	p := lsp.DidChangeTextDocumentParams{
		TextDocument:   lsp.VersionedTextDocumentIdentifier{URI: uri, Version: d.version},
		ContentChanges: []lsp.TextDocumentContentChangeEvent{{Range: &r, Text: text}},
	}
	ticket := c.ticketLocked()
	c.mu.Unlock()
	c.sendInTurn(ticket, p)
}

// userEditLate is userEdit whose didChange the client sends only after it has answered the
// applyEdit it is handling: a keystroke that overtakes Hydra's edit and whose notification
// trails the refusal.
func (c *client) userEditLate(uri string, start, end int, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.docs[uri]
	r := lsp.Range{Start: position(d.text, start), End: position(d.text, end)}
	d.text = d.text[:start] + text + d.text[end:]
	d.version++
	c.late = append(c.late, lsp.DidChangeTextDocumentParams{
		TextDocument:   lsp.VersionedTextDocumentIdentifier{URI: uri, Version: d.version},
		ContentChanges: []lsp.TextDocumentContentChangeEvent{{Range: &r, Text: text}},
	})
}

func (c *client) text(uri string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.docs[uri].text
}

// call makes a request with a generous timeout.
func (c *client) call(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	return c.conn.Call(ctx, method, params, result)
}

// generate runs hydra.generate at the cursor and returns its summary.
func (c *client) generate(uri string, pos lsp.Position) (lsp.Summary, error) {
	var sum lsp.Summary
	err := c.call("workspace/executeCommand", lsp.ExecuteCommandParams{
		Command:   lsp.CommandGenerate,
		Arguments: []json.RawMessage{mustJSON(map[string]any{"uri": uri, "position": pos})},
	}, &sum)
	return sum, err
}

// shutdown sends shutdown and exit and waits for the process to end; it returns its status.
func (c *client) shutdown() int {
	c.t.Helper()
	if err := c.call("shutdown", nil, nil); err != nil {
		c.t.Fatalf("shutdown: %v", err)
	}
	_ = c.conn.Notify(context.Background(), "exit", nil)
	return c.waitExit()
}

func (c *client) waitExit() int {
	c.t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			c.t.Fatalf("wait: %v", err)
		}
		return 0
	case <-time.After(20 * time.Second):
		c.t.Fatal("the server did not exit")
		return -1
	}
}

// processes lists the live processes carrying the marker in their environment (the server
// and every checker process it started, wherever they were reparented).
func processes(marker string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil || !strings.Contains(string(env), "HYDRA_LSP_TEST_MARKER="+marker) {
			continue
		}
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if f := strings.Fields(string(stat)); len(f) > 2 && f[2] == "Z" {
			continue // a zombie is gone, only not reaped yet
		}
		exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		out = append(out, fmt.Sprintf("%d:%s", pid, filepath.Base(exe)))
	}
	return out
}

// checkerProcesses lists the live Clang shim processes carrying the marker.
func checkerProcesses(marker string) []string {
	var out []string
	for _, p := range processes(marker) {
		if strings.HasSuffix(p, filepath.Base(shimBin)) {
			out = append(out, p)
		}
	}
	return out
}

// waitNoProcesses fails the test unless every process with the marker is gone within timeout.
func waitNoProcesses(t *testing.T, marker string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ps := processes(marker)
		if len(ps) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("processes left behind: %v", ps)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// position converts a byte offset to a UTF-16 position (the tests use ASCII documents).
func position(text string, off int) lsp.Position {
	line := strings.Count(text[:off], "\n")
	col := off - (strings.LastIndexByte(text[:off], '\n') + 1)
	return lsp.Position{Line: line, Character: col}
}

func mustOffset(t *testing.T, text string, p lsp.Position) int {
	off := 0
	for l := 0; l < p.Line; l++ {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			t.Errorf("position %v past the end", p)
			return len(text)
		}
		off += i + 1
	}
	end := len(text)
	if i := strings.IndexByte(text[off:], '\n'); i >= 0 {
		end = off + i
	}
	return min(off+p.Character, end)
}

// compiles checks text with whole-file clang-19 (checkers/wholefile) as a file in dir with the
// given flags.
func compiles(t *testing.T, dir, name, text string, flags ...string) error {
	t.Helper()
	v, err := wholefile.Check(context.Background(), text, wholefile.Options{Dir: dir, Name: name, Flags: flags})
	if err != nil {
		return err
	}
	if !v.OK {
		return fmt.Errorf("clang-19 rejects %s:\n%s", name, v.Output)
	}
	return nil
}

// readLines is a helper for raw-protocol tests: it reads framed messages from r.
func readMessage(r *bufio.Reader) (map[string]any, error) {
	length := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			length, _ = strconv.Atoi(v)
		}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(body, &m)
}
