package chunk

import (
	"testing"

	"github.com/hydra-lsp/hydra/checkers"
)

// TestClosable: what Closable holds and closes after each text. The held text is everything
// after the last chunk returned (complete lines only); the closer has one #endif per
// conditional still open, and nothing is closable where something else keeps the cut away.
func TestClosable(t *testing.T) {
	tests := []struct {
		name, text string
		ok         bool
		held       string
		off        int
		closer     string
		cat        string
		depth      int
	}{
		{name: "nothing held", text: "int a;\n", ok: false},
		{name: "open #if with a function", text: "int a;\n#if 1\nint f(void) {\n  int x = 1;\n  return x;\n", ok: true,
			held: "#if 1\nint f(void) {\n  int x = 1;\n  return x;\n", off: 7, closer: "#endif\n", cat: checkers.BoundaryStmt, depth: 1},
		{name: "nested, the inner one closed", text: "int a;\n#if 1\n#ifdef X\n#endif\nint f(void) {\n", ok: true,
			held: "#if 1\n#ifdef X\n#endif\nint f(void) {\n", off: 7, closer: "#endif\n", cat: checkers.BoundaryLine, depth: 1},
		{name: "two open", text: "#if 1\n#ifndef Y\nint f(void) {\n  g();\n", ok: true,
			held: "#if 1\n#ifndef Y\nint f(void) {\n  g();\n", off: 0, closer: "#endif\n#endif\n", cat: checkers.BoundaryStmt, depth: 1},
		{name: "#else changes no depth", text: "int a;\n#if 0\nbad\n#else\nint b;\n", ok: true,
			held: "#if 0\nbad\n#else\nint b;\n", off: 7, closer: "#endif\n", cat: checkers.BoundaryDecl, depth: 0},
		{name: "the last line not complete", text: "int a;\n#if 1\nint b;\nint c", ok: true,
			held: "#if 1\nint b;\n", off: 7, closer: "#endif\n", cat: checkers.BoundaryDecl},
		{name: "a comment open inside", text: "int a;\n#if 1\n/* note\n", ok: false},
		{name: "a spliced line waits for its end", text: "int a;\n#if 1\n#define M \\\n", ok: true,
			held: "#if 1\n", off: 7, closer: "#endif\n", cat: checkers.BoundaryLine},
		{name: "a pragma region open", text: "int a;\n#if 1\n#pragma clang assume_nonnull begin\n", ok: false},
		{name: "closed again", text: "int a;\n#if 1\nint b;\n#endif\n", ok: false},
		{name: "held preamble chunks come along", text: "#include <stdio.h>\n#if 1\nint b;\n", ok: true,
			held: "#include <stdio.h>\n#if 1\nint b;\n", off: 0, closer: "#endif\n", cat: checkers.BoundaryDecl},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(Options{})
			c.Write(tt.text)
			held, closer, ok := c.Closable()
			if ok != tt.ok {
				t.Fatalf("ok=%v, want %v (held %q)", ok, tt.ok, held.Text)
			}
			if !ok {
				return
			}
			if held.Text != tt.held || held.Off != tt.off || closer != tt.closer || held.Cat != tt.cat || held.Depth != tt.depth {
				t.Errorf("held %q at %d (cat %s, depth %d), closer %q; want %q at %d (cat %s, depth %d), closer %q",
					held.Text, held.Off, held.Cat, held.Depth, closer, tt.held, tt.off, tt.cat, tt.depth, tt.closer)
			}
			// The held text and the closer are cut as one clean chunk.
			chs := Split(held.Text+closer, Options{})
			if last := chs[len(chs)-1]; last.Unclean || last.End() != len(held.Text+closer) {
				t.Errorf("held text + closer does not end at a clean cut: %+v", chs)
			}
		})
	}
}
