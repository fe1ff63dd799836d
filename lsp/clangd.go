package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// Hydra in front of clangd. Editors that run one server per language (eglot) get Hydra or
// clangd, not both; with the `clangd` setting on, `hydra lsp` starts clangd as its child and is
// the client's only server: what Hydra does not handle is forwarded to clangd (forward.go), and
// clangd's messages to the client pass back through Hydra. This file is the clangd process:
// finding it, starting it, its initialize handshake, and restarting it with backoff when it
// dies. Compile flags need nothing: Hydra finds compile_commands.json and compile_flags.txt as
// clangd does (compile_flags.go), so both read the same database.

// Backoff of clangd restarts: the first restart waits clangdBackoffMin, each crash of a clangd
// that ran less than clangdStableAfter doubles the wait, up to clangdBackoffMax.
const (
	clangdBackoffMin  = 200 * time.Millisecond
	clangdBackoffMax  = 30 * time.Second
	clangdStableAfter = time.Minute
	// clangdInitTimeout bounds clangd's answer to initialize (it answers at once).
	clangdInitTimeout = 20 * time.Second
	// clangdExitGrace is how long clangd may take to answer shutdown, and to exit after exit,
	// before it is killed. clangd-19 answers shutdown at once but does not exit while it is
	// indexing the standard library, which it starts for every newly opened file (10–12 s
	// measured for <cstdio>); killing it then loses nothing, and editors give the whole
	// shutdown 1.5 s (eglot) or less.
	clangdExitGrace = 200 * time.Millisecond
	// clangdCancelGrace is how long a cancelled request waits for clangd's answer.
	clangdCancelGrace = 10 * time.Second
)

// findClangd resolves the clangd binary: the clangdPath setting, else clangd-19, then clangd,
// on $PATH.
func findClangd(setting string) (string, error) {
	if setting != "" {
		p, err := exec.LookPath(setting)
		if err != nil {
			return "", fmt.Errorf("clangdPath %q: %w", setting, err)
		}
		return p, nil
	}
	for _, name := range []string{"clangd-19", "clangd"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("neither clangd-19 nor clangd is on $PATH (set clangdPath)")
}

// clangdWanted says whether the client wants clangd behind Hydra: the `clangd` setting, or by
// default for eglot (the client that runs one server per major mode).
func clangdWanted(cfg Config, p InitializeParams) bool {
	if cfg.Clangd != nil {
		return *cfg.Clangd
	}
	return p.ClientInfo != nil && strings.EqualFold(p.ClientInfo.Name, "eglot")
}

// clangdProc is one running clangd.
type clangdProc struct {
	cmd     *exec.Cmd
	conn    *jsonrpc2.Conn
	stdin   *queueWriter
	exited  chan struct{} // closed when the process has been waited for
	exitErr error
	started time.Time
}

// clangdProxy owns clangd for one server: the live process (nil while it is down), what it was
// told, and the requests between it and the client.
type clangdProxy struct {
	s    *Server
	path string
	args []string
	// initParams are the client's initialize params as clangd gets them (see clangdInitParams).
	initParams json.RawMessage
	// ready is closed once the client has Hydra's initialize answer (it sent initialized):
	// clangd's messages to the client wait for it.
	ready     chan struct{}
	readyOnce sync.Once
	done      chan struct{} // closed by close
	wg        sync.WaitGroup

	// mu guards the fields below. It is taken before s.mu, never after.
	mu     sync.Mutex
	proc   *clangdProc    // the live clangd, nil while down
	opened map[string]int // document URI → the version clangd has
	// foreign are the open documents of another language than C/C++ (checkers/lang:
	// TypeScript): clangd never sees them (notify, forward.go).
	foreign map[string]bool
	nextID  uint64 // ids of Hydra's requests to clangd
	closed  bool
	told    bool // the user was told that clangd stopped
	// reverse maps the id of a clangd→client request to the id it has towards the client.
	reverse map[jsonrpc2.ID]jsonrpc2.ID
	nextRev uint64

	diags diagMerger
}

// startClangd runs clangd for the server when the client wants it and answers initialize with
// the capabilities merged. Without clangd (off, missing, failing) the answer is Hydra's own.
func (s *Server) startClangd(ctx context.Context, raw json.RawMessage, p InitializeParams, own InitializeResult) any {
	cfg := s.cfg.get()
	if !clangdWanted(cfg, p) {
		return own
	}
	path, err := findClangd(cfg.ClangdPath)
	if err != nil {
		s.logf("clangd: %v", err)
		s.showMessage(MessageWarning, "hydra: clangd is not available ("+err.Error()+"); Hydra works without it")
		return own
	}
	initParams, err := clangdInitParams(raw, s.enc, cfg.ClangFlags)
	if err != nil {
		s.logf("clangd: %v", err)
		return own
	}
	px := &clangdProxy{s: s, path: path, args: clangdArgs(cfg.ClangdArgs), initParams: initParams,
		ready: make(chan struct{}), done: make(chan struct{}), opened: map[string]int{}, foreign: map[string]bool{},
		reverse: map[jsonrpc2.ID]jsonrpc2.ID{}, diags: diagMerger{hydra: map[string][]Diagnostic{}, clangd: map[string][]json.RawMessage{}}}
	proc, res, err := px.launch(ctx)
	if err != nil {
		s.logf("clangd: %v", err)
		s.showMessage(MessageWarning, "hydra: clangd did not start ("+err.Error()+"); Hydra works without it")
		return own
	}
	px.mu.Lock()
	px.proc = proc
	px.mu.Unlock()
	px.wg.Add(1)
	go px.supervise(proc)
	s.mu.Lock()
	s.clangd = px
	s.mu.Unlock()
	s.logf("clangd: %s started (pid %d)", path, proc.cmd.Process.Pid)
	return mergeInitialize(own, res)
}

// clangdArgs are the arguments clangd runs with: quiet logs unless the user chose a level.
func clangdArgs(user []string) []string {
	for _, a := range user {
		if strings.HasPrefix(a, "--log") || strings.HasPrefix(a, "-log") {
			return user
		}
	}
	return append([]string{"--log=error"}, user...)
}

// clangdInitParams rewrites the client's initialize params for clangd: the one position
// encoding Hydra chose (clangd takes the first one it supports, ClangdLSPServer::onInitialize,
// so both count columns alike), no processId (Hydra ends clangd itself), and Hydra's clangFlags
// as clangd's fallbackFlags for files no compilation database covers.
func clangdInitParams(raw json.RawMessage, enc posEncoding, clangFlags []string) (json.RawMessage, error) {
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
	if len(clangFlags) > 0 {
		opts, _ := p["initializationOptions"].(map[string]any)
		if opts == nil {
			opts = map[string]any{}
			p["initializationOptions"] = opts
		}
		if _, ok := opts["fallbackFlags"]; !ok {
			opts["fallbackFlags"] = clangFlags
		}
	}
	return json.Marshal(p)
}

// launch starts clangd and makes the initialize handshake; it returns clangd's answer.
func (px *clangdProxy) launch(ctx context.Context) (*clangdProc, json.RawMessage, error) {
	cmd := exec.Command(px.path, px.args...)
	cmd.Stderr = &lineWriter{logf: func(line string) { px.s.logf("clangd: %s", line) }}
	// Its own process group (a terminal's ^C goes to Hydra, which ends it) and killed with
	// Hydra, as the checker's processes are.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", px.path, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", px.path, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", px.path, err)
	}
	proc := &clangdProc{cmd: cmd, stdin: newQueueWriter(stdin), exited: make(chan struct{}), started: time.Now()}
	go func() {
		proc.exitErr = cmd.Wait()
		close(proc.exited)
	}()
	st := newStream(clangdPipes{Reader: stdout, q: proc.stdin}, px.s.logf)
	proc.conn = jsonrpc2.NewConn(context.Background(), st, &clangdHandler{px: px, proc: proc}, jsonrpc2.SetLogger(px.s.logger))
	ictx, cancel := context.WithTimeout(ctx, clangdInitTimeout)
	defer cancel()
	var res json.RawMessage
	err = px.callProc(ictx, proc, "initialize", px.initParams, &res)
	if err != nil {
		px.kill(proc)
		return nil, nil, fmt.Errorf("clangd initialize: %w", err)
	}
	return proc, res, nil
}

// callProc sends one request to proc under an id of Hydra's and waits for the answer. When ctx
// ends first, clangd gets $/cancelRequest for that id and its answer (usually RequestCancelled)
// is still awaited, briefly, so that it is what the client gets.
func (px *clangdProxy) callProc(ctx context.Context, proc *clangdProc, method string, params json.RawMessage, result *json.RawMessage) error {
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
		return fmt.Errorf("clangd %s: %w", method, err)
	}
	err = w.Wait(ctx, result)
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		if nerr := proc.conn.Notify(context.Background(), "$/cancelRequest", map[string]any{"id": id}); nerr != nil {
			return fmt.Errorf("clangd %s: cancel: %w", method, nerr)
		}
		gctx, cancel := context.WithTimeout(context.Background(), clangdCancelGrace)
		defer cancel()
		if err = w.Wait(gctx, result); errors.Is(err, context.DeadlineExceeded) {
			err = &jsonrpc2.Error{Code: codeRequestCancelled, Message: "request cancelled"}
		}
	}
	if errors.Is(err, jsonrpc2.ErrClosed) {
		return &jsonrpc2.Error{Code: codeRequestFailed, Message: "clangd exited during " + method + "; Hydra restarts it"}
	}
	return err
}

// current returns the live clangd, or nil while it is down.
func (px *clangdProxy) current() *clangdProc {
	px.mu.Lock()
	defer px.mu.Unlock()
	return px.proc
}

// supervise waits for proc to end and, unless Hydra is closing, restarts clangd with backoff
// until one runs again. The user is told once that clangd stopped.
func (px *clangdProxy) supervise(proc *clangdProc) {
	defer px.wg.Done()
	backoff := clangdBackoffMin
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
		px.diags.clearClangd(px.s)
		why := "exited"
		if proc.exitErr != nil {
			why = proc.exitErr.Error()
		}
		px.s.logf("clangd: %s (%s); restarting in %v", why, time.Since(proc.started).Round(time.Millisecond), backoff)
		if tell {
			px.s.showMessage(MessageWarning, "hydra: clangd stopped ("+why+"); Hydra keeps working and restarts it")
		}
		if time.Since(proc.started) > clangdStableAfter {
			backoff = clangdBackoffMin
		}
		for {
			select {
			case <-time.After(backoff):
			case <-px.done:
				return
			}
			backoff = min(2*backoff, clangdBackoffMax)
			next, _, err := px.launch(context.Background())
			if err != nil {
				px.s.logf("clangd: restart: %v; next try in %v", err, backoff)
				continue
			}
			if !px.goLive(next) {
				px.kill(next)
				return
			}
			px.s.logf("clangd: restarted (pid %d)", next.cmd.Process.Pid)
			proc = next
			break
		}
	}
}

// goLive makes a restarted clangd the live one: initialized, then every open document as the
// server has it now. Both locks are held so that no didChange slips between the copy and
// going live (notify drops changes clangd already has, by version). False when closing.
func (px *clangdProxy) goLive(proc *clangdProc) bool {
	px.mu.Lock()
	defer px.mu.Unlock()
	if px.closed {
		return false
	}
	notify := func(method string, params any) {
		if err := proc.conn.Notify(context.Background(), method, params); err != nil {
			px.s.logf("clangd: %s: %v", method, err)
		}
	}
	notify("initialized", map[string]any{})
	px.s.mu.Lock()
	var opens []DidOpenTextDocumentParams
	for _, d := range px.s.docs {
		if foreignLanguage(d.lang, d.uri) {
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
func (px *clangdProxy) kill(proc *clangdProc) {
	_ = proc.cmd.Process.Kill()
	proc.conn.Close()
	<-proc.exited
}

// close ends clangd: exit (after the shutdown forwarded before it), then a kill if it lingers.
// It returns when the process has been reaped. It runs when the client's shutdown has been
// forwarded, and again (a no-op then) when the server stops.
func (px *clangdProxy) close() {
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
		case <-time.After(clangdExitGrace):
			px.s.logf("clangd: still running %v after exit; killing it", clangdExitGrace)
			_ = proc.cmd.Process.Kill()
			<-proc.exited
		}
		proc.conn.Close()
	}
	px.wg.Wait()
}

// markReady lets clangd's messages through to the client (after Hydra's initialize answer).
func (px *clangdProxy) markReady() { px.readyOnce.Do(func() { close(px.ready) }) }

// clangdPipes is clangd's stdout and (queued) stdin as one stream.
type clangdPipes struct {
	io.Reader
	q *queueWriter
}

func (p clangdPipes) Write(b []byte) (int, error) { return p.q.Write(b) }
func (p clangdPipes) Close() error                { return p.q.Close() }

// queueWriter writes to clangd's stdin from a goroutine of its own: a Write never blocks, so a
// busy or stuck clangd cannot stall the client's read loop that forwards its notifications.
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
			q.err = fmt.Errorf("clangd stdin: %w", err)
		}
		if q.err != nil {
			q.buf = nil
		}
	}
}

// lineWriter passes clangd's stderr to the server's log line by line.
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
