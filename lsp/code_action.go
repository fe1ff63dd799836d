package lsp

import (
	"context"
	"encoding/json"
	"strings"
)

// codeAction offers "Generate with repair" in the documents of a language Hydra has a checker
// for (C and C++, TypeScript: checkers/lang), at the cursor or for the
// selection (which is then the instruction; the code goes after it): as a source action
// (KindGenerate), and as a refactoring (KindRewrite) where offerRewrite says so.
func (s *Server) codeAction(_ context.Context, params json.RawMessage) (any, error) {
	var p CodeActionParams
	if err := decodeParams("textDocument/codeAction", params, &p); err != nil {
		return nil, err
	}
	s.mu.Lock()
	d := s.docs[p.TextDocument.URI]
	ok := d != nil && s.checkerFor(d.language()) != nil
	var line string
	if ok {
		line = lineAt(d.text, p.Range.Start.Line)
	}
	s.mu.Unlock()
	actions := []CodeAction{}
	if !ok {
		return actions, nil
	}
	arg := map[string]any{"uri": p.TextDocument.URI}
	title := "Generate with repair (Hydra)"
	if p.Range.Start == p.Range.End {
		arg["position"] = p.Range.Start
	} else {
		arg["range"] = p.Range
		title = "Generate with repair from the selection (Hydra)"
	}
	for _, kind := range []string{KindGenerate, KindRewrite} {
		if kind == KindGenerate && !kindWanted(p.Context.Only, kind) ||
			kind == KindRewrite && !offerRewrite(p.Context, p.Range, line) {
			continue
		}
		actions = append(actions, CodeAction{
			Title:   title,
			Kind:    kind,
			Command: &Command{Title: title, Command: CommandGenerate, Arguments: []any{arg}},
		})
	}
	return actions, nil
}

// offerRewrite says whether to offer the action as a refactoring too, without cluttering every
// cursor position: when the user opened the menu (Ctrl+.), and for the lightbulb (which the
// client asks for by itself at each cursor move) only on a selection or a blank line, where
// generating fits. A client that says neither (LSP before 3.17) gets the source action alone,
// unless it names refactor actions in only.
func offerRewrite(c CodeActionContext, rng Range, line string) bool {
	if len(c.Only) > 0 && !kindWanted(c.Only, KindRewrite) {
		return false
	}
	switch c.TriggerKind {
	case 1:
		return true
	case 2:
		return rng.Start != rng.End || strings.TrimSpace(line) == ""
	default:
		return len(c.Only) > 0
	}
}

// lineAt returns line n (0-based) of text without its line break, or "" past the end.
func lineAt(text string, n int) string {
	for i := 0; i < n; i++ {
		j := strings.IndexByte(text, '\n')
		if j < 0 {
			return ""
		}
		text = text[j+1:]
	}
	if j := strings.IndexByte(text, '\n'); j >= 0 {
		text = text[:j]
	}
	return strings.TrimSuffix(text, "\r")
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
