package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/hydra-lsp/hydra/engine"
)

// inlineTriggerAutomatic is InlineCompletionTriggerKind.Automatic (the client asked while the
// user typed, not on an explicit invocation).
const inlineTriggerAutomatic = 2

// inlineDebounce is how long an automatic inline completion waits before it starts a search.
const inlineDebounce = 250 * time.Millisecond

// defaultInlineMaxAttempts is an inline search's own small budget (hydra.inlineMaxAttempts):
// ghost text must be cheap; a full repair search is what hydra.generate is for.
const defaultInlineMaxAttempts = 2

// errStale cancels an inline completion whose document changed (the user typed on).
var errStale = errors.New("the document changed")

// InlinePartialParams is the hydra/inlineCompletionPartial notification: the checked text of
// a running inline completion so far (LSP 3.18's inline completion has no partial results), for
// clients that show ghost text as it grows. Done is never sent here; the request's answer ends it.
type InlinePartialParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
	Position     Position               `json:"position"`
	Text         string                 `json:"text"`
}

// inlineCompletion answers textDocument/inlineCompletion (LSP 3.18) with the repaired
// continuation at the cursor: the same search as hydra.generate, but with its own small
// attempt budget and nothing written to the document; the accepted text comes back as one
// inline item (ghost text in eglot, VS Code and Neovim). While it works, a work-done progress
// ("thinking") runs when the client gave a token or supports server-created progress, and the
// first checked lines go out as hydra/inlineCompletionPartial. $/cancelRequest, or any change
// to the document (the request is stale), cancels the search and so its model stream and
// checker processes. Inside a comment or a string literal there is nothing to complete: the
// answer is empty at once, without a model request.
func (s *Server) inlineCompletion(ctx context.Context, params json.RawMessage) (any, error) {
	var p InlineCompletionParams
	if err := decodeParams("textDocument/inlineCompletion", params, &p); err != nil {
		return nil, err
	}
	empty := InlineCompletionList{Items: []InlineCompletionItem{}}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	uri := p.TextDocument.URI
	s.mu.Lock()
	d := s.docs[uri]
	if d == nil {
		s.mu.Unlock()
		return nil, invalidParams("textDocument/inlineCompletion", errors.New(uri+" is not open"))
	}
	text, languageID, language, path := d.text, d.lang, d.language(), d.path
	s.nextGen++
	id := s.nextGen
	if d.inline == nil {
		d.inline = map[int]context.CancelCauseFunc{}
	}
	d.inline[id] = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if d := s.docs[uri]; d != nil {
			delete(d.inline, id)
		}
		s.mu.Unlock()
	}()

	cursorOff, cursorErr := offsetAt(text, p.Position, s.enc)
	if cursorErr == nil && language != nil {
		var flags []string
		if languageID == "c" {
			flags = []string{"-xc"}
		}
		probe := text[:cursorOff]
		if endOfCodeLine(text, cursorOff) {
			probe += "\n" // the completion starts a new line: a line comment there has ended
		}
		name := "" // C/C++: the flags say the language
		if !language.UsesFlags {
			name = path // TypeScript: .tsx says JSX
			if name == "" {
				name = language.UntitledName(languageID)
			}
		}
		if language.Syntax(flags, name).InCommentOrLiteral(probe) {
			return empty, nil
		}
	}
	if p.Context.TriggerKind == inlineTriggerAutomatic {
		// Clients ask on every keystroke and cancel the previous request: wait for a pause
		// in typing before running a search (and calling the model).
		t := time.NewTimer(inlineDebounce)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, inlineCancelled(ctx)
		case <-t.C:
		}
	}
	setup, err := s.prepare(ctx, target{URI: uri, Position: p.Position, AtCursor: true})
	if err != nil {
		return nil, err
	}
	cfg := s.cfg.get()
	req := setup.req
	req.Budget.MaxAttempts = cfg.InlineMaxAttempts
	if req.Budget.MaxAttempts <= 0 {
		req.Budget.MaxAttempts = defaultInlineMaxAttempts
	}
	// What is around the cursor on its line shapes the item: atCursor returns its text and the
	// end of the range it replaces. On a line of only indentation the code goes on that line,
	// from its start (placement): the item is inserted at the cursor, so it leaves out the
	// indentation already typed. What follows the cursor decides how the item ends
	// (endOnTheLine).
	indent := ""
	if cursorErr == nil {
		indent = indentBefore(text, cursorOff)
	}
	atCursor := func(accepted string) (string, Position) {
		insert := strings.TrimPrefix(setup.place.lead+accepted, indent)
		if cursorErr != nil {
			return insert, p.Position
		}
		insert, end := endOnTheLine(text, cursorOff, insert)
		return insert, positionAt(text, end, s.enc)
	}
	prog := s.beginProgress(ctx, p.WorkDoneToken, "Hydra: thinking", func() { cancel(context.Canceled) })
	prog.report("thinking…")
	partial := ""
	req.OnUpdate = func(u engine.Update) {
		switch u.Kind {
		case "accepted":
			if t := strings.TrimSpace(u.Accepted); t != "" && u.Accepted != partial && ctx.Err() == nil {
				partial = u.Accepted
				shown, _ := atCursor(u.Accepted)
				s.notify("hydra/inlineCompletionPartial", InlinePartialParams{
					TextDocument: p.TextDocument, Position: p.Position, Text: shown})
			}
		case "note":
		default:
			if u.Message != "" {
				prog.report("thinking… " + u.Message)
			}
		}
	}
	res, err := s.opts.Search(ctx, setup.ck, setup.gen, req)
	if ctx.Err() != nil {
		prog.end("cancelled")
		return nil, inlineCancelled(ctx)
	}
	if err != nil {
		prog.end(err.Error())
		return nil, err
	}
	if res.OK && res.Text != "" {
		insert, end := atCursor(res.Text)
		empty.Items = append(empty.Items, InlineCompletionItem{
			InsertText: insert,
			Range:      &Range{Start: p.Position, End: end},
		})
		prog.end("accepted")
	} else {
		prog.end("no accepted continuation (" + res.Reason + ")")
	}
	return empty, nil
}

// inlineCancelled is the error a cancelled inline completion answers: ContentModified when the
// document changed under it, else RequestCancelled.
func inlineCancelled(ctx context.Context) error {
	if errors.Is(context.Cause(ctx), errStale) {
		return &jsonrpc2.Error{Code: codeContentModified, Message: "the document changed; the inline completion is stale"}
	}
	return ctx.Err()
}

// cancelInlineLocked (s.mu held) cancels d's running inline completions: the document changed,
// so what they would show is stale.
func cancelInlineLocked(d *document) {
	for id, cancel := range d.inline {
		cancel(errStale)
		delete(d.inline, id)
	}
}

// indentBefore is the text between the start of off's line and off when it is only blanks
// (spaces and tabs), and "" otherwise.
func indentBefore(text string, off int) string {
	start := strings.LastIndexByte(text[:off], '\n') + 1
	if strings.Trim(text[start:off], " \t") != "" {
		return ""
	}
	return text[start:off]
}

// endOnTheLine shapes the text of an inline item that goes in at off. When the rest of off's
// line is blank and the line has a break of its own, an item ending with a line break would
// leave a blank line after the accepted code in every client that inserts items as they are
// (Emacs, Neovim's own vim.lsp.inline_completion). So the item drops its final break and
// replaces the blank rest: the line's own break ends the inserted text, as if the user had
// typed it there. It returns the text and the end of the range it replaces (off when the
// item is left as it was: text follows on the line, the line is the last one and has no
// break, or the text does not end with one).
func endOnTheLine(text string, off int, insert string) (string, int) {
	_, eol := lineBounds(text, off)
	if eol == len(text) {
		return insert, off
	}
	rest := strings.TrimSuffix(text[off:eol], "\r")
	if strings.Trim(rest, " \t") != "" {
		return insert, off
	}
	trimmed := strings.TrimSuffix(insert, "\n")
	if trimmed == insert {
		return insert, off
	}
	trimmed = strings.TrimSuffix(trimmed, "\r")
	if strings.TrimSpace(trimmed) == "" {
		return insert, off
	}
	return trimmed, off + len(rest)
}
