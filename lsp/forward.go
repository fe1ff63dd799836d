package lsp

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/sourcegraph/jsonrpc2"
)

// The forwarding between the client and the language servers behind Hydra (backend.go starts
// them: clangd for C/C++, TypeScript's server for TypeScript):
//
//   - client → server: requests Hydra does not handle go to the server of the document they
//     name (a request about no document, to the first server; workspace/symbol to every
//     server, the answers joined) under ids of Hydra's (callProc); the client's $/cancelRequest cancels the request's context, which sends the
//     server $/cancelRequest with its id. codeAction asks Hydra and the document's server and
//     joins the answers; executeCommand goes to whichever offers the command; shutdown goes to
//     every server, and each is ended before the answer. Text sync of a document goes to its
//     language's server only; other notifications go to every server, Hydra first.
//   - server → client: notifications pass through, publishDiagnostics merged with Hydra's,
//     $/progress titled with the server's name; requests (workDoneProgress/create, applyEdit,
//     configuration, registerCapability, …) go to the client under string ids "NAME-N", the
//     server's $/cancelRequest mapped to them.
//   - a document of a language whose server does not run is answered null for requests Hydra
//     does not handle, and its code actions are Hydra's alone.

// requestHandler returns the handler of a client request: Hydra's own, joined with a server's,
// or forwarded to one.
func (s *Server) requestHandler(method string) (requestHandler, bool) {
	h, ok := s.requests()[method]
	if len(s.allBackends()) == 0 {
		return h, ok
	}
	switch method {
	case "initialize":
		return h, ok
	case "shutdown":
		return func(ctx context.Context, params json.RawMessage) (any, error) {
			res, err := h(ctx, params)
			var wg sync.WaitGroup
			for _, px := range s.allBackends() {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sctx, cancel := context.WithTimeout(ctx, backendExitGrace)
					defer cancel()
					if _, cerr := px.call(sctx, method, params); cerr != nil {
						s.logf("%s shutdown: %v", px.name, cerr)
					}
					// The server ends now, before the answer: a client may kill Hydra as soon
					// as it has sent exit (eglot does), so exit must find nothing left to wait
					// for.
					px.close()
				}()
			}
			wg.Wait()
			return res, err
		}, true
	case "textDocument/codeAction":
		return func(ctx context.Context, params json.RawMessage) (any, error) {
			px := s.backendFor(params)
			if px == nil {
				return h(ctx, params)
			}
			return px.codeAction(ctx, h, params)
		}, true
	case "workspace/symbol":
		if ok {
			break
		}
		return s.joinLists(method), true
	case "workspace/executeCommand":
		return func(ctx context.Context, params json.RawMessage) (any, error) {
			var p ExecuteCommandParams
			if err := decodeParams(method, params, &p); err != nil {
				return nil, err
			}
			if strings.HasPrefix(p.Command, "hydra.") {
				return h(ctx, params)
			}
			return s.backendForCommand(p.Command).call(ctx, method, params)
		}, true
	}
	if ok {
		return h, true
	}
	return func(ctx context.Context, params json.RawMessage) (any, error) {
		px := s.backendFor(params)
		if px == nil {
			return nil, nil
		}
		if method == "textDocument/diagnostic" && !px.pulls {
			// The capability is another server's (the client pulls from the one server it
			// sees): this one pushes its diagnostics instead.
			return json.RawMessage(`{"kind":"full","items":[]}`), nil
		}
		return px.call(ctx, method, params)
	}, true
}

// joinLists returns a handler that asks every server behind Hydra at once and joins their
// answers, each a list or null (workspace/symbol: a project's symbols in each language). A
// server that fails is left out and logged; when all fail, the first error is the answer.
func (s *Server) joinLists(method string) requestHandler {
	return func(ctx context.Context, params json.RawMessage) (any, error) {
		bs := s.allBackends()
		answers := make([]json.RawMessage, len(bs))
		errs := make([]error, len(bs))
		var wg sync.WaitGroup
		for i, px := range bs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers[i], errs[i] = px.call(ctx, method, params)
			}()
		}
		wg.Wait()
		joined := []json.RawMessage{}
		var firstErr error
		failed := 0
		for i, a := range answers {
			if errs[i] != nil {
				s.logf("%s %s: %v", bs[i].name, method, errs[i])
				firstErr = cmp.Or(firstErr, errs[i])
				failed++
				continue
			}
			var items []json.RawMessage
			if err := json.Unmarshal(a, &items); err != nil {
				s.logf("%s %s: the answer is not a list: %v", bs[i].name, method, err)
				continue
			}
			joined = append(joined, items...)
		}
		if failed == len(bs) && firstErr != nil {
			return nil, firstErr
		}
		return joined, nil
	}
}

// forwardNotification sends a client notification on to the servers behind Hydra (after Hydra
// handled it, when it does). initialized also lets their messages through to the client.
func (s *Server) forwardNotification(method string, params json.RawMessage) {
	switch method {
	case "exit", "$/cancelRequest":
		return // exit: close does it; cancel: the request's context does it, with the server's id
	}
	for _, px := range s.allBackends() {
		if method == "initialized" {
			px.markReady()
		}
		px.notify(method, params)
	}
}

// call forwards one request to the live server; while it is down it fails at once.
func (px *backend) call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	proc := px.current()
	if proc == nil {
		return nil, &jsonrpc2.Error{Code: codeRequestFailed, Message: px.name + " is not running (Hydra is restarting it)"}
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

// syncDoc is the part of a text sync notification that decides which server needs it.
type syncDoc struct {
	TextDocument struct {
		URI        string `json:"uri"`
		Version    int    `json:"version"`
		LanguageID string `json:"languageId"`
	} `json:"textDocument"`
}

// notify forwards a notification to the live server (dropped while it is down: the restart
// opens the documents as they are then). Text sync of another language's document is not sent.
// A didOpen or didChange whose version the server already has, from a restart's copy of the
// document, is not sent again.
func (px *backend) notify(method string, params json.RawMessage) {
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
			px.foreign[uri] = !px.servesLanguage(d.TextDocument.LanguageID, uri)
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
		px.s.logf("%s: %s: %v", px.name, method, err)
		return
	}
	if px.pushFor && (method == "textDocument/didOpen" || method == "textDocument/didChange") {
		px.schedulePull(d.TextDocument.URI)
	}
}

// codeAction joins the server's code actions and Hydra's (the server's first). Without an
// answer from the server, Hydra's alone.
func (px *backend) codeAction(ctx context.Context, own requestHandler, params json.RawMessage) (any, error) {
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
		px.s.logf("%s codeAction: %v", px.name, theirs.err)
	} else if err := json.Unmarshal(theirs.res, &out); err != nil && string(theirs.res) != "null" {
		px.s.logf("%s codeAction: unexpected answer: %v", px.name, err)
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

// mergeInitialize joins the servers' initialize answers with Hydra's: their capabilities (the
// first server's, with what a later one adds: mergeCapability), with Hydra's added (its code
// action kinds and commands joined to theirs, its inline completion); serverInfo names them
// all. Answers that cannot be read are left out; without any, Hydra's own answer.
func mergeInitialize(own InitializeResult, answers ...json.RawMessage) any {
	var caps map[string]json.RawMessage
	var with []string
	for _, res := range answers {
		var theirs struct {
			Capabilities map[string]json.RawMessage `json:"capabilities"`
			ServerInfo   ServerInfo                 `json:"serverInfo"`
		}
		if err := json.Unmarshal(res, &theirs); err != nil || theirs.Capabilities == nil {
			continue
		}
		if theirs.ServerInfo.Name != "" {
			with = append(with, strings.TrimSpace(theirs.ServerInfo.Name+" "+theirs.ServerInfo.Version))
		}
		if caps == nil {
			caps = theirs.Capabilities
			continue
		}
		for k, v := range theirs.Capabilities {
			mergeCapability(caps, k, v)
		}
	}
	if caps == nil {
		return own
	}
	b, _ := json.Marshal(own.Capabilities)
	var ours map[string]json.RawMessage
	_ = json.Unmarshal(b, &ours)
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
	if len(with) > 0 {
		info.Version = strings.TrimSpace(info.Version + " (with " + strings.Join(with, ", ") + ")")
	}
	return struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
		ServerInfo   ServerInfo                 `json:"serverInfo"`
	}{caps, info}
}

// mergeCapability adds a later server's capability k to caps, the union of what the servers
// offer: a provider only the later one has is taken; trigger characters, code action kinds and
// commands are joined. Semantic tokens are dropped when two servers offer them: one legend
// cannot describe both servers' tokens, so the client asks neither rather than misreading one.
func mergeCapability(caps map[string]json.RawMessage, k string, v json.RawMessage) {
	have, ok := caps[k]
	if !ok || string(have) == "false" || string(have) == "null" {
		caps[k] = v
		return
	}
	var a, b map[string]any
	if json.Unmarshal(have, &a) != nil || json.Unmarshal(v, &b) != nil || a == nil || b == nil {
		return // true, or a shape that cannot be joined: the first server's stands
	}
	switch k {
	case "semanticTokensProvider":
		delete(caps, k)
		return
	case "completionProvider", "signatureHelpProvider", "codeActionProvider", "executeCommandProvider":
		for _, list := range []string{"triggerCharacters", "retriggerCharacters", "allCommitCharacters", "codeActionKinds", "commands"} {
			if _, ok := b[list]; !ok {
				continue
			}
			seen := map[any]bool{}
			var joined []any
			for _, from := range []map[string]any{a, b} {
				xs, _ := from[list].([]any)
				for _, x := range xs {
					if !seen[x] {
						seen[x] = true
						joined = append(joined, x)
					}
				}
			}
			a[list] = joined
		}
		caps[k] = mustMarshal(a)
	}
}

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// backendHandler handles what a server sends: notifications in order on its read loop,
// requests on goroutines of their own.
type backendHandler struct {
	px   *backend
	proc *backendProc
}

// Handle implements jsonrpc2.Handler.
func (h *backendHandler) Handle(_ context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	px := h.px
	var params json.RawMessage
	if req.Params != nil {
		params = *req.Params
	}
	if req.Notif {
		// In order, but off the read loop: a server may notify before it answers initialize
		// (TypeScript's logs its capabilities), while its notifications wait for the client's
		// initialized (deliver).
		select {
		case h.proc.notes <- note{req.Method, params}:
		case <-h.proc.exited:
		}
		return
	}
	px.wg.Add(1)
	go func() {
		defer px.wg.Done()
		px.reverseCall(conn, h.proc, req, params)
	}()
}

// note is one notification from a server, queued for deliver.
type note struct {
	method string
	params json.RawMessage
}

// deliver passes proc's notifications to the client in order, once the client has Hydra's
// initialize answer; it returns when proc has exited or the server is closing.
func (px *backend) deliver(proc *backendProc) {
	defer px.wg.Done()
	select {
	case <-px.ready:
	case <-proc.exited:
		return
	}
	for {
		var n note
		select {
		case n = <-proc.notes:
		case <-proc.exited:
			return
		case <-px.done:
			return
		}
		switch n.method {
		case "textDocument/publishDiagnostics":
			px.diags.fromBackend(px.s, px.name, n.params)
		case "$/cancelRequest":
			px.cancelReverse(n.params)
		case "$/progress":
			px.s.notify(n.method, labelProgress(px.name, n.params))
		default:
			px.s.notify(n.method, n.params)
		}
	}
}

// reverseCall passes one server→client request to the client under an id of its own and
// the server the answer.
func (px *backend) reverseCall(conn *jsonrpc2.Conn, proc *backendProc, req *jsonrpc2.Request, params json.RawMessage) {
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
	id := jsonrpc2.ID{Str: fmt.Sprintf("%s-%d", px.name, px.nextRev), IsString: true}
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
		return // the server is gone or Hydra is closing
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

// cancelReverse passes the server's $/cancelRequest on to the client with the client's id.
func (px *backend) cancelReverse(params json.RawMessage) {
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

// diagMerger keeps each document's diagnostics from both sources, Hydra and the server of its
// language, and publishes their union: Hydra's keep their source "hydra", the server's pass as
// it sent them.
type diagMerger struct {
	// mu also orders the publications, so the client's last one is the newest union.
	mu      sync.Mutex
	hydra   map[string][]Diagnostic
	backend map[string][]json.RawMessage
}

// mergedDiagnostics are publishDiagnostics's parameters with the diagnostics as JSON.
type mergedDiagnostics struct {
	URI         string            `json:"uri"`
	Version     *int              `json:"version,omitempty"`
	Diagnostics []json.RawMessage `json:"diagnostics"`
}

// publishLocked sends uri's union.
func (m *diagMerger) publishLocked(s *Server, uri string, version *int) {
	out := append([]json.RawMessage{}, m.backend[uri]...)
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

// fromBackend records and publishes the server's diagnostics of a document.
func (m *diagMerger) fromBackend(s *Server, name string, params json.RawMessage) {
	var p mergedDiagnostics
	if err := json.Unmarshal(params, &p); err != nil {
		s.logf("%s: bad publishDiagnostics: %v", name, err)
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	setDiags(m.backend, p.URI, p.Diagnostics)
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

// clearBackend withdraws the server's diagnostics (it stopped; its restart publishes anew).
func (m *diagMerger) clearBackend(s *Server) {
	m.mu.Lock()
	defer m.mu.Unlock()
	uris := make([]string, 0, len(m.backend))
	for uri := range m.backend {
		uris = append(uris, uri)
	}
	m.backend = map[string][]json.RawMessage{}
	for _, uri := range uris {
		m.publishLocked(s, uri, nil)
	}
}

// publishDiagnostics sends Hydra's diagnostics of a document: merged with its language
// server's when one runs behind Hydra, as they are otherwise.
func (s *Server) publishDiagnostics(p PublishDiagnosticsParams) {
	if px := s.backendOf(p.URI); px != nil {
		px.diags.fromHydra(s, p)
		return
	}
	if err := s.conn.Notify(context.Background(), "textDocument/publishDiagnostics", p); err != nil {
		s.logf("notify textDocument/publishDiagnostics: %v", err)
	}
}

// labelProgress names a server behind Hydra as the source of one of its $/progress
// notifications: the title of a "begin" gets "NAME: " in front ("clangd: indexing"). The client
// shows every progress under its one server's name (Hydra's), so clangd's background indexing
// would otherwise read as Hydra's work. Params it cannot read pass through unchanged.
func labelProgress(name string, params json.RawMessage) json.RawMessage {
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
	if strings.HasPrefix(strings.ToLower(title), strings.ToLower(name)) {
		return params
	}
	label := name
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
