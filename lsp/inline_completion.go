package lsp

import (
	"context"
	"encoding/json"

	"github.com/hydra-lsp/hydra/engine"
)

// inlineCompletion answers textDocument/inlineCompletion (LSP 3.18) with the repaired
// continuation at the cursor: the same search as hydra.generate, but nothing is written to the
// document; the accepted text comes back as one inline item (ghost text in eglot and VS Code).
// $/cancelRequest cancels the search (and so its model stream and checker processes).
func (s *Server) inlineCompletion(ctx context.Context, params json.RawMessage) (any, error) {
	var p InlineCompletionParams
	if err := decodeParams("textDocument/inlineCompletion", params, &p); err != nil {
		return nil, err
	}
	setup, err := s.prepare(target{URI: p.TextDocument.URI, Position: p.Position, AtCursor: true})
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
			InsertText: setup.lead + res.Text,
			Range:      &Range{Start: p.Position, End: p.Position},
		})
		prog.end("accepted")
	} else {
		prog.end("no accepted continuation (" + res.Reason + ")")
	}
	return list, nil
}
