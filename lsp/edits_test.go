package lsp

import (
	"strings"
	"testing"
)

func TestOffsetAtAndPositionAtRoundTrip(t *testing.T) {
	text := "int a;\n// héllo 𝄞 x\n\nend"
	tests := []struct {
		name string
		pos  Position
		enc  posEncoding
		want int
	}{
		{"start", Position{0, 0}, encUTF16, 0},
		{"mid first line", Position{0, 4}, encUTF16, 4},
		{"second line start", Position{1, 0}, encUTF16, 7},
		{"after two-byte rune utf16", Position{1, 5}, encUTF16, 7 + len("// hé")},
		{"after surrogate pair utf16", Position{1, 11}, encUTF16, 7 + len("// héllo 𝄞")},
		{"after surrogate pair utf8", Position{1, len("// héllo 𝄞")}, encUTF8, 7 + len("// héllo 𝄞")},
		{"empty line", Position{2, 0}, encUTF16, strings.Index(text, "\n\n") + 1},
		{"past line end clamps", Position{0, 99}, encUTF16, 6},
		{"past last line clamps", Position{9, 0}, encUTF16, len(text)},
		{"end of text", Position{3, 3}, encUTF16, len(text)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := offsetAt(text, tt.pos, tt.enc)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("offsetAt(%v) = %d, want %d", tt.pos, got, tt.want)
			}
			if tt.pos.Character < 99 && tt.pos.Line < 9 {
				if back := positionAt(text, got, tt.enc); back != tt.pos {
					t.Fatalf("positionAt(%d) = %v, want %v", got, back, tt.pos)
				}
			}
		})
	}
}

func TestOffsetAtRejectsSplitCharacters(t *testing.T) {
	text := "x𝄞y\né"
	if _, err := offsetAt(text, Position{0, 2}, encUTF16); err == nil {
		t.Error("a position inside a surrogate pair was accepted")
	}
	if _, err := offsetAt(text, Position{1, 1}, encUTF8); err == nil {
		t.Error("a position inside a UTF-8 sequence was accepted")
	}
	if _, err := offsetAt(text, Position{-1, 0}, encUTF16); err == nil {
		t.Error("a negative position was accepted")
	}
}

func TestApplyChange(t *testing.T) {
	text := "int main() {\n  return 0;\n}\n"
	r := func(l1, c1, l2, c2 int) *Range { return &Range{Position{l1, c1}, Position{l2, c2}} }
	tests := []struct {
		name   string
		change TextDocumentContentChangeEvent
		want   string
		span   change
	}{
		{"insert", TextDocumentContentChangeEvent{Range: r(1, 2, 1, 2), Text: "x++; "}, "int main() {\n  x++; return 0;\n}\n", change{15, 15, "x++; "}},
		{"replace across lines", TextDocumentContentChangeEvent{Range: r(0, 11, 2, 1), Text: "{}"}, "int main() {}\n", change{11, 26, "{}"}},
		{"delete", TextDocumentContentChangeEvent{Range: r(1, 0, 2, 0), Text: ""}, "int main() {\n}\n", change{13, 25, ""}},
		{"full text", TextDocumentContentChangeEvent{Text: "x"}, "x", change{0, len(text), "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, span, err := applyChange(text, tt.change, encUTF16)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || span != tt.span {
				t.Fatalf("got %q %+v, want %q %+v", got, span, tt.want, tt.span)
			}
		})
	}
	if _, _, err := applyChange(text, TextDocumentContentChangeEvent{Range: r(1, 4, 1, 2)}, encUTF16); err == nil {
		t.Error("a range that ends before it starts was accepted")
	}
}

func TestChangeTrimFindsWhatReallyChanged(t *testing.T) {
	old := "a\nbb\ncc\n"
	tests := []struct {
		name string
		in   change
		want change
	}{
		{"line-wise insert (Neovim style)", change{2, 5, "bb\nnew\n"}, change{5, 5, "new\n"}},
		{"whole text replaced", change{0, len(old), "a\nbX\ncc\n"}, change{3, 4, "X"}},
		{"no-op", change{2, 5, "bb\n"}, change{5, 5, ""}},
		{"pure delete", change{2, 5, ""}, change{2, 5, ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in.trim(old)
			if got != tt.want {
				t.Fatalf("trim = %+v, want %+v", got, tt.want)
			}
			// Trimming never changes the result of the edit.
			if a, b := old[:tt.in.Start]+tt.in.Text+old[tt.in.End:], old[:got.Start]+got.Text+old[got.End:]; a != b {
				t.Fatalf("trimmed change gives %q, untrimmed %q", b, a)
			}
		})
	}
}

func TestRelateChangeToRegion(t *testing.T) {
	// Region [10, 20).
	tests := []struct {
		name string
		c    change
		want relation
	}{
		{"typing well before", change{2, 2, "x"}, changeBefore},
		{"typing right at the start", change{10, 10, "x"}, changeBefore},
		{"deleting up to the start", change{5, 10, ""}, changeBefore},
		{"typing right after the end", change{20, 20, "x"}, changeAfter},
		{"deleting after", change{25, 30, ""}, changeAfter},
		{"typing inside", change{15, 15, "x"}, changeInside},
		{"deleting across the start", change{8, 12, ""}, changeInside},
		{"deleting across the end", change{19, 22, ""}, changeInside},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := relate(tt.c, 10, 20); got != tt.want {
				t.Fatalf("relate = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDiffTail(t *testing.T) {
	tests := []struct {
		name, shown, target string
		want                transition
	}{
		{"growth appends", "int a;\n", "int a;\nint b;\n", transition{7, "", "int b;\n"}},
		{"rollback deletes past the rollback point", "int a;\nint b = c;\n", "int a;\n", transition{7, "int b = c;\n", ""}},
		{"rollback then regrowth rewrites the tail", "int a;\nint b = c;\n", "int a;\nint b = 1;\n", transition{15, "c;\n", "1;\n"}},
		{"nothing to do", "x", "x", transition{1, "", ""}},
		{"multi-byte runes stay whole", "é", "è", transition{0, "é", "è"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := diffTail(tt.shown, tt.target)
			if got != tt.want {
				t.Fatalf("diffTail = %+v, want %+v", got, tt.want)
			}
			if tt.shown[:got.Keep]+got.Ins != tt.target {
				t.Fatal("transition does not produce the target")
			}
		})
	}
}
