package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/hydra-lsp/hydra/checkers/lang"
	"github.com/hydra-lsp/hydra/internal/childproc"
)

// Language servers behind Hydra. Editors that run one server per language (eglot) get Hydra or
// the language's own server, not both; with a language's server setting on (clangd for C/C++,
// typescriptServer for TypeScript), `hydra lsp` starts that server as its child and is the
// client's only server: what Hydra does not handle is forwarded to the server of the document's
// language (forward.go), and the servers' messages to the client pass back through Hydra. This
// file is one such server's process: starting it, its initialize handshake, and restarting it
// with backoff when it dies. clangd.go and tsserver.go say when each is wanted and how it runs.

// Backoff of a server's restarts: the first restart waits backendBackoffMin, each crash of a
// server that ran less than backendStableAfter doubles the wait, up to backendBackoffMax.
const (
	backendBackoffMin  = 200 * time.Millisecond
	backendBackoffMax  = 30 * time.Second
	backendStableAfter = time.Minute
	// backendInitTimeout bounds a server's answer to initialize (clangd and tsc answer at once).
	backendInitTimeout = 20 * time.Second
	// backendExitGrace is how long a server may take to answer shutdown, and to exit after
	// exit, before it is killed. clangd-19 answers shutdown at once but does not exit while it is
	// indexing the standard library, which it starts for every newly opened file (10–12 s
	// measured for <cstdio>); killing it then loses nothing, and editors give the whole
	// shutdown 1.5 s (eglot) or less.
	backendExitGrace = 200 * time.Millisecond
	// backendCancelGrace is how long a cancelled request waits for the server's answer.
	backendCancelGrace = 10 * time.Second
)

// backendProc is one running server.
type backendProc struct {
	cmd     *exec.Cmd
	conn    *jsonrpc2.Conn
	stdin   *queueWriter
	exited  chan struct{} // closed when the process has been waited for
	exitErr error
	started time.Time
	// notes queues the server's notifications for deliver (forward.go).
	notes chan note
}

// backend owns one language's server behind Hydra: the live process (nil while it is down),
// what it was told, and the requests between it and the client.
type backend struct {
	s *Server
	// name is what logs, messages, progress titles and the ids of its requests to the client
	// call it ("clangd", "tsc").
	name string
	// lang is the language whose documents it serves (the others never reach it).
	lang *lang.Language
	path string
	args []string
	// initParams are the client's initialize params as the server gets them (clangdInitParams,
	// backendInitParams).
	initParams json.RawMessage
	// commands are the commands its initialize answer offers (workspace/executeCommand goes to
	// the server that offers the command).
	commands []string
	// pulls: the server publishes diagnostics only when asked (LSP 3.17's textDocument/diagnostic:
	// TypeScript 7's does). pushFor: the client takes only pushed ones, so Hydra asks for the
	// server after each change and publishes the answer merged with its own (pull.go).
	pulls, pushFor bool
	// ready is closed once the client has Hydra's initialize answer (it sent initialized):
	// the server's messages to the client wait for it.
	ready     chan struct{}
	readyOnce sync.Once
	done      chan struct{} // closed by close
	wg        sync.WaitGroup

	// mu guards the fields below. It is taken before s.mu, never after.
	mu     sync.Mutex
	proc   *backendProc   // the live server, nil while down
	opened map[string]int // document URI → the version the server has
	// foreign are the open documents of another language than the server's (checkers/lang):
	// it never sees them (notify, forward.go).
	foreign map[string]bool
	nextID  uint64 // ids of Hydra's requests to the server
	closed  bool
	told    bool // the user was told that the server stopped
	// reverse maps the id of a server→client request to the id it has towards the client.
	reverse map[jsonrpc2.ID]jsonrpc2.ID
	nextRev uint64

	diags diagMerger
	pull  pulls // pending pulls of diagnostics (pull.go)
}

// launch starts the server and makes the initialize handshake; it returns the server's answer.
func (px *backend) launch(ctx context.Context) (*backendProc, json.RawMessage, error) {
	cmd := exec.Command(px.path, px.args...)
	cmd.Stderr = &lineWriter{logf: func(line string) { px.s.logf("%s: %s", px.name, line) }}
	// Killed with Hydra, as the checker's processes are.
	stdin, stdout, err := childproc.StartPiped(cmd)
	if err != nil {
		return nil, nil, err
	}
	proc := &backendProc{cmd: cmd, stdin: newQueueWriter(stdin), exited: make(chan struct{}), started: time.Now()}
	go func() {
		proc.exitErr = cmd.Wait()
		close(proc.exited)
	}()
	st := newStream(backendPipes{Reader: stdout, q: proc.stdin}, px.s.logf)
	proc.notes = make(chan note, 256)
	px.wg.Add(1)
	go px.deliver(proc)
	proc.conn = jsonrpc2.NewConn(context.Background(), st, &backendHandler{px: px, proc: proc}, jsonrpc2.SetLogger(px.s.logger))
	ictx, cancel := context.WithTimeout(ctx, backendInitTimeout)
	defer cancel()
	var res json.RawMessage
	err = px.callProc(ictx, proc, "initialize", px.initParams, &res)
	if err != nil {
		px.kill(proc)
		return nil, nil, fmt.Errorf("%s initialize: %w", px.name, err)
	}
	return proc, res, nil
}

// callProc sends one request to proc under an id of Hydra's and waits for the answer. When ctx
// ends first, the server gets $/cancelRequest for that id and its answer (usually RequestCancelled)
// is still awaited, briefly, so that it is what the client gets.
func (px *backend) callProc(ctx context.Context, proc *backendProc, method string, params json.RawMessage, result *json.RawMessage) error {
	px.mu.Lock()
	px.nextID++
	id := jsonrpc2.ID{Num: px.nextID}
	px.mu.Unlock()
	var p any
	if len(params) > 0 {
		p = params
	}
	w, err := proc.conn.DispatchCall(context.Background(), method, p, jsonrpc2.PickID(id))
	if err != nil {
		return fmt.Errorf("%s %s: %w", px.name, method, err)
	}
	err = w.Wait(ctx, result)
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		if nerr := proc.conn.Notify(context.Background(), "$/cancelRequest", map[string]any{"id": id}); nerr != nil {
			return fmt.Errorf("%s %s: cancel: %w", px.name, method, nerr)
		}
		gctx, cancel := context.WithTimeout(context.Background(), backendCancelGrace)
		defer cancel()
		if err = w.Wait(gctx, result); errors.Is(err, context.DeadlineExceeded) {
			err = &jsonrpc2.Error{Code: codeRequestCancelled, Message: "request cancelled"}
		}
	}
	if errors.Is(err, jsonrpc2.ErrClosed) {
		return &jsonrpc2.Error{Code: codeRequestFailed, Message: px.name + " exited during " + method + "; Hydra restarts it"}
	}
	return err
}

// current returns the live server, or nil while it is down.
func (px *backend) current() *backendProc {
	px.mu.Lock()
	defer px.mu.Unlock()
	return px.proc
}

// supervise waits for proc to end and, unless Hydra is closing, restarts the server with backoff
// until one runs again. The user is told once that it stopped.
func (px *backend) supervise(proc *backendProc) {
	defer px.wg.Done()
	backoff := backendBackoffMin
	for {
		select {
		case <-proc.exited:
		case <-px.done:
			return
		}
		px.mu.Lock()
		if px.closed {
			px.mu.Unlock()
			return
		}
		px.proc = nil
		px.opened = map[string]int{}
		tell := !px.told
		px.told = true
		px.mu.Unlock()
		proc.conn.Close()
		px.diags.clearBackend(px.s)
		why := "exited"
		if proc.exitErr != nil {
			why = proc.exitErr.Error()
		}
		px.s.logf("%s: %s (%s); restarting in %v", px.name, why, time.Since(proc.started).Round(time.Millisecond), backoff)
		if tell {
			px.s.showMessage(MessageWarning, "hydra: "+px.name+" stopped ("+why+"); Hydra keeps working and restarts it")
		}
		if time.Since(proc.started) > backendStableAfter {
			backoff = backendBackoffMin
		}
		for {
			select {
			case <-time.After(backoff):
			case <-px.done:
				return
			}
			backoff = min(2*backoff, backendBackoffMax)
			next, _, err := px.launch(context.Background())
			if err != nil {
				px.s.logf("%s: restart: %v; next try in %v", px.name, err, backoff)
				continue
			}
			if !px.goLive(next) {
				px.kill(next)
				return
			}
			px.s.logf("%s: restarted (pid %d)", px.name, next.cmd.Process.Pid)
			proc = next
			break
		}
	}
}

// goLive makes a restarted server the live one: initialized, then every open document of its
// language as Hydra has it now. Both locks are held so that no didChange slips between the copy
// and going live (notify drops changes the server already has, by version). False when closing.
func (px *backend) goLive(proc *backendProc) bool {
	px.mu.Lock()
	defer px.mu.Unlock()
	if px.closed {
		return false
	}
	notify := func(method string, params any) {
		if err := proc.conn.Notify(context.Background(), method, params); err != nil {
			px.s.logf("%s: %s: %v", px.name, method, err)
		}
	}
	notify("initialized", map[string]any{})
	px.s.mu.Lock()
	var opens []DidOpenTextDocumentParams
	for _, d := range px.s.docs {
		if !px.servesLanguage(d.lang, d.uri) {
			px.foreign[d.uri] = true
			continue
		}
		opens = append(opens, DidOpenTextDocumentParams{TextDocument: TextDocumentItem{
			URI: d.uri, LanguageID: d.lang, Version: d.version, Text: d.text}})
	}
	px.s.mu.Unlock()
	for _, o := range opens {
		notify("textDocument/didOpen", o)
		px.opened[o.TextDocument.URI] = o.TextDocument.Version
	}
	px.proc = proc
	return true
}

// kill ends proc now.
func (px *backend) kill(proc *backendProc) {
	_ = proc.cmd.Process.Kill()
	proc.conn.Close()
	<-proc.exited
}

// close ends the server: exit (after the shutdown forwarded before it), then a kill if it lingers.
// It returns when the process has been reaped. It runs when the client's shutdown has been
// forwarded, and again (a no-op then) when the server stops.
func (px *backend) close() {
	px.mu.Lock()
	if px.closed {
		px.mu.Unlock()
		return
	}
	px.closed = true
	proc := px.proc
	px.proc = nil
	px.mu.Unlock()
	px.markReady()
	close(px.done)
	if proc != nil {
		_ = proc.conn.Notify(context.Background(), "exit", nil)
		proc.stdin.Close()
		select {
		case <-proc.exited:
		case <-time.After(backendExitGrace):
			px.s.logf("%s: still running %v after exit; killing it", px.name, backendExitGrace)
			_ = proc.cmd.Process.Kill()
			<-proc.exited
		}
		proc.conn.Close()
	}
	px.wg.Wait()
}

// markReady lets the server's messages through to the client (after Hydra's initialize answer).
func (px *backend) markReady() { px.readyOnce.Do(func() { close(px.ready) }) }

// backendPipes is the server's stdout and (queued) stdin as one stream.
type backendPipes struct {
	io.Reader
	q *queueWriter
}

func (p backendPipes) Write(b []byte) (int, error) { return p.q.Write(b) }
func (p backendPipes) Close() error                { return p.q.Close() }

// queueWriter writes to a server's stdin from a goroutine of its own: a Write never blocks, so
// a busy or stuck server cannot stall the client's read loop that forwards its notifications.
type queueWriter struct {
	w io.WriteCloser

	mu     sync.Mutex
	cond   *sync.Cond
	buf    []byte
	closed bool
	err    error
}

func newQueueWriter(w io.WriteCloser) *queueWriter {
	q := &queueWriter{w: w}
	q.cond = sync.NewCond(&q.mu)
	go q.run()
	return q
}

// Write queues p.
func (q *queueWriter) Write(p []byte) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return 0, io.ErrClosedPipe
	}
	if q.err != nil {
		return 0, q.err
	}
	q.buf = append(q.buf, p...)
	q.cond.Signal()
	return len(p), nil
}

// Close closes the pipe once what is queued has been written.
func (q *queueWriter) Close() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Signal()
	return nil
}

func (q *queueWriter) run() {
	q.mu.Lock()
	for {
		for len(q.buf) == 0 && !q.closed {
			q.cond.Wait()
		}
		if len(q.buf) == 0 {
			q.mu.Unlock()
			_ = q.w.Close()
			return
		}
		b := q.buf
		q.buf = nil
		q.mu.Unlock()
		_, err := q.w.Write(b)
		q.mu.Lock()
		if err != nil && q.err == nil {
			q.err = fmt.Errorf("server stdin: %w", err)
		}
		if q.err != nil {
			q.buf = nil
		}
	}
}

// lineWriter passes a server's stderr to the server's log line by line.
type lineWriter struct {
	logf func(string)
	mu   sync.Mutex
	part []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.part = append(l.part, p...)
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimRight(string(l.part[:i]), "\r"); line != "" {
			l.logf(line)
		}
		l.part = l.part[i+1:]
	}
	return len(p), nil
}

// backendSpec says how one language's server runs behind Hydra (clangdSpec, typeScriptSpec).
type backendSpec struct {
	name       string
	lang       *lang.Language
	path       string
	args       []string
	initParams json.RawMessage
	// quiet: the user did not ask for this server by name (a default), so its absence is only
	// logged, not shown.
	quiet bool
}

// startBackends starts the language servers the client wants behind Hydra and answers
// initialize with their capabilities merged with Hydra's (mergeInitialize). A server that is
// off, missing or failing is left out, and the user is told why unless it was only a default;
// without any, the answer is Hydra's own.
func (s *Server) startBackends(ctx context.Context, raw json.RawMessage, p InitializeParams, own InitializeResult) any {
	cfg := s.cfg.get()
	var started []*backend
	var answers []json.RawMessage
	for _, wanted := range []func(Config, InitializeParams, json.RawMessage) (*backendSpec, error){s.clangdSpec, s.typeScriptSpec} {
		spec, err := wanted(cfg, p, raw)
		if spec == nil {
			continue // not wanted
		}
		tell := func(what string, err error) {
			s.logf("%s: %v", spec.name, err)
			if !spec.quiet {
				s.showMessage(MessageWarning, "hydra: "+spec.name+" "+what+" ("+err.Error()+"); Hydra works without it")
			}
		}
		if err != nil {
			tell("is not available", err)
			continue
		}
		px := &backend{s: s, name: spec.name, lang: spec.lang, path: spec.path, args: spec.args, initParams: spec.initParams,
			ready: make(chan struct{}), done: make(chan struct{}), opened: map[string]int{}, foreign: map[string]bool{},
			reverse: map[jsonrpc2.ID]jsonrpc2.ID{}, diags: diagMerger{hydra: map[string][]Diagnostic{}, backend: map[string][]json.RawMessage{}}}
		proc, res, err := px.launch(ctx)
		if err != nil {
			tell("did not start", err)
			continue
		}
		px.mu.Lock()
		px.proc = proc
		px.commands = commandsOf(res)
		px.pulls = hasCapability(res, "diagnosticProvider")
		px.pushFor = px.pulls && !clientPulls(raw)
		px.mu.Unlock()
		px.wg.Add(1)
		go px.supervise(proc)
		started = append(started, px)
		answers = append(answers, res)
		s.logf("%s: %s started (pid %d)", spec.name, spec.path, proc.cmd.Process.Pid)
	}
	s.mu.Lock()
	s.backends = started
	s.mu.Unlock()
	return mergeInitialize(own, answers...)
}

// backendInitParams rewrites the client's initialize params for a server behind Hydra: the one
// position encoding Hydra chose (so both count columns alike) and no processId (Hydra ends the
// server itself). It returns the params as a map for server-specific additions.
func backendInitParams(raw json.RawMessage, enc posEncoding) (map[string]any, error) {
	var p map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("initialize params: %w", err)
	}
	caps, _ := p["capabilities"].(map[string]any)
	if caps == nil {
		caps = map[string]any{}
		p["capabilities"] = caps
	}
	delete(caps, "offsetEncoding")
	general, _ := caps["general"].(map[string]any)
	if general == nil {
		general = map[string]any{}
		caps["general"] = general
	}
	general["positionEncodings"] = []string{enc.String()}
	p["processId"] = nil
	return p, nil
}

// serverWanted says whether the client wants a language's server behind Hydra: its setting, or
// by default for eglot (the client that runs one server per major mode).
func serverWanted(setting *bool, p InitializeParams) bool {
	if setting != nil {
		return *setting
	}
	return p.ClientInfo != nil && strings.EqualFold(p.ClientInfo.Name, "eglot")
}

// findServer resolves a server's program: the path setting (looked up on $PATH when it is a
// bare name), else the language's own (lang.Language.LanguageServer).
func findServer(setting string, l *lang.Language) (string, []string, error) {
	if setting != "" {
		p, err := exec.LookPath(setting)
		if err != nil {
			return "", nil, fmt.Errorf("%q: %w", setting, err)
		}
		return p, nil, nil
	}
	return l.LanguageServer()
}

// commandsOf returns the commands an initialize answer offers.
func commandsOf(res json.RawMessage) []string {
	var r struct {
		Capabilities struct {
			ExecuteCommandProvider struct {
				Commands []string `json:"commands"`
			} `json:"executeCommandProvider"`
		} `json:"capabilities"`
	}
	_ = json.Unmarshal(res, &r)
	return r.Capabilities.ExecuteCommandProvider.Commands
}

// servesLanguage says whether a document (its languageId, or without one its extension, as
// languageOf takes them) is of the server's language. The C/C++ server also takes documents
// of a language Hydra does not know, as clangd always did.
func (px *backend) servesLanguage(languageID, uri string) bool {
	l := lang.ForLanguageID(languageOf(languageID, uriPath(uri)))
	if px.lang == lang.C {
		return l == nil || l == lang.C
	}
	return l == px.lang
}

// serves says whether uri is a document of the server's language: as it was opened, or by its
// extension when it is not open.
func (px *backend) serves(uri string) bool {
	px.mu.Lock()
	foreign, open := px.foreign[uri]
	px.mu.Unlock()
	if open {
		return !foreign
	}
	return px.servesLanguage("", uri)
}

// allBackends returns the servers behind Hydra, in the order they started (none when off).
func (s *Server) allBackends() []*backend {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.backends
}

// backendOf returns the server of uri's language, or nil when none runs.
func (s *Server) backendOf(uri string) *backend {
	for _, px := range s.allBackends() {
		if px.serves(uri) {
			return px
		}
	}
	return nil
}

// backendFor returns the server a request goes to: the one of the document its params name,
// or, for a request about no document, the first one; nil when none runs or the document's
// language has none.
func (s *Server) backendFor(params json.RawMessage) *backend {
	var d syncDoc
	if json.Unmarshal(params, &d) != nil || d.TextDocument.URI == "" {
		if bs := s.allBackends(); len(bs) > 0 {
			return bs[0]
		}
		return nil
	}
	return s.backendOf(d.TextDocument.URI)
}

// backendForCommand returns the server that offers command, else the first one.
func (s *Server) backendForCommand(command string) *backend {
	bs := s.allBackends()
	for _, px := range bs {
		px.mu.Lock()
		ok := slices.Contains(px.commands, command)
		px.mu.Unlock()
		if ok {
			return px
		}
	}
	if len(bs) > 0 {
		return bs[0]
	}
	return nil
}
