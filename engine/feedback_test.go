package engine

import (
	"strings"
	"testing"

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
			p := spawnPrompt(c.prompt, c.prefix, c.base, c.feedback)
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
		{"mid-line insertion, suffix closes", "int f() { return ", " }\n", []string{"1; ", "}\nint g;\n"}, "1; "},
		{"closing brace after a literal", "int f() {\n", "}\n", []string{"  return \"}\"[0]; }\n"}, "  return \"}\"[0]; "},
		{"closing brace after a digit separator", "int f() {\n", "}\n", []string{"  x = 1'000; }\n"}, "  x = 1'000; "},
		{"closing brace after a comment from an earlier line", "int f() {\n", "}\n", []string{"  /* }\n", "*/ x = 1; }\n"}, "  /* }\n*/ x = 1; "},
		{"unclosed at end of stream", "int f() {\n", "", []string{"  return 1;\n", "  x"}, "  return 1;\n  x"},
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
