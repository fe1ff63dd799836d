package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/clang/compiledb"
	"github.com/hydra-lsp/hydra/checkers/lang"
	"github.com/hydra-lsp/hydra/engine"
	"github.com/hydra-lsp/hydra/engine/model"
)

// Why a generation stopped before its search ended (Summary.Reason); the search's own reasons
// ("accepted", "max_attempts", …) pass through otherwise.
const (
	reasonCancelled = "cancelled"
	reasonClosed    = "document_closed"
	reasonUserEdit  = "user_edit"
	reasonDesync    = "document_out_of_sync"
	reasonRejected  = "edit_rejected"
	reasonNoAnswer  = "edit_unanswered" // the client did not answer workspace/applyEdit in time
	reasonError     = "error"
)

// promptBudget bounds the document text sent to the model before the insertion point: the
// prompt is the tail of the prefix, cut at a line start (the checker still sees it all).
const promptBudget = 48 << 10

// editConfirmTimeout is how long an applied edit may wait for the client's didChange that
// reports it (Neovim 0.7 debounces didChange by 150 ms) before the server assumes it was lost.
const editConfirmTimeout = 10 * time.Second

// defaultApplyEditTimeout is how long the server waits for the client's answer to one
// workspace/applyEdit (Options.ApplyEditTimeout) before it stops the generation.
const defaultApplyEditTimeout = 30 * time.Second

// maxRejected bounds how many edits in a row the client may refuse, with no change to the
// document between them, before generation stops.
const maxRejected = 20

// Summary is what hydra.generate returns when the generation ends (a contract with the
// editor clients: ok, text, attempts, outputTokens and reason are always present).
type Summary struct {
	OK           bool   `json:"ok"`
	Text         string `json:"text"` // the accepted text now in the document
	Attempts     int    `json:"attempts"`
	OutputTokens int    `json:"outputTokens"`
	Reason       string `json:"reason"`
	// Message is the one-line summary also shown with window/showMessage.
	Message string `json:"message"`
	// WallMs is the generation's wall time; TimeToFirstCheckMs the time from its start to the
	// checker's first verdict on a generated line (engine.Stats.TimeToFirstCheck: the prefix's
	// own lines are checked before it; small when the preamble's checkpoint was warm).
	WallMs             int64 `json:"wallMs"`
	TimeToFirstCheckMs int64 `json:"timeToFirstCheckMs"`
	// Warm says whether a dormant checkpoint of the document's preamble was ready.
	Warm        bool `json:"warm"`
	Rollbacks   int  `json:"rollbacks"`
	Diagnostics int  `json:"diagnostics"`
	// PreexistingErrors counts the errors elsewhere in the file that were there before the
	// generation (not counted against it; the message names the first).
	PreexistingErrors int `json:"preexistingErrors"`
	// Rechecked: the user edited the document during the generation, so the whole document,
	// with those edits, was checked again at the end; DocumentErrors are its errors that were
	// not there before (then OK is false and the message says so).
	Rechecked      bool `json:"rechecked"`
	DocumentErrors int  `json:"documentErrors"`
	// Trace is the SVG picture of the search (tree over the program's lines, streaming vs
	// checking timeline); ShowTrace is the command that opens it (hydra.showTrace).
	Trace     string   `json:"trace,omitempty"`
	ShowTrace *Command `json:"showTrace,omitempty"`
	// Notes are the search's notes (engine.Result.Notes): the prompt cut to fit the model's
	// context, an attempt stopped at the model's length limit, missing logprobs, estimated
	// token counts. The message ends with them.
	Notes []string `json:"notes,omitempty"`
}

// target is where a generation writes: a document and a place in it.
type target struct {
	URI      string
	Position Position
	Range    *Range
	// AtCursor inserts exactly at Position (inline completion's ghost text) instead of moving
	// to the next line's start at the end of a line.
	AtCursor bool
}

// generation is one running "Generate with repair": a search whose accepted text is streamed
// into a region of a document.
type generation struct {
	s      *Server
	id     int
	uri    string
	ctx    context.Context
	cancel context.CancelCauseFunc
	// place is where the generated text goes (placement.go): its lead is inserted before the
	// generated text and is part of the search's prefix; its orig is what the region holds
	// while nothing is accepted. prefix is what the checker saw before the generated text
	// (document text up to place.off, plus the lead).
	place  placement
	prefix string
	suffix string
	// versioned: the client takes versioned edits (and so refuses stale ones).
	versioned bool
	warm      bool
	started   time.Time

	// Guarded by s.mu, because they change together with the document they describe:
	// the region [start, start+len(shown)) of the document holds shown, the generated text as
	// the client has applied it; pending is the edit sent and not yet seen coming back.
	start      int
	shown      string
	pending    *pendingEdit
	stopReason string
	// userEdited: the user changed the document during the generation (the whole document is
	// checked again at the end).
	userEdited bool

	// mu guards what the search's updates leave for the edit loop.
	mu       sync.Mutex
	target   string // lead + the accepted text the document should show
	messages []string
	finished bool
	wake     chan struct{}
}

// pendingEdit is an edit sent with workspace/applyEdit that the document has not shown yet.
type pendingEdit struct {
	base       int // the document version the edit was made against
	start, end int // the document bytes it replaces (moved by changes before them)
	text       string
	shown      string // the region's text once it is applied
	sent       bool   // the client answered applied: true
	matched    bool   // a didChange applied exactly this edit
	dead       bool   // a change that is not this edit came first: a versioned client drops it
	sentAt     time.Time
}

// signal wakes the edit loop.
func (g *generation) signal() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// stopLocked stops the generation (s.mu held): the search is cancelled, no more edits are
// sent, and what the document holds stays.
func (g *generation) stopLocked(reason string) {
	if g.stopReason != "" {
		return
	}
	g.stopReason = reason
	g.cancel(errors.New(reason))
	g.signal()
}

// observeLocked is called (s.mu held) for every change the client applies to the document:
// old → new by c. Its own pending edit coming back updates shown; another change before the
// region moves it, after the region leaves it, inside the region stops the generation.
func (g *generation) observeLocked(old, new string, c change) {
	// The own edit is recognised even after a stop: an edit in flight when the user cancelled
	// still lands, and the summary must say what the document holds.
	if p := g.pending; p != nil && !p.matched && !p.dead && p.start <= p.end && p.end <= len(old) {
		if new == old[:p.start]+p.text+old[p.end:] {
			g.shown = p.shown
			p.matched = true
			g.signal()
			return
		}
	}
	c = c.trim(old)
	if c.Start == c.End && c.Text == "" {
		return
	}
	g.userEdited = true
	if g.stopReason != "" {
		return
	}
	switch relateUser(c, g.start, g.start+len(g.shown)) {
	case changeBefore:
		d := c.shift()
		g.start += d
		if p := g.pending; p != nil {
			p.start += d
			p.end += d
		}
	case changeAfter:
	case changeInside:
		g.stopLocked(reasonUserEdit)
	}
	if p := g.pending; p != nil && g.versioned && !p.matched {
		// The client changed the document at a version our edit did not expect: it refuses
		// the edit (VS Code, the LSP) or drops it (Neovim 0.7). Either way it is not coming.
		p.dead = true
		g.signal()
	}
}

// versionSeenLocked is called (s.mu held) after a didChange moved the document to version v.
func (g *generation) versionSeenLocked(v int) {
	if p := g.pending; p != nil && g.versioned && p.sent && !p.matched && v > p.base {
		p.dead = true
	}
	g.signal()
}

// update is the search's OnUpdate: it records the accepted text and the message for the edit
// loop and returns at once (the search never waits for the editor).
func (g *generation) update(u engine.Update) {
	g.mu.Lock()
	switch u.Kind {
	case "accepted", "rollback", "attempt":
		// Only checker-accepted text; "done" carries a failed search's unchecked best attempt.
		g.target = g.withLead(u.Accepted)
	}
	if u.Message != "" {
		g.messages = append(g.messages, u.Message)
	} else if u.Kind == "attempt" {
		g.messages = append(g.messages, fmt.Sprintf("attempt %d", u.Attempt))
	}
	g.mu.Unlock()
	g.signal()
}

// withLead is what the region shows for the accepted text: the lead and the text, or the
// region's original text while nothing is accepted.
func (g *generation) withLead(accepted string) string {
	if accepted == "" {
		return g.place.orig
	}
	return g.place.lead + accepted
}

// generatedText is the generated part of what the region shows.
func (g *generation) generatedText(shown string) string {
	if shown == g.place.orig {
		return ""
	}
	return strings.TrimPrefix(shown, g.place.lead)
}

// promptFor is the tail of prefix the model sees, within promptBudget and cut at a line start.
func promptFor(prefix string) string {
	if len(prefix) <= promptBudget {
		return ""
	}
	tail := prefix[len(prefix)-promptBudget:]
	if i := strings.IndexByte(tail, '\n'); i >= 0 {
		tail = tail[i+1:]
	}
	return tail
}

// searchSetup is what a search of a document at a place needs.
type searchSetup struct {
	req       engine.Request
	gen       model.Generator
	ck        checkers.Checker // the checker of the document's language
	place     placement
	warm      bool
	version   int
	enc       posEncoding
	versioned bool
}

// prepare builds the engine request for a document at a place: whole-document mode, the
// document's compile flags, the configured model, policy and budget.
func (s *Server) prepare(ctx context.Context, t target) (*searchSetup, error) {
	s.cfg.settled(ctx, 5*time.Second)
	cfg := s.cfg.get()
	s.mu.Lock()
	d := s.docs[t.URI]
	if d == nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("document %s is not open", t.URI)
	}
	language := d.language()
	if language == nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("document %s is %s, not C, C++ or TypeScript", t.URI, d.lang)
	}
	text, version, enc := d.text, d.version, s.enc
	versioned := s.caps.Workspace.WorkspaceEdit.DocumentChanges
	path, languageID := d.path, d.lang
	s.mu.Unlock()
	ck := s.checkerFor(language)
	if ck == nil {
		return nil, fmt.Errorf("document %s: no %s checker in this server (hydra lsp's log says why)", t.URI, language.Name)
	}

	pos := t.Position
	if t.Range != nil {
		pos = t.Range.End
	}
	off, err := offsetAt(text, pos, enc)
	if err != nil {
		return nil, fmt.Errorf("position in %s: %w", t.URI, err)
	}
	opts := s.sessionOptions(path, languageID)
	syn := language.Syntax(opts.Flags, opts.Filename)
	var pl placement
	if t.AtCursor {
		pl = placeAtCursor(text, off)
	} else {
		pl = placeGenerate(text, off, t.Range != nil, syn)
	}

	if cfg.ModelURL == "" {
		return nil, errors.New("no model server configured: set hydra.modelUrl (or HYDRA_MODEL_URL)")
	}
	if s.opts.NewGenerator == nil || s.opts.Search == nil {
		return nil, errors.New("server built without an engine")
	}
	gen, err := s.opts.NewGenerator(cfg)
	if err != nil {
		return nil, fmt.Errorf("model client for %s: %w", cfg.ModelURL, err)
	}
	var pol engine.Policy
	if cfg.Policy != "" && s.opts.Policy != nil {
		if pol, err = s.opts.Policy(cfg.Policy); err != nil {
			return nil, fmt.Errorf("policy %q: %w", cfg.Policy, err)
		}
	}
	filename, flags := opts.Filename, opts.Flags
	prefix := text[:pl.off] + pl.lead
	suffix := text[pl.off+len(pl.orig):]
	req := engine.Request{
		Prompt:   promptFor(prefix),
		Prefix:   prefix,
		Suffix:   suffix,
		Filename: filename,
		Flags:    flags,
		Root:     opts.Root,
		Model:    cfg.Model,
		Policy:   pol,
		Budget:   engine.Budget{MaxTokens: cfg.MaxTokens, MaxAttempts: cfg.MaxAttempts},
		// Errors that were in the document before are not the model's.
		Baseline: true,
		// End when the construct at the insertion point closes: always when code follows,
		// and inside an open body even at the end of the document (a signature on the last
		// line with no `}` anywhere must not run on into more functions).
		StopAtClose: strings.TrimSpace(suffix) != "" || syn.BraceDepth(prefix) > 0,
	}
	warm := false
	if s.warm != nil && language == lang.C {
		warm = s.warm.ready(opts, prefix)
	}
	return &searchSetup{req: req, gen: gen, ck: ck, place: pl, warm: warm,
		version: version, enc: enc, versioned: versioned}, nil
}

// sessionOptions is how a document is checked: its path (or an untitled name) and its compile
// flags, the configured clangFlags last. A language whose checker takes no flags (TypeScript:
// its project's tsconfig.json is the compiler's business) gets none.
func (s *Server) sessionOptions(path, languageID string) checkers.SessionOptions {
	if l := lang.ForLanguageID(languageID); l != nil && !l.UsesFlags {
		filename := path
		if filename == "" {
			filename = l.UntitledName(languageID)
		}
		return checkers.SessionOptions{Filename: filename, Root: s.rootFor(path)}
	}
	filename := path
	if filename == "" {
		filename = "untitled.cpp"
		if languageID == "c" {
			filename = "untitled.c"
		}
	}
	fs := s.flags.forFile(path, languageID)
	// The clangFlags setting may come from a workspace's settings file (.vscode/settings.json):
	// it is sanitized like a database.
	extra, dropped := compiledb.Sanitize(s.cfg.get().ClangFlags, "", "")
	if msg := compiledb.Report("the clangFlags setting", dropped); msg != "" {
		s.flags.tellOnce("clangFlags\x00"+strings.Join(s.cfg.get().ClangFlags, "\x00"), msg)
	}
	flags := append(append([]string(nil), fs.Flags...), extra...)
	return checkers.SessionOptions{Flags: flags, Filename: filename, Root: s.rootFor(path)}
}

// checker is the checker C/C++ searches run on: the warm cache's wrapper when warm start is on.
func (s *Server) checker() checkers.Checker {
	if s.warm != nil {
		return s.warm.wrap()
	}
	return s.opts.Checker
}

// checkerFor is the checker of a language (checkers/lang): checker() for C/C++, Options.Checkers'
// for the others; nil when the server has none for it (or l is nil).
func (s *Server) checkerFor(l *lang.Language) checkers.Checker {
	switch {
	case l == nil:
		return nil
	case l == lang.C:
		if s.opts.Checker == nil {
			return nil
		}
		return s.checker()
	}
	return s.opts.Checkers[l]
}

// generate runs "Generate with repair" at t until it ends and returns its summary. ctx is the
// executeCommand request's: $/cancelRequest on it cancels the generation.
func (s *Server) generate(ctx context.Context, t target, token json.RawMessage) (*Summary, error) {
	s.mu.Lock()
	canEdit := s.caps.Workspace.ApplyEdit
	s.mu.Unlock()
	if !canEdit {
		return nil, errors.New("the client does not apply server edits (workspace/applyEdit); use inline completion instead")
	}
	var setup *searchSetup
	var d *document
	for try := 0; ; try++ {
		var err error
		if setup, err = s.prepare(ctx, t); err != nil {
			return nil, err
		}
		s.mu.Lock()
		d = s.docs[t.URI]
		if d != nil && d.version == setup.version {
			break // s.mu stays held: the generation is registered against this version
		}
		s.mu.Unlock()
		if d == nil {
			return nil, fmt.Errorf("document %s was closed", t.URI)
		}
		if try == 2 {
			return nil, &jsonrpc2.Error{Code: codeContentModified, Message: t.URI + " kept changing while the generation was starting; try again"}
		}
	}
	gctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	g := &generation{
		s: s, uri: t.URI, ctx: gctx, cancel: cancel,
		place:  setup.place,
		prefix: setup.req.Prefix, suffix: setup.req.Suffix,
		versioned: setup.versioned, warm: setup.warm,
		started: time.Now(), start: setup.place.off,
		shown: setup.place.orig, target: setup.place.orig,
		wake: make(chan struct{}, 1),
	}
	s.nextGen++
	g.id = s.nextGen
	s.gens[g.id] = g
	d.gens = append(d.gens, g)
	s.mu.Unlock()
	defer s.forgetGeneration(g)

	prog := s.beginProgress(gctx, token, "Hydra: generate with repair", func() {
		s.mu.Lock()
		g.stopLocked(reasonCancelled)
		s.mu.Unlock()
	})
	req := setup.req
	req.OnUpdate = g.update
	type outcome struct {
		res *engine.Result
		err error
	}
	done := make(chan outcome, 1)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		res, err := s.opts.Search(gctx, setup.ck, setup.gen, req)
		g.mu.Lock()
		if err == nil && res != nil && res.OK {
			g.target = g.withLead(g.place.padded(res.Text))
		}
		g.finished = true
		g.mu.Unlock()
		g.signal()
		done <- outcome{res, err}
	}()

	s.streamEdits(g, prog)
	out := <-done
	// The search may have finished with accepted text the loop has not written yet (the loop
	// stops only once the document shows the final text, or the generation was stopped).
	return s.finish(g, prog, out.res, out.err), nil
}

// streamEdits is a generation's edit loop: it turns the text the search has accepted into
// workspace/applyEdit calls, one at a time, each against the document's current version, until
// the search has finished and the document shows its final text, or the generation stops.
func (s *Server) streamEdits(g *generation, prog *progress) {
	rejected, refusedAt := 0, 0
	for {
		g.mu.Lock()
		target, finished, msgs := g.target, g.finished, g.messages
		g.messages = nil
		g.mu.Unlock()
		for _, m := range msgs {
			prog.report(m)
		}

		s.mu.Lock()
		if g.stopReason != "" {
			s.mu.Unlock()
			return
		}
		if p := g.pending; p != nil {
			if p.matched || p.dead {
				g.pending = nil
				s.mu.Unlock()
				continue
			}
			wait := editConfirmTimeout
			if p.sent {
				wait -= time.Since(p.sentAt)
			}
			s.mu.Unlock()
			if !p.sent || wait > 0 {
				s.waitWake(g, wait)
				continue
			}
			s.mu.Lock()
			if g.pending == p && !p.matched {
				s.logf("%s: edit at version %d was not confirmed by a didChange in %s; assuming it was dropped", g.uri, p.base, editConfirmTimeout)
				g.pending = nil
			}
			s.mu.Unlock()
			continue
		}
		d := s.docs[g.uri]
		if d == nil {
			g.stopLocked(reasonClosed)
			s.mu.Unlock()
			return
		}
		if g.versioned && d.version > refusedAt {
			rejected = 0 // the document moved since the last refusal: that one was overtaken
		}
		edit, p := g.nextEditLocked(d, target, s.enc)
		if p == nil {
			s.mu.Unlock()
			if finished {
				return
			}
			s.waitWake(g, time.Hour)
			continue
		}
		version := d.version
		s.mu.Unlock()

		applied, reason, err := s.applyEdit(g.ctx, g.uri, version, g.versioned, edit)
		s.mu.Lock()
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			// The client never answered: nothing tells what the document holds any more.
			s.logf("%s: edit at version %d: %v", g.uri, version, err)
			g.stopLocked(reasonNoAnswer)
		case err != nil || !applied:
			if err != nil {
				reason = err.Error()
			}
			if g.pending == p && !p.matched {
				g.pending = nil
				s.logf("%s: edit at version %d not applied: %s", g.uri, version, reason)
				// A versioned edit the user's typing overtook is refused; that is a race, redone
				// against the new text, and however long the user types it must not stop the
				// generation. Only refusals with no change to the document between them count.
				if dd := s.docs[g.uri]; !g.versioned || dd == nil || dd.version <= version {
					rejected++
					refusedAt = version
				}
				if rejected > maxRejected || err != nil {
					g.stopLocked(reasonRejected)
				}
			}
		default:
			rejected = 0
			p.sent, p.sentAt = true, time.Now()
			if g.versioned {
				if dd := s.docs[g.uri]; dd != nil && dd.version > p.base && !p.matched {
					p.dead = true
				}
			}
		}
		s.mu.Unlock()
	}
}

// nextEditLocked (s.mu held) makes the edit that turns the region's text into target against
// the document as it is now, and records it as pending; nil when there is nothing to do.
func (g *generation) nextEditLocked(d *document, target string, enc posEncoding) (TextEdit, *pendingEdit) {
	tr := diffTail(g.shown, target)
	if tr.empty() {
		return TextEdit{}, nil
	}
	from, to, ins := offLastLine(d.text, g.start+tr.Keep, g.start+len(g.shown), tr.Ins)
	edit := TextEdit{Range: rangeAt(d.text, from, to, enc), NewText: ins}
	p := &pendingEdit{base: d.version, start: from, end: to, text: ins, shown: target}
	g.pending = p
	return edit, p
}

// waitWake waits for a signal to the generation or the timeout.
func (s *Server) waitWake(g *generation, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-g.wake:
	case <-t.C:
	}
}

// applyEdit sends one edit with workspace/applyEdit (versioned when the client supports it,
// never with a label) and returns the client's answer. It gives up when ctx ends or the client
// has not answered within Options.ApplyEditTimeout (the error wraps context.DeadlineExceeded).
func (s *Server) applyEdit(ctx context.Context, uri string, version int, versioned bool, edit TextEdit) (bool, string, error) {
	var we WorkspaceEdit
	if versioned {
		v := version
		we.DocumentChanges = []TextDocumentEdit{{
			TextDocument: OptionalVersionedTextDocumentIdentifier{URI: uri, Version: &v},
			Edits:        []TextEdit{edit},
		}}
	} else {
		we.Changes = map[string][]TextEdit{uri: {edit}}
	}
	var res ApplyWorkspaceEditResult
	// Once sent, the edit is the client's: it applies it whether or not the generation is
	// cancelled meanwhile, so its answer is awaited (up to the timeout) even then; otherwise
	// the summary would not count text the document shows.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.applyEditTimeout())
	defer cancel()
	if err := s.conn.Call(ctx, "workspace/applyEdit", ApplyWorkspaceEditParams{Edit: we}, &res); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return false, "", fmt.Errorf("workspace/applyEdit: no answer from the client in %s: %w", s.applyEditTimeout(), err)
		}
		return false, "", fmt.Errorf("workspace/applyEdit: %w", err)
	}
	return res.Applied, res.FailureReason, nil
}

// forgetGeneration removes a finished generation from the server and its document.
func (s *Server) forgetGeneration(g *generation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.gens, g.id)
	if d := s.docs[g.uri]; d != nil {
		for i, x := range d.gens {
			if x == g {
				d.gens = append(d.gens[:i], d.gens[i+1:]...)
				break
			}
		}
	}
}

// finish reports how a generation ended: the summary (returned, shown with
// window/showMessage and as the progress's end), and the best attempt's errors as diagnostics
// when it failed.
func (s *Server) finish(g *generation, prog *progress, res *engine.Result, err error) *Summary {
	s.mu.Lock()
	stopReason := g.stopReason
	shown := g.shown
	if p := g.pending; p != nil && p.sent && !p.matched && !p.dead {
		// The client answered that it applied this edit, and its didChange has not come yet
		// (a stop ends the edit loop without waiting for it): the document shows p's text.
		shown = p.shown
	}
	start := g.start
	var text string
	var version int
	if d := s.docs[g.uri]; d != nil {
		text, version = d.text, d.version
	}
	s.mu.Unlock()

	sum := &Summary{Text: g.generatedText(shown), Warm: g.warm,
		WallMs: time.Since(g.started).Milliseconds()}
	if res != nil {
		sum.Attempts = res.Stats.Attempts
		sum.OutputTokens = res.Stats.OutputTokens
		sum.Rollbacks = res.Stats.Rollbacks
		sum.TimeToFirstCheckMs = res.Stats.TimeToFirstCheck.Milliseconds()
		sum.Reason = res.Reason
		sum.OK = res.OK
		sum.Notes = res.Notes
	}
	switch {
	case stopReason != "":
		sum.OK = false
		sum.Reason = stopReason
	case err != nil:
		sum.OK = false
		sum.Reason = reasonError
	}
	if sum.Reason == "" {
		sum.Reason = reasonError
	}
	var firstDiag *checkers.Event
	if res != nil && !sum.OK && len(res.Diagnostics) > 0 {
		firstDiag = &res.Diagnostics[0]
	}
	sum.Message = summaryMessage(sum, err, s.cfg.get().ModelURL, firstDiag)
	if res != nil && len(res.Baseline) > 0 {
		// The errors that were there before, once, at the end (never in progress reports).
		sum.PreexistingErrors = len(res.Baseline)
		e := res.Baseline[0]
		sum.Message += fmt.Sprintf("; %d error%s elsewhere in the file %s there before and not counted (line %d: %s)",
			len(res.Baseline), plural(len(res.Baseline)), wasWere(len(res.Baseline)),
			baselineLine(text, g, start, shown, e), oneLine(e.Diag))
	}
	if g.userEditedLocked(s) && text != "" {
		// The user typed during the generation: what holds is the whole document as it is now.
		s.recheck(g, sum, res, text)
	}
	if res != nil && res.Trace != nil {
		if path, terr := saveTrace(g.uri, res); terr != nil {
			s.logf("%v", terr)
		} else {
			sum.Trace = path
			sum.ShowTrace = &Command{Title: "Show the search", Command: CommandShowTrace, Arguments: []any{showTraceArgs{Path: path}}}
		}
	}

	var diags []Diagnostic
	if !sum.OK && res != nil && text != "" && stopReason != reasonUserEdit {
		diags = mapDiagnostics(text, s.enc, res, g, start, shown, s.caps.TextDocument.PublishDiagnostics.RelatedInformation)
	}
	sum.Diagnostics = len(diags)
	if text != "" {
		s.mu.Lock()
		if d := s.docs[g.uri]; d != nil && d.version == version {
			s.setDiagsLocked(d, diags)
		}
		s.mu.Unlock()
		v := version
		s.notify("textDocument/publishDiagnostics", PublishDiagnosticsParams{URI: g.uri, Version: &v, Diagnostics: nonNil(diags)})
	}
	typ := MessageInfo
	if !sum.OK {
		typ = MessageWarning
	}
	if !s.cfg.get().ClientShowsSummary {
		s.showMessage(typ, sum.Message)
	}
	prog.end(sum.Message)
	return sum
}

// userEditedLocked reads g.userEdited under s.mu.
func (g *generation) userEditedLocked(s *Server) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return g.userEdited
}

// recheck checks the whole document as it is now (with the user's edits) and says in the
// summary when it does not compile for reasons other than the errors that were there before.
func (s *Server) recheck(g *generation, sum *Summary, res *engine.Result, text string) {
	s.mu.Lock()
	d := s.docs[g.uri]
	var path, languageID string
	var ck checkers.Checker
	if d != nil {
		path, languageID, ck = d.path, d.lang, s.checkerFor(d.language())
	}
	s.mu.Unlock()
	if d == nil || ck == nil {
		return
	}
	opts := s.sessionOptions(path, languageID)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	errs, err := engine.CheckText(ctx, ck, opts, text)
	sum.Rechecked = true
	if err != nil {
		sum.Message += fmt.Sprintf("; your edits during generation could not be checked again: %v", err)
		return
	}
	old := map[string]int{}
	if res != nil {
		for _, e := range res.Baseline {
			old[e.Diag]++
		}
	}
	var fresh []checkers.Event
	for _, e := range errs {
		if old[e.Diag] > 0 {
			old[e.Diag]--
			continue
		}
		fresh = append(fresh, e)
	}
	sum.DocumentErrors = len(fresh)
	if len(fresh) > 0 {
		s.logf("%s: checked again with the user's edits: %d error(s), first at line %d: %s", g.uri, len(fresh), fresh[0].Line, fresh[0].Diag)
	}
	if len(fresh) == 0 {
		sum.Message += "; checked again with your edits: it compiles"
		return
	}
	sum.OK = false
	sum.Message += fmt.Sprintf("; with your edits during generation the file does not compile: %d error%s (line %d: %s)",
		len(fresh), plural(len(fresh)), fresh[0].Line, oneLine(fresh[0].Diag))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func wasWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

// oneLine is the first line of a diagnostic.
func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// baselineLine is the 1-based line, in the document as it is now, of an error of the baseline
// (the document with the region empty: prefix, then suffix): after the region when it was in
// the suffix.
func baselineLine(text string, g *generation, start int, shown string, e checkers.Event) int {
	if text == "" || e.Off < len(g.prefix) {
		return e.Line
	}
	off := min(start+len(shown)+(e.Off-len(g.prefix)), len(text))
	return strings.Count(text[:off], "\n") + 1
}

func nonNil(d []Diagnostic) []Diagnostic {
	if d == nil {
		return []Diagnostic{}
	}
	return d
}

// summaryMessage is the one-line summary: what happened, tokens, attempts, time.
func summaryMessage(sum *Summary, err error, modelURL string, firstDiag *checkers.Event) string {
	var b strings.Builder
	b.WriteString("hydra: ")
	switch {
	case err != nil && errors.Is(err, model.ErrUnavailable):
		fmt.Fprintf(&b, "model server %s is unavailable: %v", modelURL, err)
		return b.String()
	case err != nil:
		fmt.Fprintf(&b, "generation failed: %v", err)
		return b.String()
	case sum.OK:
		lines := strings.Count(sum.Text, "\n")
		fmt.Fprintf(&b, "accepted %d lines", lines)
	case sum.Reason == reasonUserEdit:
		b.WriteString("stopped: you edited the generated code (your text is kept)")
	case sum.Reason == reasonCancelled:
		b.WriteString("cancelled")
	case sum.Reason == reasonNoAnswer:
		b.WriteString("stopped: the editor did not answer a workspace/applyEdit request in time (what it shows is kept)")
	case sum.Reason == "prefix_error" && firstDiag != nil && firstDiag.Cat == checkers.CatFatal:
		fmt.Fprintf(&b, "the document has an error that stops the checker (line %d: %s); nothing was generated",
			firstDiag.Line, firstDiag.Diag)
	case sum.Reason == "prefix_error" && firstDiag != nil:
		fmt.Fprintf(&b, "the code before the insertion point does not compile (line %d: %s); nothing was generated",
			firstDiag.Line, firstDiag.Diag)
	default:
		fmt.Fprintf(&b, "no accepted program (%s)", sum.Reason)
		if firstDiag != nil {
			fmt.Fprintf(&b, ": line %d: %s", firstDiag.Line, firstDiag.Diag)
		}
	}
	fmt.Fprintf(&b, "; %d tokens, %d attempt", sum.OutputTokens, sum.Attempts)
	if sum.Attempts != 1 {
		b.WriteString("s")
	}
	fmt.Fprintf(&b, ", %.1f s; first checked line after %d ms", float64(sum.WallMs)/1000, sum.TimeToFirstCheckMs)
	if sum.Warm {
		b.WriteString(" (warm preamble)")
	}
	for _, n := range sum.Notes {
		b.WriteString("; ")
		b.WriteString(n)
	}
	return b.String()
}

// showMessage sends window/showMessage.
func (s *Server) showMessage(typ int, msg string) {
	s.notify("window/showMessage", ShowMessageParams{Type: typ, Message: msg})
}
