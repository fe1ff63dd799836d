package chunk

import (
	"reflect"
	"strings"
	"testing"
)

// TestCutsFollowClangsLexer: each case, lexed in the language mode its flags give, must be cut
// into the chunks it lists (each case was checked against clang-19: a cut anywhere else is
// inside a comment, literal, directive or splice, or separates what clang reads as one).
func TestCutsFollowClangsLexer(t *testing.T) {
	tests := []struct {
		name   string
		flags  []string
		file   string
		chunks []string
	}{
		{"trigraph splice continues a // comment (c99)", []string{"-std=c99"}, "a.c",
			[]string{"int a; // x ??/\nint b = ;\n", "int c;\n"}},
		{"no trigraphs in gnu99", []string{"-std=gnu99"}, "a.c",
			[]string{"int a; // x ??/\n", "int b = ;\n", "int c;\n"}},
		{"trigraph splice in c++14", []string{"-std=c++14"}, "a.cpp",
			[]string{"int a = 1 ??/\n+ 2;\n", "int c;\n"}},
		{"-trigraphs turns them on in c++17", []string{"-std=c++17", "-trigraphs"}, "a.cpp",
			[]string{"int a = 1 ??/\n+ 2;\n", "int c;\n"}},
		{"??= starts a directive", []string{"-std=c11"}, "a.c",
			[]string{"??=if 0\nint x = ;\n??=endif\n", "int b;\n"}},
		{"??< and ??> are braces", []string{"-std=c11"}, "a.c",
			[]string{"int f(void) ??<\n", "  return 0;\n", "??>\n"}},
		{"splice inside a comment opener", nil, "a.c",
			[]string{"int a; /\\\n* c\nd */\n", "int b;\n"}},
		{"splice inside a raw-string opener", nil, "a.cpp",
			[]string{"const char *s = R\\\n\"(a\nb)\";\n", "int b;\n"}},
		{"splice inside a directive name", nil, "a.c",
			[]string{"#i\\\nf 0\nint x = ;\n#endif\n", "int b;\n"}},
		{"splice ending in a lone CR", nil, "a.c",
			[]string{"int a = 1 \\\r+ 2; /* x\n*/\n", "int b;\n"}},
		{"raw string on a directive line", nil, "a.cpp",
			[]string{"#define S R\"(\n)\"\n", "int b;\n"}},
		{"raw string in a skipped block hides #endif", nil, "a.cpp",
			[]string{"#if 0\nR\"(\n#endif\n)\"\n#endif\n", "int b;\n"}},
		{"no raw strings in c++98", []string{"-std=c++98"}, "a.cpp",
			[]string{"const char *s = R\"(;\n", "int b;\n"}},
		{"no raw strings with -ansi", []string{"-ansi"}, "a.cpp",
			[]string{"const char *s = R\"(;\n", "int b;\n"}},
		{"no raw strings in gnu89", []string{"-std=gnu89"}, "a.c",
			[]string{"const char *s = R\"(;\n", "int b;\n"}},
		{"raw strings in gnu99", []string{"-std=gnu99"}, "a.c",
			[]string{"const char *s = LR\"(;\n)\";\n", "int b;\n"}},
		{"no u8R raw strings in gnu99", []string{"-std=gnu99"}, "a.c",
			[]string{"const char *s = u8R\"(;\n", "int b;\n"}},
		{"no raw strings with --std=c11", []string{"--std=c11"}, "a.c",
			[]string{"const char *s = R\"(;\n", "int b;\n"}},
		{"-fraw-string-literals in c11", []string{"-std=c11", "-fraw-string-literals"}, "a.c",
			[]string{"const char *s = R\"(;\n)\";\n", "int b;\n"}},
		{"empty comment before #", nil, "a.c",
			[]string{"/**/ #if 0\nint x = ;\n#endif\n", "int b;\n"}},
		{"comment between # and the name", nil, "a.c",
			[]string{"#/**/if 0\nint x = ;\n#endif\n", "int b;\n"}},
		{"digraph %: starts a directive", nil, "a.c",
			[]string{"%:if 0\nint x = ;\n%:endif\n", "int b;\n"}},
		{"no digraphs in c89", []string{"-std=c89"}, "a.c",
			[]string{"%:if 0\n", "int x = ;\n", "%:endif\n"}},
		{"multi-line comment before # at a line start", nil, "a.c",
			[]string{"/* a\n*/ #if 0\nint x = ;\n#endif\n", "int b;\n"}},
		{"# after a token and a multi-line comment is no directive", nil, "a.c",
			[]string{"int q; /* a\n*/ #if 0\n", "int b;\n"}},
		{"a lone CR ends a directive", nil, "a.c",
			[]string{"#if 0\rint x = ;\r#endif\rint y;\n", "int b;\n"}},
		{"a lone CR ends a line comment", nil, "a.c",
			[]string{"// c\rint a = 1 + /* x\n*/ 2;\n", "int b;\n"}},
		{"//* in c89 is a division and a comment", []string{"-std=c89"}, "a.c",
			[]string{"int a = 4 //* x\n*/ 2;\n", "int b;\n"}},
		{"//* in gnu89 is a line comment", []string{"-std=gnu89"}, "a.c",
			[]string{"int a = 4 //* x\n", "*/ 2;\n"}},
		{"// in c89 without a * is a comment", []string{"-std=c89"}, "a.c",
			[]string{"int a = 4; // x /*\n", "int b;\n"}},
		{"digit separator in c2y", []string{"-std=c2y"}, "a.c",
			[]string{"int x = 1'000 /* '\n*/;\n", "int b;\n"}},
		{"no digit separator in c17", []string{"-std=c17"}, "a.c",
			[]string{"int x = 1'000 /* '\n", "*/;\n"}},
		{"no digit separator in c++11", []string{"-std=c++11"}, "a.cpp",
			[]string{"int x = 1'000 /* '\n", "*/;\n"}},
		{"a macro name made by expansion at a line end", nil, "a.c",
			[]string{"int y = ID(F)\n(1);\n", "int b;\n"}},
		{"a ) at a line end is cut when no ( follows", nil, "a.c",
			[]string{"if (x)\n", "  y();\n"}},
		{"assume_nonnull begin … end", nil, "a.c",
			[]string{"int a;\n", "#pragma clang assume_nonnull begin\nint *p;\n#pragma clang assume_nonnull end\n", "int b;\n"}},
		{"arc_cf_code_audited begin … end", nil, "a.c",
			[]string{"#pragma clang arc_cf_code_audited begin\nint *p;\n#pragma clang arc_cf_code_audited end\n", "int b;\n"}},
		{"a header name is not a comment", nil, "a.c",
			[]string{"#include <a/*b.h>\n", "int b;\n"}},
		{"a directive continued by a comment", nil, "a.c",
			[]string{"#define A 1 /* x\n*/ + 2\n", "int b;\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := OptionsForFlags(tt.flags, tt.file)
			text := strings.Join(tt.chunks, "")
			for seed := uint64(0); seed < 4; seed++ {
				got := texts(feed(text, opts, seed))
				if !reflect.DeepEqual(got, tt.chunks) {
					t.Fatalf("seed %d: chunks\n got %q\nwant %q", seed, got, tt.chunks)
				}
			}
		})
	}
}

// TestClosingBrace: the offset of the '}' that takes the depth below a level, on the last line.
func TestClosingBrace(t *testing.T) {
	tests := []struct {
		name, prefix, line string
		opts               Options
		d                  int
		want               int // offset in line, -1 for none
	}{
		{"digit separator before the brace", "void f() {\n", "x = 1'000; }\n", Options{}, 1, 11},
		{"brace in a string is skipped", "void f() {\n", "s = \"}\"; }\n", Options{}, 1, 9},
		{"brace in a block comment from an earlier line", "void f() {\n/* a\n", "} */ }\n", Options{}, 1, 5},
		{"a trigraph brace", "void f() {\n", "x = 1; ??>\n", Options{Trigraphs: true}, 1, 7},
		{"a digraph brace", "void f() <%\n", "x = 1; %>\n", Options{}, 1, 7},
		{"no brace below the level", "void f() {\n", "{ x = 1; }\n", Options{}, 1, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(tt.opts)
			c.Write(tt.prefix)
			at := c.Offset()
			c.Write(tt.line)
			got := c.ClosingBrace(tt.d)
			if got >= 0 {
				got -= at
			}
			if got != tt.want {
				t.Fatalf("ClosingBrace = %d, want %d", got, tt.want)
			}
		})
	}
}
