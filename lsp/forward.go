package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/hydra-lsp/hydra/checkers/lang"
)

// The forwarding between the client and clangd (clangd.go starts it):
//
//   - client → clangd: requests Hydra does not handle go to clangd under ids of Hydra's
//     (callProc); the client's $/cancelRequest cancels the request's context, which sends
//     clangd $/cancelRequest with clangd's id. codeAction asks both and joins the answers;
//     executeCommand goes to whichever owns the command; shutdown goes to both, and clangd
//     is ended before the answer. Text sync and the other notifications go to both, Hydra
//     first.
//   - clangd → client: notifications pass through, publishDiagnostics merged with Hydra's;
//     requests (workDoneProgress/create, applyEdit, configuration, registerCapability, …) go to
//     the client under string ids "clangd-N", clangd's $/cancelRequest mapped to them.
//   - a document of another language than C/C++ (TypeScript, checkers/lang) is not clangd's:
//     its text sync is not forwarded, a request on it that Hydra does not handle is answered
//     null, and its code actions are Hydra's alone.

// requestHandler returns the handler of a client request: Hydra's own, joined with clangd's,
// or forwarded to clangd.
func (s *Server) requestHandler(method string) (requestHandler, bool) {
	h, ok := s.requests()[method]
	px := s.clangdProxy()
	if px == nil {
		return h, ok
	}
	switch method {
	case "initialize":
		return h, ok
	case "shutdown":
		return func(ctx context.Context, params json.RawMessage) (any, error) {
			res, err := h(ctx, params)
			sctx, cancel := context.WithTimeout(ctx, clangdExitGrace)
			defer cancel()
			if _, cerr := px.call(sctx, method, params); cerr != nil {
				s.logf("clangd shutdown: %v", cerr)
			}
			// clangd ends now, before the answer: a client may kill the server as soon as it
			// has sent exit (eglot does), so exit must find nothing left to wait for.
			px.close()
			return res, err
		}, true
	case "textDocument/codeAction":
		return func(ctx context.Context, params json.RawMessage) (any, error) {
			if px.isForeign(params) {
				return h(ctx, params)
			}
			return px.codeAction(ctx, h, params)
		}, true
	case "workspace/executeCommand":
		return func(ctx context.Context, params json.RawMessage) (any, error) {
			var p ExecuteCommandParams
			if err := decodeParams(method, params, &p); err != nil {
				return nil, err
			}
			if strings.HasPrefix(p.Command, "hydra.") {
				return h(ctx, params)
			}
			return px.call(ctx, method, params)
		}, true
	}
	if ok {
		return h, true
	}
	return func(ctx context.Context, params json.RawMessage) (any, error) {
		if px.isForeign(params) {
			return nil, nil
		}
		return px.call(ctx, method, params)
	}, true
}

// foreignLanguage says whether a document (its languageId, or without one its extension, as
// languageOf takes them) is of another language than C/C++ that Hydra serves: not clangd's.
func foreignLanguage(languageID, uri string) bool {
	l := lang.ForLanguageID(languageOf(languageID, uriPath(uri)))
	return l != nil && l != lang.C
}

// isForeign says whether a request's params name a document clangd does not see (foreign).
func (px *clangdProxy) isForeign(params json.RawMessage) bool {
	var d syncDoc
	if json.Unmarshal(params, &d) != nil || d.TextDocument.URI == "" {
		return false
	}
	px.mu.Lock()
	defer px.mu.Unlock()
	return px.foreign[d.TextDocument.URI]
}

// clangdProxy returns the clangd front, or nil when clangd is off.
func (s *Server) clangdProxy() *clangdProxy {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clangd
}

// forwardNotification sends a client notification on to clangd (after Hydra handled it, when
// it does). initialized also lets clangd's messages through to the client.
func (s *Server) forwardNotification(method string, params json.RawMessage) {
	px := s.clangdProxy()
	if px == nil {
		return
	}
	switch method {
	case "exit", "$/cancelRequest":
		return // exit: close does it; cancel: the request's context does it, with clangd's id
	case "initialized":
		px.markReady()
	}
	px.notify(method, params)
}

// call forwards one request to the live clangd; while clangd is down it fails at once.
func (px *clangdProxy) call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	proc := px.current()
	if proc == nil {
		return nil, &jsonrpc2.Error{Code: codeRequestFailed, Message: "clangd is not running (Hydra is restarting it)"}
	}
	var res json.RawMessage
	if err := px.callProc(ctx, proc, method, params, &res); err != nil {
		return nil, err
	}
	if len(res) == 0 {
		res = json.RawMessage("null")
	}
	return res, nil
}

// syncDoc is the part of a text sync notification that decides whether clangd needs it.
type syncDoc struct {
	TextDocument struct {
		URI        string `json:"uri"`
		Version    int    `json:"version"`
		LanguageID string `json:"languageId"`
	} `json:"textDocument"`
}

// notify forwards a notification to the live clangd (dropped while it is down: the restart
// opens the documents as they are then). A didOpen or didChange whose version clangd already
// has, from a restart's copy of the document, is not sent again.
func (px *clangdProxy) notify(method string, params json.RawMessage) {
	px.mu.Lock()
	defer px.mu.Unlock()
	var d syncDoc
	switch method {
	case "textDocument/didOpen", "textDocument/didChange", "textDocument/didClose":
		if err := json.Unmarshal(params, &d); err != nil {
			return // Hydra's handler has logged it
		}
		uri := d.TextDocument.URI
		if method == "textDocument/didOpen" {
			px.foreign[uri] = foreignLanguage(d.TextDocument.LanguageID, uri)
		}
		if px.foreign[uri] {
			if method == "textDocument/didClose" {
				delete(px.foreign, uri)
			}
			return
		}
	}
	if px.proc == nil {
		return
	}
	switch method {
	case "textDocument/didOpen", "textDocument/didChange", "textDocument/didClose":
		uri, v := d.TextDocument.URI, d.TextDocument.Version
		have, open := px.opened[uri]
		switch {
		case method == "textDocument/didClose":
			delete(px.opened, uri)
		case method == "textDocument/didChange" && open && v <= have:
			return
		case method == "textDocument/didOpen" && open && v == have:
			return
		default:
			px.opened[uri] = v
		}
	}
	var p any
	if len(params) > 0 {
		p = params
	}
	if err := px.proc.conn.Notify(context.Background(), method, p); err != nil {
		px.s.logf("clangd: %s: %v", method, err)
	}
}

// codeAction joins clangd's code actions and Hydra's (clangd's first). Without an answer from
// clangd, Hydra's alone.
func (px *clangdProxy) codeAction(ctx context.Context, own requestHandler, params json.RawMessage) (any, error) {
	type answer struct {
		res json.RawMessage
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		res, err := px.call(ctx, "textDocument/codeAction", params)
		ch <- answer{res, err}
	}()
	mine, err := own(ctx, params)
	if err != nil {
		return nil, err
	}
	theirs := <-ch
	var out []json.RawMessage
	if theirs.err != nil {
		px.s.logf("clangd codeAction: %v", theirs.err)
	} else if err := json.Unmarshal(theirs.res, &out); err != nil && string(theirs.res) != "null" {
		px.s.logf("clangd codeAction: unexpected answer: %v", err)
	}
	b, err := json.Marshal(mine)
	if err != nil {
		return nil, fmt.Errorf("codeAction: %w", err)
	}
	var ours []json.RawMessage
	if err := json.Unmarshal(b, &ours); err != nil {
		return nil, fmt.Errorf("codeAction: %w", err)
	}
	return append(append([]json.RawMessage{}, out...), ours...), nil
}

// mergeInitialize joins clangd's initialize answer with Hydra's: clangd's capabilities, with
// Hydra's added (its code action kind and commands joined to clangd's, its inline completion);
// serverInfo says both.
func mergeInitialize(own InitializeResult, clangdRes json.RawMessage) any {
	var theirs struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
		ServerInfo   ServerInfo                 `json:"serverInfo"`
	}
	if err := json.Unmarshal(clangdRes, &theirs); err != nil || theirs.Capabilities == nil {
		return own
	}
	b, _ := json.Marshal(own.Capabilities)
	var ours map[string]json.RawMessage
	_ = json.Unmarshal(b, &ours)
	caps := theirs.Capabilities
	for k, v := range ours {
		switch k {
		case "codeActionProvider":
			var opts CodeActionOptions
			_ = json.Unmarshal(caps[k], &opts) // `true` when the client has no literal support
			if len(opts.CodeActionKinds) == 0 {
				opts.CodeActionKinds = []string{"quickfix", "refactor", "info"}
			}
			opts.CodeActionKinds = append(opts.CodeActionKinds, own.Capabilities.CodeActionProvider.CodeActionKinds...)
			caps[k] = mustMarshal(opts)
		case "executeCommandProvider":
			var opts ExecuteCommandOptions
			_ = json.Unmarshal(caps[k], &opts)
			opts.Commands = append(opts.Commands, own.Capabilities.ExecuteCommandProvider.Commands...)
			opts.WorkDoneProgress = true
			caps[k] = mustMarshal(opts)
		case "textDocumentSync":
			if _, ok := caps[k]; !ok {
				caps[k] = v
			}
		default:
			caps[k] = v
		}
	}
	info := own.ServerInfo
	if theirs.ServerInfo.Name != "" {
		info.Version = strings.TrimSpace(info.Version + " (with " + theirs.ServerInfo.Name + " " + theirs.ServerInfo.Version + ")")
	}
	return struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
		ServerInfo   ServerInfo                 `json:"serverInfo"`
	}{caps, info}
}

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// clangdHandler handles what clangd sends: notifications in order on its read loop, requests
// on goroutines of their own.
type clangdHandler struct {
	px   *clangdProxy
	proc *clangdProc
}

// Handle implements jsonrpc2.Handler.
func (h *clangdHandler) Handle(_ context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	px := h.px
	var params json.RawMessage
	if req.Params != nil {
		params = *req.Params
	}
	if req.Notif {
		select {
		case <-px.ready:
		case <-h.proc.exited:
			return
		}
		switch req.Method {
		case "textDocument/publishDiagnostics":
			px.diags.fromClangd(px.s, params)
		case "$/cancelRequest":
			px.cancelReverse(params)
		case "$/progress":
			px.s.notify(req.Method, labelClangdProgress(params))
		default:
			px.s.notify(req.Method, params)
		}
		return
	}
	px.wg.Add(1)
	go func() {
		defer px.wg.Done()
		px.reverseCall(conn, h.proc, req, params)
	}()
}

// reverseCall passes one clangd→client request to the client under an id of its own and
// clangd the answer.
func (px *clangdProxy) reverseCall(conn *jsonrpc2.Conn, proc *clangdProc, req *jsonrpc2.Request, params json.RawMessage) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-proc.exited:
		case <-px.done:
		case <-ctx.Done():
		}
		cancel()
	}()
	select {
	case <-px.ready:
	case <-ctx.Done():
		return
	}
	px.mu.Lock()
	px.nextRev++
	id := jsonrpc2.ID{Str: fmt.Sprintf("clangd-%d", px.nextRev), IsString: true}
	px.reverse[req.ID] = id
	px.mu.Unlock()
	defer func() {
		px.mu.Lock()
		delete(px.reverse, req.ID)
		px.mu.Unlock()
	}()
	var p any
	if len(params) > 0 {
		p = params
	}
	var res json.RawMessage
	err := px.s.conn.Call(ctx, req.Method, p, &res, jsonrpc2.PickID(id))
	if ctx.Err() != nil {
		return // clangd is gone or Hydra is closing
	}
	if err != nil {
		rpcErr, ok := err.(*jsonrpc2.Error)
		if !ok {
			rpcErr = &jsonrpc2.Error{Code: codeRequestFailed, Message: err.Error()}
		}
		_ = conn.ReplyWithError(context.Background(), req.ID, rpcErr)
		return
	}
	if len(res) == 0 {
		res = json.RawMessage("null")
	}
	_ = conn.Reply(context.Background(), req.ID, res)
}

// cancelReverse passes clangd's $/cancelRequest on to the client with the client's id.
func (px *clangdProxy) cancelReverse(params json.RawMessage) {
	var p struct {
		ID jsonrpc2.ID `json:"id"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return
	}
	px.mu.Lock()
	id, ok := px.reverse[p.ID]
	px.mu.Unlock()
	if ok {
		px.s.notify("$/cancelRequest", map[string]any{"id": id})
	}
}

// diagMerger keeps each document's diagnostics from both sources and publishes their union:
// Hydra's keep their source "hydra", clangd's pass as clangd sent them.
type diagMerger struct {
	// mu also orders the publications, so the client's last one is the newest union.
	mu     sync.Mutex
	hydra  map[string][]Diagnostic
	clangd map[string][]json.RawMessage
}

// mergedDiagnostics are publishDiagnostics's parameters with the diagnostics as JSON.
type mergedDiagnostics struct {
	URI         string            `json:"uri"`
	Version     *int              `json:"version,omitempty"`
	Diagnostics []json.RawMessage `json:"diagnostics"`
}

// publishLocked sends uri's union.
func (m *diagMerger) publishLocked(s *Server, uri string, version *int) {
	out := append([]json.RawMessage{}, m.clangd[uri]...)
	for _, d := range m.hydra[uri] {
		out = append(out, mustMarshal(d))
	}
	if err := s.conn.Notify(context.Background(), "textDocument/publishDiagnostics", mergedDiagnostics{URI: uri, Version: version, Diagnostics: out}); err != nil {
		s.logf("notify publishDiagnostics: %v", err)
	}
}

// fromHydra records and publishes Hydra's diagnostics of a document.
func (m *diagMerger) fromHydra(s *Server, p PublishDiagnosticsParams) {
	m.mu.Lock()
	defer m.mu.Unlock()
	setDiags(m.hydra, p.URI, p.Diagnostics)
	m.publishLocked(s, p.URI, p.Version)
}

// fromClangd records and publishes clangd's diagnostics of a document.
func (m *diagMerger) fromClangd(s *Server, params json.RawMessage) {
	var p mergedDiagnostics
	if err := json.Unmarshal(params, &p); err != nil {
		s.logf("clangd: bad publishDiagnostics: %v", err)
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	setDiags(m.clangd, p.URI, p.Diagnostics)
	m.publishLocked(s, p.URI, p.Version)
}

// setDiags records one source's diagnostics of uri (none: forgets the document).
func setDiags[T any](m map[string][]T, uri string, ds []T) {
	if len(ds) == 0 {
		delete(m, uri)
		return
	}
	m[uri] = ds
}

// clearClangd withdraws clangd's diagnostics (clangd stopped; its restart publishes anew).
func (m *diagMerger) clearClangd(s *Server) {
	m.mu.Lock()
	defer m.mu.Unlock()
	uris := make([]string, 0, len(m.clangd))
	for uri := range m.clangd {
		uris = append(uris, uri)
	}
	m.clangd = map[string][]json.RawMessage{}
	for _, uri := range uris {
		m.publishLocked(s, uri, nil)
	}
}

// publishDiagnostics sends Hydra's diagnostics of a document: merged with clangd's when
// clangd runs behind Hydra, as they are otherwise.
func (s *Server) publishDiagnostics(p PublishDiagnosticsParams) {
	if px := s.clangdProxy(); px != nil {
		px.diags.fromHydra(s, p)
		return
	}
	if err := s.conn.Notify(context.Background(), "textDocument/publishDiagnostics", p); err != nil {
		s.logf("notify textDocument/publishDiagnostics: %v", err)
	}
}

// labelClangdProgress names clangd as the source of one of its $/progress notifications: the
// title of a "begin" gets "clangd: " in front ("clangd: indexing"). The client shows every
// progress under its one server's name (Hydra's), so clangd's background indexing would
// otherwise read as Hydra's work. Params it cannot read pass through unchanged.
func labelClangdProgress(params json.RawMessage) json.RawMessage {
	var p map[string]json.RawMessage
	if err := json.Unmarshal(params, &p); err != nil {
		return params
	}
	var v map[string]json.RawMessage
	if err := json.Unmarshal(p["value"], &v); err != nil {
		return params
	}
	var kind, title string
	if json.Unmarshal(v["kind"], &kind) != nil || kind != "begin" {
		return params
	}
	_ = json.Unmarshal(v["title"], &title)
	if strings.HasPrefix(strings.ToLower(title), "clangd") {
		return params
	}
	label := "clangd"
	if title != "" {
		label += ": " + title
	}
	var err error
	if v["title"], err = json.Marshal(label); err != nil {
		return params
	}
	if p["value"], err = json.Marshal(v); err != nil {
		return params
	}
	out, err := json.Marshal(p)
	if err != nil {
		return params
	}
	return out
}
