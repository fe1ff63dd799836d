package lsp

import (
	"context"
	"encoding/json"
	"time"

	"github.com/hydra-lsp/hydra/engine"
)

// inlineTriggerAutomatic is InlineCompletionTriggerKind.Automatic (the client asked while the
// user typed, not on an explicit invocation).
const inlineTriggerAutomatic = 2

// inlineDebounce is how long an automatic inline completion waits before it starts a search.
const inlineDebounce = 250 * time.Millisecond

// inlineCompletion answers textDocument/inlineCompletion (LSP 3.18) with the repaired
// continuation at the cursor: the same search as hydra.generate, but nothing is written to the
// document; the accepted text comes back as one inline item (ghost text in eglot and VS Code).
// $/cancelRequest cancels the search (and so its model stream and checker processes).
func (s *Server) inlineCompletion(ctx context.Context, params json.RawMessage) (any, error) {
	var p InlineCompletionParams
	if err := decodeParams("textDocument/inlineCompletion", params, &p); err != nil {
		return nil, err
	}
	if p.Context.TriggerKind == inlineTriggerAutomatic {
		// Clients ask on every keystroke and cancel the previous request: wait for a pause
		// in typing before running a search (and calling the model).
		t := time.NewTimer(inlineDebounce)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	setup, err := s.prepare(ctx, target{URI: p.TextDocument.URI, Position: p.Position, AtCursor: true})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var prog *progress
	if len(p.WorkDoneToken) > 0 {
		prog = s.beginProgress(ctx, p.WorkDoneToken, "Hydra: inline completion", cancel)
	}
	req := setup.req
	req.OnUpdate = func(u engine.Update) {
		if u.Message != "" {
			prog.report(u.Message)
		}
	}
	res, err := s.opts.Search(ctx, s.checker(), setup.gen, req)
	if ctx.Err() != nil {
		prog.end("cancelled")
		return nil, ctx.Err()
	}
	if err != nil {
		prog.end(err.Error())
		return nil, err
	}
	list := InlineCompletionList{Items: []InlineCompletionItem{}}
	if res.OK && res.Text != "" {
		list.Items = append(list.Items, InlineCompletionItem{
			InsertText: setup.place.lead + res.Text,
			Range:      &Range{Start: p.Position, End: p.Position},
		})
		prog.end("accepted")
	} else {
		prog.end("no accepted continuation (" + res.Reason + ")")
	}
	return list, nil
}
