package lsp

import (
	"context"
	"encoding/json"
	"strings"
)

// codeAction offers "Generate with repair" in C and C++ documents, at the cursor or for the
// selection (which is then the instruction; the code goes after it).
func (s *Server) codeAction(_ context.Context, params json.RawMessage) (any, error) {
	var p CodeActionParams
	if err := decodeParams("textDocument/codeAction", params, &p); err != nil {
		return nil, err
	}
	s.mu.Lock()
	d := s.docs[p.TextDocument.URI]
	ok := d != nil && d.isCFamily()
	s.mu.Unlock()
	if !ok || !kindWanted(p.Context.Only, KindGenerate) {
		return []CodeAction{}, nil
	}
	arg := map[string]any{"uri": p.TextDocument.URI}
	title := "Generate with repair (Hydra)"
	if p.Range.Start == p.Range.End {
		arg["position"] = p.Range.Start
	} else {
		arg["range"] = p.Range
		title = "Generate with repair from the selection (Hydra)"
	}
	return []CodeAction{{
		Title:   title,
		Kind:    KindGenerate,
		Command: &Command{Title: title, Command: CommandGenerate, Arguments: []any{arg}},
	}}, nil
}

// kindWanted says whether kind passes the client's "only" filter: a kind matches an entry that
// equals it or is one of its parents ("source" matches "source.generate.hydra").
func kindWanted(only []string, kind string) bool {
	if len(only) == 0 {
		return true
	}
	for _, o := range only {
		if o == kind || strings.HasPrefix(kind, o+".") {
			return true
		}
	}
	return false
}
