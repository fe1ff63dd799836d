// Package lsp is Hydra's language server: it runs the engine on the C/C++ buffer being edited
// and streams only checker-accepted code into it, as a "Generate with repair" code action, the
// commands hydra.generate and hydra.cancel, and LSP 3.18 inline completion. Call New to create
// a server and Serve to run it on a stream (stdio for `hydra lsp`).
//
// One file per LSP feature, as gopls does: general.go (initialize, shutdown, exit),
// text_sync.go (the document store), code_action.go, command.go, generate.go (one generation
// and its streamed edits), edits.go (pure edit arithmetic), inline_completion.go, progress.go,
// config.go, compile_flags.go, warm.go (dormant preamble checkpoints), diagnostics.go,
// backend.go, clangd.go, tsserver.go and forward.go (language servers behind Hydra: the
// processes, and the forwarding both ways).
// stream.go and protocol.go are the transport and the wire types.
package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/lang"
	"github.com/hydra-lsp/hydra/engine"
	"github.com/hydra-lsp/hydra/engine/model"
)

// LSP error codes beyond JSON-RPC's.
const (
	codeServerNotInitialized = -32002
	codeRequestCancelled     = -32800
	codeContentModified      = -32801
	codeRequestFailed        = -32803
)

// SearchFunc runs one search; engine.Search in production.
type SearchFunc func(ctx context.Context, c checkers.Checker, g model.Generator, req engine.Request) (*engine.Result, error)

// Options are what a Server is built from. The engine, model client and checker are passed in
// so that the package stays a translation layer (clangd's ClangdLSPServer over ClangdServer).
type Options struct {
	// Checker runs every checker session of the server. The server owns it: it is closed
	// (ending all checker processes) when Serve returns.
	Checker checkers.Checker
	// Checkers are the checkers of the languages other than C/C++ (checkers/lang), by
	// language: documents of a language with none get no "Generate with repair". The server
	// owns them as it owns Checker.
	Checkers map[*lang.Language]checkers.Checker
	// Search runs a search (engine.Search).
	Search SearchFunc
	// NewGenerator makes the model client for a configuration (model.NewClient).
	NewGenerator func(cfg Config) (model.Generator, error)
	// Policy maps a configured policy name to a policy; nil or "" means the engine's default.
	Policy func(name string) (engine.Policy, error)
	// Getenv reads the environment fallbacks (HYDRA_MODEL_URL, …); nil means os.Getenv.
	Getenv func(string) string
	// Log receives the log lines that cannot reach the client as window/logMessage (before
	// initialize, after the connection ends, or when sending fails) and the JSON-RPC layer's
	// own errors; never stdout, which is the channel. nil = stderr.
	Log io.Writer
	// LogFile, when set, also receives every log line (hydra lsp --log FILE).
	LogFile io.Writer
	// Version is reported in serverInfo.
	Version string
	// WarmBytes bounds the private memory (/proc/PID/smaps_rollup) of the dormant preamble
	// checkpoints kept for the warm start, together; 0 means DefaultWarmBytes, a negative value
	// turns the warm start off.
	WarmBytes int64
	// ApplyEditTimeout bounds the wait for the client's answer to one workspace/applyEdit; a
	// generation whose edit is not answered in time stops (reason "edit_unanswered"). 0 means
	// 30 s.
	ApplyEditTimeout time.Duration
}

// DefaultWarmBytes is the warm start's default memory budget (Options.WarmBytes).
const DefaultWarmBytes = 512 << 20

// Server is one language server connection. Create it with New and run it with Serve.
type Server struct {
	opts   Options
	logger *log.Logger
	// fileLog writes to opts.LogFile (nil without one).
	fileLog *log.Logger
	// toClient is true from initialize until Serve ends: logf sends window/logMessage then.
	toClient atomic.Bool

	// conn is set by Serve before connReady is closed; Handle waits for that, because the
	// connection starts reading (and so calling Handle) inside jsonrpc2.NewConn.
	conn      *jsonrpc2.Conn
	connReady chan struct{}

	// mu guards the fields below it: the session state, the documents and the generations'
	// regions (a generation's edit tracking changes together with the document it edits, so
	// both live under one lock; handlers hold it only for in-memory work, never across a call
	// to the client).
	mu          sync.Mutex
	initialized bool
	shutdown    bool
	caps        ClientCapabilities
	enc         posEncoding
	cfg         *configStore
	docs        map[string]*document
	gens        map[int]*generation
	nextGen     int
	inflight    map[jsonrpc2.ID]context.CancelFunc
	// progress maps a work-done token to what window/workDoneProgress/cancel stops.
	progress  map[string]func()
	nextToken int

	// roots are the workspace's folders (rootUri and workspaceFolders), set by initialize:
	// a document's checker may read files under the root that holds it.
	roots []string

	flags *flagStore
	warm  *warmCache

	// backends are the language servers behind Hydra (backend.go, forward.go: clangd,
	// TypeScript's), set by initialize; none when off.
	backends []*backend

	// exited is closed when the client sends exit; exitOK says shutdown came first.
	exited   chan struct{}
	exitOnce sync.Once
	exitOK   bool

	// wg counts the goroutines of requests and generations, waited for before Serve returns.
	wg sync.WaitGroup
}

// New returns a server ready to Serve.
func New(opts Options) *Server {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	s := &Server{
		opts:      opts,
		logger:    log.New(opts.Log, "hydra lsp: ", log.Ltime|log.Lmicroseconds),
		docs:      map[string]*document{},
		gens:      map[int]*generation{},
		inflight:  map[jsonrpc2.ID]context.CancelFunc{},
		progress:  map[string]func(){},
		exited:    make(chan struct{}),
		connReady: make(chan struct{}),
		enc:       encUTF16,
	}
	if opts.LogFile != nil {
		s.fileLog = log.New(opts.LogFile, "hydra lsp: ", log.Ltime|log.Lmicroseconds)
	}
	s.cfg = newConfigStore(opts.Getenv)
	s.flags = newFlagStore(s.logf, s.flagsChanged)
	s.flags.tell = func(msg string) { s.showMessage(MessageWarning, "hydra: "+msg) }
	warmBytes := opts.WarmBytes
	if warmBytes == 0 {
		warmBytes = DefaultWarmBytes
	}
	if opts.Checker != nil && warmBytes > 0 {
		s.warm = newWarmCache(opts.Checker, warmBytes, s.logf)
	}
	return s
}

// ErrExitWithoutShutdown is Serve's error when the client sent exit before shutdown (the LSP
// asks for exit status 1 then).
var ErrExitWithoutShutdown = errors.New("exit without shutdown")

// Serve runs the server on rwc until the client sends exit, the stream ends or ctx is done.
// Before it returns every generation is stopped and every checker process has ended.
func (s *Server) Serve(ctx context.Context, rwc io.ReadWriteCloser) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := newStream(rwc, s.logf)
	s.conn = jsonrpc2.NewConn(ctx, st, s, jsonrpc2.SetLogger(s.logger))
	close(s.connReady)
	var err error
	select {
	case <-s.exited:
		if !s.exitOK {
			err = ErrExitWithoutShutdown
		}
	case <-s.conn.DisconnectNotify():
		err = errors.New("client went away")
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.toClient.Store(false)
	s.stopAll()
	for _, px := range s.allBackends() {
		px.close()
	}
	cancel()
	s.conn.Close()
	s.wg.Wait()
	s.flags.close()
	if s.warm != nil {
		s.warm.close()
	}
	if s.opts.Checker != nil {
		if cerr := s.opts.Checker.Close(); cerr != nil {
			s.logf("close checker: %v", cerr)
		}
	}
	for l, ck := range s.opts.Checkers {
		if cerr := ck.Close(); cerr != nil {
			s.logf("close %s checker: %v", l.Name, cerr)
		}
	}
	return err
}

// stopAll cancels every generation and request in flight.
func (s *Server) stopAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.gens {
		g.stopLocked(reasonCancelled)
	}
	for _, c := range s.inflight {
		c()
	}
}

// Logf logs one line of the server's work as logf does (for what runs beside it, such as the
// model client's waiting for a loading server).
func (s *Server) Logf(format string, args ...any) { s.logf(format, args...) }

// Warn logs msg and shows it to the user as a warning (window/showMessage).
func (s *Server) Warn(msg string) {
	s.logf("%s", msg)
	s.showMessage(MessageWarning, msg)
}

// logf logs one line of the server's work at its own level: to the client as window/logMessage
// of type Info once initialized (VS Code's output channel shows it as [info], not as stderr's
// [error]), else, or when that fails, to Options.Log; and to Options.LogFile when set.
func (s *Server) logf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if s.fileLog != nil {
		s.fileLog.Print(msg)
	}
	if s.toClient.Load() {
		if err := s.conn.Notify(context.Background(), "window/logMessage", ShowMessageParams{Type: MessageInfo, Message: msg}); err == nil {
			return
		}
	}
	if s.fileLog == nil {
		s.logger.Print(msg)
	}
}

func (s *Server) applyEditTimeout() time.Duration {
	if s.opts.ApplyEditTimeout > 0 {
		return s.opts.ApplyEditTimeout
	}
	return defaultApplyEditTimeout
}

// requestHandler handles one request; the result is marshalled into the response.
type requestHandler func(ctx context.Context, params json.RawMessage) (any, error)

// notificationHandler handles one notification, in order, on the connection's read loop: it
// must not wait for the client.
type notificationHandler func(ctx context.Context, params json.RawMessage) error

func (s *Server) requests() map[string]requestHandler {
	return map[string]requestHandler{
		"initialize":                    s.initialize,
		"shutdown":                      s.shutdownRequest,
		"textDocument/codeAction":       s.codeAction,
		"workspace/executeCommand":      s.executeCommand,
		"textDocument/inlineCompletion": s.inlineCompletion,
	}
}

func (s *Server) notifications() map[string]notificationHandler {
	return map[string]notificationHandler{
		"initialized":                      s.initializedNotification,
		"exit":                             s.exitNotification,
		"textDocument/didOpen":             s.didOpen,
		"textDocument/didChange":           s.didChange,
		"textDocument/didClose":            s.didClose,
		"textDocument/didSave":             ignoreNotification,
		"workspace/didChangeConfiguration": s.didChangeConfiguration,
		"workspace/didChangeWatchedFiles":  ignoreNotification,
		"$/cancelRequest":                  s.cancelRequest,
		"window/workDoneProgress/cancel":   s.workDoneProgressCancel,
		"$/setTrace":                       ignoreNotification,
	}
}

func ignoreNotification(context.Context, json.RawMessage) error { return nil }

// syncRequests run on the read loop: they are quick and order matters (initialize, shutdown).
var syncRequests = map[string]bool{"initialize": true, "shutdown": true}

// Handle implements jsonrpc2.Handler. Notifications run in order on the read loop; requests
// other than initialize and shutdown run on their own goroutines, with a context that
// $/cancelRequest cancels.
func (s *Server) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	<-s.connReady
	var params json.RawMessage
	if req.Params != nil {
		params = *req.Params
	}
	if req.Notif {
		h, ok := s.notifications()[req.Method]
		s.mu.Lock()
		ready := s.initialized || req.Method == "exit"
		s.mu.Unlock()
		if !ready {
			s.logf("ignoring %s before initialize", req.Method)
			return
		}
		if !ok && len(s.allBackends()) == 0 {
			s.logf("ignoring notification %s", req.Method)
			return
		}
		if ok {
			if err := safeNotify(ctx, h, params); err != nil {
				s.logf("%s: %v", req.Method, err)
			}
		}
		s.forwardNotification(req.Method, params)
		return
	}
	h, ok := s.requestHandler(req.Method)
	if !ok {
		s.replyErr(ctx, req.ID, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "method not found: " + req.Method})
		return
	}
	s.mu.Lock()
	initialized, shutdown := s.initialized, s.shutdown
	s.mu.Unlock()
	switch {
	case !initialized && req.Method != "initialize":
		s.replyErr(ctx, req.ID, &jsonrpc2.Error{Code: codeServerNotInitialized, Message: req.Method + " before initialize"})
		return
	case shutdown:
		s.replyErr(ctx, req.ID, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidRequest, Message: req.Method + " after shutdown"})
		return
	}
	if syncRequests[req.Method] {
		s.reply(ctx, req, h, params)
		return
	}
	rctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	s.inflight[req.ID] = cancel
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() {
			s.mu.Lock()
			delete(s.inflight, req.ID)
			s.mu.Unlock()
			cancel()
		}()
		s.reply(rctx, req, h, params)
	}()
}

// reply runs h and sends its result or error.
func (s *Server) reply(ctx context.Context, req *jsonrpc2.Request, h requestHandler, params json.RawMessage) {
	result, err := safeRequest(ctx, h, params)
	if err != nil {
		s.replyErr(ctx, req.ID, toRPCError(ctx, err))
		return
	}
	if err := s.conn.Reply(context.Background(), req.ID, result); err != nil {
		s.logf("reply to %s: %v", req.Method, err)
	}
}

func (s *Server) replyErr(_ context.Context, id jsonrpc2.ID, e *jsonrpc2.Error) {
	if err := s.conn.ReplyWithError(context.Background(), id, e); err != nil {
		s.logf("reply error to %s: %v", id, err)
	}
}

// toRPCError maps a handler's error to a response error: cancellation is RequestCancelled,
// a *jsonrpc2.Error passes through, anything else is RequestFailed with the error's text.
func toRPCError(ctx context.Context, err error) *jsonrpc2.Error {
	var rpcErr *jsonrpc2.Error
	switch {
	case errors.As(err, &rpcErr):
		return rpcErr
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		return &jsonrpc2.Error{Code: codeRequestCancelled, Message: "request cancelled"}
	default:
		return &jsonrpc2.Error{Code: codeRequestFailed, Message: err.Error()}
	}
}

// invalidParams is the error for parameters that do not decode.
func invalidParams(method string, err error) error {
	return &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: fmt.Sprintf("%s: invalid params: %v", method, err)}
}

// decodeParams decodes params into v, or returns an InvalidParams error.
func decodeParams(method string, params json.RawMessage, v any) error {
	if len(params) == 0 {
		return invalidParams(method, errors.New("missing params"))
	}
	if err := json.Unmarshal(params, v); err != nil {
		return invalidParams(method, err)
	}
	return nil
}

func safeRequest(ctx context.Context, h requestHandler, params json.RawMessage) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v\n%s", r, debug.Stack())
		}
	}()
	return h(ctx, params)
}

func safeNotify(ctx context.Context, h notificationHandler, params json.RawMessage) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v\n%s", r, debug.Stack())
		}
	}()
	return h(ctx, params)
}

// notify sends a notification to the client, logging a failure. Hydra's diagnostics go
// through publishDiagnostics (merged with clangd's when it runs behind Hydra).
func (s *Server) notify(method string, params any) {
	if p, ok := params.(PublishDiagnosticsParams); ok && method == "textDocument/publishDiagnostics" {
		s.publishDiagnostics(p)
		return
	}
	if err := s.conn.Notify(context.Background(), method, params); err != nil {
		s.logger.Printf("notify %s: %v", method, err) // not logf: the channel is what failed
	}
}

// cancelRequest handles $/cancelRequest: it cancels the context of the request in flight.
func (s *Server) cancelRequest(_ context.Context, params json.RawMessage) error {
	var p CancelParams
	if err := decodeParams("$/cancelRequest", params, &p); err != nil {
		return err
	}
	var id jsonrpc2.ID
	if err := json.Unmarshal(p.ID, &id); err != nil {
		return fmt.Errorf("$/cancelRequest: bad id %s: %w", p.ID, err)
	}
	s.mu.Lock()
	cancel := s.inflight[id]
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return nil
}
