package typescript

import (
	"strings"
	"testing"
)

// Cuts fall at line ends, never inside a template literal (its text or its `${…}`), a block
// comment or a string continued by a backslash; feeding the text in pieces cuts it the same way.
func TestChunkerCutsOnlyWhereTheLexerIsClean(t *testing.T) {
	cases := []struct {
		name string
		text string
		want []string
	}{
		{"lines", "let a = 1;\nfunction f() {\n  return a;\n}\n",
			[]string{"let a = 1;\n", "function f() {\n", "  return a;\n", "}\n"}},
		{"template literal", "const s = `one\ntwo ${a +\nb} three\n`;\nlet x = 2;\n",
			[]string{"const s = `one\ntwo ${a +\nb} three\n`;\n", "let x = 2;\n"}},
		{"nested template", "const s = `a ${`b\n${c}`} d`;\nx;\n",
			[]string{"const s = `a ${`b\n${c}`} d`;\n", "x;\n"}},
		{"block comment", "/* a\n * b `\n */\nlet y = '`';\n",
			[]string{"/* a\n * b `\n */\n", "let y = '`';\n"}},
		{"string continued", "const s = 'a\\\nb';\nz;\n",
			[]string{"const s = 'a\\\nb';\n", "z;\n"}},
		{"regex with a quote and a slash in a class", "const r = /['`[/]/g; // `\nconst d = a / b / c;\n",
			[]string{"const r = /['`[/]/g; // `\n", "const d = a / b / c;\n"}},
		{"unterminated string ends at the line", "const s = 'abc\nx;\n",
			[]string{"const s = 'abc\n", "x;\n"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, ch := range (Syntax{}).Split(c.text) {
				if ch.Unclean {
					t.Errorf("chunk %q is unclean", ch.Text)
				}
				got = append(got, ch.Text)
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("chunks %q, want %q", got, c.want)
			}
			ck := NewChunker("", false)
			var pieces []string
			for i := 0; i < len(c.text); i += 3 {
				for _, ch := range ck.Write(c.text[i:min(i+3, len(c.text))]) {
					pieces = append(pieces, ch.Text)
				}
			}
			for _, ch := range ck.Flush() {
				pieces = append(pieces, ch.Text)
			}
			if strings.Join(pieces, "|") != strings.Join(c.want, "|") {
				t.Errorf("fed in pieces: chunks %q, want %q", pieces, c.want)
			}
		})
	}
}

// An open template literal or comment at the end of input is an unclean last chunk.
func TestChunkerFlushMarksAnOpenLiteralUnclean(t *testing.T) {
	chs := (Syntax{}).Split("let a = 1;\nconst s = `open\nstill\n")
	if len(chs) != 2 || chs[0].Unclean || !chs[1].Unclean || chs[1].Text != "const s = `open\nstill\n" {
		t.Fatalf("chunks %+v", chs)
	}
}

// Held lines (an open template literal or comment) have no closer: the engine's probes
// (engine/probe.go) never check TypeScript text early, where no closer keeps the lines as
// they are.
func TestChunkerHasNothingToClose(t *testing.T) {
	for _, text := range []string{"let a = 1;\nconst s = `open\nstill\n", "let a = 1;\n/* open\n", "let a = 1;\n"} {
		c := NewChunker("", false)
		c.Write(text)
		if held, closer, ok := c.Closable(); ok {
			t.Errorf("%q: Closable offers %q to close %q", text, closer, held.Text)
		}
	}
}

// Brace depth counts blocks in code only: not in strings, comments, regular expressions or a
// template literal's text, and a template's `${…}` is no block. ClosingBrace finds the '}'
// that closes the block of the insertion point.
func TestBraceDepth(t *testing.T) {
	cases := map[string]int{
		"function f() {\n": 1,
		"function f() {\n  const s = `}${ {a: 1}.a }`;\n": 1,
		"class C {\n  m() { return '}'; } // }\n":         1,
		"const r = /}/;\n{\n":                             1,
		"/* { */ const o = { a: { b: 1 } };\n":            0,
		"}\n}\n":                                          -2,
	}
	for text, want := range cases {
		if got := (Syntax{}).BraceDepth(text); got != want {
			t.Errorf("BraceDepth(%q) = %d, want %d", text, got, want)
		}
	}
	const prefix = "class C {\n  m(): number {\n"
	ck := NewChunker(prefix, false)
	if ck.Depth() != 2 {
		t.Fatalf("depth after the prefix %d, want 2", ck.Depth())
	}
	ck.Write("    return 1;\n")
	ck.Write("  } n() {}\n")
	if ck.Depth() != 1 {
		t.Fatalf("depth %d, want 1", ck.Depth())
	}
	if got, want := ck.ClosingBrace(2), len("    return 1;\n")+2; got != want {
		t.Errorf("ClosingBrace(2) = %d, want %d", got, want)
	}
	if got := ck.ClosingBrace(1); got != -1 {
		t.Errorf("ClosingBrace(1) = %d, want -1", got)
	}
}

func TestInCommentOrLiteral(t *testing.T) {
	cases := map[string]bool{
		"let a = ":                  false,
		"let a = 'abc":              true,
		"let a = `x ${":             false,
		"let a = `x ${b} ":          true,
		"// note ":                  true,
		"/* a\n b ":                 true,
		"/* a */ x":                 false,
		"const r = /ab":             true,
		"const d = a / b":           false,
		"let s = \"a\";\nlet t = 1": false,
	}
	for text, want := range cases {
		if got := (Syntax{}).InCommentOrLiteral(text); got != want {
			t.Errorf("InCommentOrLiteral(%q) = %v, want %v", text, got, want)
		}
	}
}

// TestNoCutInsideTypeArguments: a '<' after a name may open type arguments, which the parser
// reads as a comparison until their '>' comes, so there is no cut before it (a cut inside ends
// the text in an object type read as an object literal: "',' expected", not at the end). A
// comparison's '<' is let go at its statement's ';' or its bracket's close.
func TestNoCutInsideTypeArguments(t *testing.T) {
	text := "const m = new Map<\n  string,\n  {\n    due: number;\n    at: string;\n  }\n>();\n" +
		"let x = a < b;\nif (a < b) {\n  f(a < b,\n    c);\n}\nlet y = 1;\n"
	var got []string
	for _, ch := range (Syntax{}).Split(text) {
		got = append(got, ch.Text)
	}
	want := []string{"const m = new Map<\n  string,\n  {\n    due: number;\n    at: string;\n  }\n>();\n",
		"let x = a < b;\n", "if (a < b) {\n", "  f(a < b,\n    c);\n", "}\n", "let y = 1;\n"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("chunks %q,\nwant %q", got, want)
	}
}
