package lsp

import "testing"

func TestOfferRewrite(t *testing.T) {
	at := Range{Start: Position{Line: 4}, End: Position{Line: 4}}
	sel := Range{Start: Position{Line: 3}, End: Position{Line: 4, Character: 2}}
	tests := []struct {
		name string
		c    CodeActionContext
		rng  Range
		line string
		want bool
	}{
		{"Ctrl+. on a line with code", CodeActionContext{TriggerKind: 1}, at, "  int x = 0;", true},
		{"lightbulb on a blank line", CodeActionContext{TriggerKind: 2}, at, "   ", true},
		{"lightbulb on a selection", CodeActionContext{TriggerKind: 2}, sel, "  int x = 0;", true},
		{"lightbulb on a line with code: no clutter", CodeActionContext{TriggerKind: 2}, at, "  int x = 0;", false},
		{"Source Action… (only source)", CodeActionContext{TriggerKind: 1, Only: []string{"source"}}, at, "", false},
		{"Refactor… (only refactor)", CodeActionContext{TriggerKind: 1, Only: []string{"refactor"}}, at, "x;", true},
		{"only refactor.rewrite, no trigger kind", CodeActionContext{Only: []string{"refactor.rewrite"}}, at, "x;", true},
		{"only quickfix", CodeActionContext{TriggerKind: 1, Only: []string{"quickfix"}}, at, "", false},
		{"a client before LSP 3.17 (no trigger kind, no filter)", CodeActionContext{}, at, "", false},
	}
	for _, tt := range tests {
		if got := offerRewrite(tt.c, tt.rng, tt.line); got != tt.want {
			t.Errorf("%s: offerRewrite = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestLineAt(t *testing.T) {
	text := "a\r\n  b\n\nc"
	for n, want := range []string{"a", "  b", "", "c", ""} {
		if got := lineAt(text, n); got != want {
			t.Errorf("lineAt(%d) = %q, want %q", n, got, want)
		}
	}
}
