package engine

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/chunk"
	"github.com/hydra-lsp/hydra/engine/model"
)

func TestSpawnPromptPutsFeedbackLastAndStripsBack(t *testing.T) {
	cases := []struct {
		name, prompt, prefix, base, feedback string
	}{
		{"at a line start", "// task\nint f() {\n", "int f() {\n", "int f() {\n  int a;\n", "line 3: use of undeclared identifier 'x'"},
		{"mid-line prefix", "int f() {", "int f() {", "int f() {", "line 1: expected ';'"},
		{"multi-line feedback", "P\n", "P\n", "P\nx;\n", "first\nsecond"},
		{"no feedback", "P\n", "P\n", "P\nx;\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := spawnPrompt("//", c.prompt, c.prefix, c.base, c.feedback)
			code := c.prompt + c.base[len(c.prefix):]
			if !strings.HasPrefix(p, code) {
				t.Fatalf("prompt %q does not start with the prompt and accepted text %q (prefix cache reuse)", p, code)
			}
			gotCode, gotFB := StripFeedback(p)
			if gotCode != code || gotFB != strings.TrimSpace(c.feedback) {
				t.Errorf("StripFeedback = %q, %q; want %q, %q", gotCode, gotFB, code, c.feedback)
			}
			if c.feedback != "" && !strings.HasSuffix(p, "\n") {
				t.Errorf("prompt %q does not end the comment's line", p)
			}
		})
	}
}

func TestCutterStopsWhenConstructCloses(t *testing.T) {
	cases := []struct {
		name, prefix, suffix string
		pieces               []string
		want                 string
	}{
		{"function body closes", "int f() {\n", "", []string{"  return 1;\n", "}\n", "int g() { return 2; }\n"}, "  return 1;\n}\n"},
		{"closing line kept whole", "int f() {\n", "", []string{"  if (x) {\n  }\n", "} // end\nint junk;\n"}, "  if (x) {\n  }\n} // end\n"},
		{"top-level construct", "// write f\n", "", []string{"int f() {\n", "  return 1;\n}\nint main(){}\n"}, "int f() {\n  return 1;\n}\n"},
		{"braces in comments and strings ignored", "int f() {\n", "", []string{"  // }\n  const char *s = \"}\";\n", "}\nextra\n"}, "  // }\n  const char *s = \"}\";\n}\n"},
		{"suffix closes the block", "int f() {\n", "}\n", []string{"  return 1;\n}\n", "int g;\n"}, "  return 1;\n"},
		{"closing brace after a literal", "int f() {\n", "}\n", []string{"  return \"}\"[0]; }\n"}, "  return \"}\"[0]; "},
		{"closing brace after a digit separator", "int f() {\n", "}\n", []string{"  x = 1'000; }\n"}, "  x = 1'000; "},
		{"closing brace after a comment from an earlier line", "int f() {\n", "}\n", []string{"  /* }\n", "*/ x = 1; }\n"}, "  /* }\n*/ x = 1; "},
		{"unclosed at end of stream", "int f() {\n", "", []string{"  return 1;\n", "  x"}, "  return 1;\n  x"},
		// The suffix brings its own indented brace: the generated one's blanks are not kept
		// (a class method, an indented namespace, a nested block, tabs).
		{"indented method closes", "struct S {\n  int f() {\n", "  }\n};\n", []string{"    return 1;\n", "  }\n", "  int g;\n"}, "    return 1;\n"},
		{"deeper indentation", "namespace n {\n  void f() {\n    if (x) {\n", "    }\n  }\n}\n", []string{"      y();\n    }\n"}, "      y();\n"},
		{"tab indentation", "void f() {\n\tif (x) {\n", "\t}\n}\n", []string{"\t\ty();\n\t}\n"}, "\t\ty();\n"},
		{"mid-line, suffix padded", "int f() { return ", " }\n", []string{"1; ", "}\nint g;\n"}, "1;"},
		{"code before the brace, suffix indented", "void f() {\n  if (x) {\n", "  }\n}\n", []string{"    y(); }\n"}, "    y();"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSearch(nil, nil, Request{Prefix: c.prefix, Suffix: c.suffix, StopAtClose: true, Filename: "a.cc"})
			cu := newCutter(s, c.prefix)
			var got strings.Builder
			stopped := false
			for _, p := range c.pieces {
				out, stop := cu.feed(p)
				got.WriteString(out)
				if stop {
					stopped = true
					break
				}
			}
			if !stopped {
				got.WriteString(cu.flush())
			}
			if got.String() != c.want {
				t.Errorf("kept %q, want %q", got.String(), c.want)
			}
		})
	}
}

func TestCutterStopSequenceAcrossPieces(t *testing.T) {
	s := newSearch(nil, nil, Request{Params: model.Params{Stop: []string{"\nint main"}}, Filename: "a.cc"})
	cu := newCutter(s, "")
	var got strings.Builder
	for _, p := range []string{"int f();\n", "int", " helper;\nin", "t main() {}\n"} {
		out, stop := cu.feed(p)
		got.WriteString(out)
		if stop {
			break
		}
	}
	if got.String() != "int f();\nint helper;" {
		t.Errorf("kept %q, want the text before the stop sequence", got.String())
	}
}

func TestChunkerOffsetsResumeMidText(t *testing.T) {
	// The engine feeds the chunker from a checkpoint's offset: chunk offsets are relative.
	text := "#include <stdio.h>\nint a;\nint b;\n"
	chs := chunk.Split(text[19:], chunk.Options{})
	if len(chs) == 0 || 19+chs[len(chs)-1].End() != len(text) {
		t.Fatalf("chunks %+v do not cover the text after the resume point", chs)
	}
}

// The feedback on an error carries the checker's notes, with their places, within a budget.
func TestFeedbackCarriesNotesWithinABudget(t *testing.T) {
	n := &Node{Kind: NodeError, Line: 9, Diag: "no matching function for call to 'f'", Notes: []checkers.Note{
		{Off: 10, Line: 2, Diag: "candidate function not viable: no known conversion from 'const char[2]' to 'int' for 1st argument"},
		{File: "/usr/include/c++/12/bits/stl_vector.h", Line: 1280, Diag: "in instantiation of member function requested here"},
	}}
	got := FeedbackFor(n)
	want := "the previous attempt failed to compile at line 9: no matching function for call to 'f'\n" +
		"note: line 2: candidate function not viable: no known conversion from 'const char[2]' to 'int' for 1st argument\n" +
		"note: /usr/include/c++/12/bits/stl_vector.h:1280: in instantiation of member function requested here"
	if got != want {
		t.Errorf("feedback:\n%s\nwant:\n%s", got, want)
	}

	var many []checkers.Note
	for i := 0; i < 20; i++ {
		many = append(many, checkers.Note{Line: i + 1, Diag: strings.Repeat("é", 300)})
	}
	got = FeedbackFor(&Node{Kind: NodeError, Line: 1, Diag: "x", Notes: many})
	lines := strings.Split(got, "\n")
	if len(lines) < 2 || len(lines) > 1+maxFeedbackNotes {
		t.Fatalf("%d lines of feedback for 20 notes; want 1 + between 1 and %d", len(lines), maxFeedbackNotes)
	}
	total := 0
	for _, l := range lines[1:] {
		if len(l) > maxFeedbackNoteLen || !utf8.ValidString(l) || !strings.HasPrefix(l, "note: line ") {
			t.Errorf("note line %q: longer than %d bytes, invalid UTF-8, or without its place", l, maxFeedbackNoteLen)
		}
		total += len(l) + 1
	}
	if total > maxFeedbackNotesLen {
		t.Errorf("notes take %d bytes, budget %d", total, maxFeedbackNotesLen)
	}
}
