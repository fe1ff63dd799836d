package chunk

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/hydra-lsp/hydra/checkers"
)

// feed writes text in random pieces (as model tokens arrive) and flushes.
func feed(text string, opts Options, seed uint64) []Chunk {
	rng := rand.New(rand.NewPCG(seed, 1))
	c := New(opts)
	var out []Chunk
	for len(text) > 0 {
		n := 1 + rng.IntN(7)
		if n > len(text) {
			n = len(text)
		}
		out = append(out, c.Write(text[:n])...)
		text = text[n:]
	}
	return append(out, c.Flush()...)
}

func texts(chs []Chunk) []string {
	var s []string
	for _, ch := range chs {
		s = append(s, ch.Text)
	}
	return s
}

// TestCutsOnlyWhereLexerStateIsClean: each case lists the chunks the text must be cut into.
func TestCutsOnlyWhereLexerStateIsClean(t *testing.T) {
	tests := []struct {
		name   string
		opts   Options
		chunks []string
	}{
		{"every clean line is its own chunk", Options{},
			[]string{"int a;\n", "int b;\n", "int f() {\n", "  return a;\n", "}\n"}},
		{"block comment spanning lines stays whole", Options{},
			[]string{"int a; /* starts\n still inside\n ends */\n", "int b;\n"}},
		{"comment opener inside a string is not a comment", Options{},
			[]string{"const char *s = \"/*\";\n", "int b;\n"}},
		{"line comment mentioning block comment", Options{},
			[]string{"int a; // not a /* comment\n", "int b;\n"}},
		{"raw string spanning lines stays whole", Options{},
			[]string{"const char *s = R\"xy(line one\n\" )\" still raw \\\n)xy\";\n", "int b;\n"}},
		{"raw string with encoding prefix", Options{},
			[]string{"auto s = u8R\"(a\nb)\";\n", "int b;\n"}},
		{"string continued by a backslash", Options{},
			[]string{"const char *s = \"abc\\\ndef\";\n", "int b;\n"}},
		{"character literal with escaped quote", Options{},
			[]string{"char q = '\\'';\n", "int b;\n"}},
		{"unterminated string ends at the newline", Options{},
			[]string{"const char *s = \"abc;\n", "int b;\n"}},
		{"backslash continuation of a macro", Options{},
			[]string{"#define TWICE(x) \\\n  ((x) + \\\n   (x))\n", "int b;\n"}},
		{"backslash continuation with trailing blanks", Options{},
			[]string{"#define A 1 \\  \n  + 2\n", "int b;\n"}},
		{"line comment continued by a backslash", Options{},
			[]string{"int a; // comment \\\n still comment\n", "int b;\n"}},
		{"open #if keeps everything to #endif", Options{},
			[]string{"int a;\n", "#if defined(X)\nint b;\n#else\nint c;\n#endif\n", "int d;\n"}},
		{"nested #ifdef and #ifndef", Options{},
			[]string{"int a;\n", "#ifdef A\n# ifndef B\nint b;\n# endif\n#endif\n", "int d;\n"}},
		{"#if inside a comment does not open", Options{},
			[]string{"int a;\n", "// #if 0\n", "int b;\n"}},
		{"identifier at line end waits for a ( on the next line", Options{},
			[]string{"int a = MAX\n  (1, 2);\n", "int b;\n"}},
		{"identifier at line end cut when no ( follows", Options{},
			[]string{"struct point\n", "{\n", "  int x;\n", "};\n"}},
		{"identifier hold looks past blank and comment lines", Options{},
			[]string{"int a = MAX\n\n// why\n  (1, 2);\n", "int b;\n"}},
		{"held identifier, then a comment that ends on a line with tokens", Options{},
			[]string{"int a = f(x)\n", "/* c\n */;\n", "int b;\n"}},
		{"held ')', then a comment closed before a directive", Options{},
			[]string{"_Pragma(\"once\")\n", "/*\n*/#\n", "int b;\n"}},
		{"identifier in a directive is not held", Options{},
			[]string{"#define N 10\n", "#define M N\n", "int a[M];\n"}},
		{"identifier before a line comment is held", Options{},
			[]string{"int a = f // call\n(3);\n", "int b;\n"}},
		{"digit separator is not a character literal", Options{},
			[]string{"int a = 1'000'000;\n", "int b;\n"}},
		{"C without digit separators", Options{NoDigitSeparators: true},
			[]string{"int a = 1;\n", "char c = 'x';\n"}},
		{"ISO C has no raw strings", Options{NoRawStrings: true},
			[]string{"int R = 1;\n", "int b = R\n", "  + 1;\n"}},
		{"byte order mark before a directive", Options{},
			[]string{"\xEF\xBB\xBF#if 1\nint a;\n#endif\n", "int b;\n"}},
		{"CRLF line ends", Options{},
			[]string{"int a;\r\n", "int b = 1 + \\\r\n 2;\r\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := strings.Join(tt.chunks, "")
			for seed := uint64(0); seed < 4; seed++ {
				got := texts(feed(text, tt.opts, seed))
				if !reflect.DeepEqual(got, tt.chunks) {
					t.Fatalf("seed %d: chunks\n got %q\nwant %q", seed, got, tt.chunks)
				}
			}
		})
	}
}

// TestFlushEmitsUncleanTail: what is left at the end of input is emitted, marked unclean.
func TestFlushEmitsUncleanTail(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		last    string
		unclean bool
	}{
		{"unterminated block comment", "int a;\n/* never closed\nint b;\n", "/* never closed\nint b;\n", true},
		{"unterminated #if", "int a;\n#if 1\nint b;\n", "#if 1\nint b;\n", true},
		{"unterminated raw string", "auto s = R\"(abc\n", "auto s = R\"(abc\n", true},
		{"dangling continuation", "int a = 1 + \\\n", "int a = 1 + \\\n", true},
		{"last line without newline is clean", "int a;\nint b;", "int b;", false},
		{"held identifier is flushed clean", "int a;\nint b = c\n", "int b = c\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chs := feed(tt.text, Options{}, 7)
			if strings.Join(texts(chs), "") != tt.text {
				t.Fatalf("chunks %q do not add up to the input", texts(chs))
			}
			last := chs[len(chs)-1]
			if last.Text != tt.last || last.Unclean != tt.unclean {
				t.Fatalf("last chunk %q unclean=%v, want %q unclean=%v", last.Text, last.Unclean, tt.last, tt.unclean)
			}
			for _, ch := range chs[:len(chs)-1] {
				if ch.Unclean {
					t.Errorf("chunk %q before the tail marked unclean", ch.Text)
				}
			}
		})
	}
}

// TestOffsetsAreContiguous: chunk offsets cover the stream without gaps.
func TestOffsetsAreContiguous(t *testing.T) {
	text := "#include <stdio.h>\n/* c */\nint main(void) {\n  printf(\"%d\\n\", 1);\n  return 0;\n}\n"
	off := 0
	for _, ch := range feed(text, Options{}, 3) {
		if ch.Off != off {
			t.Fatalf("chunk %q at %d, want %d", ch.Text, ch.Off, off)
		}
		off = ch.End()
	}
	if off != len(text) {
		t.Fatalf("chunks end at %d, text is %d bytes", off, len(text))
	}
}

// TestBoundaryCategories: preamble, top-level declarations, statements and other lines.
func TestBoundaryCategories(t *testing.T) {
	text := "// header comment\n#include <stdio.h>\n\n#include <stdlib.h>\n/** doc */\nint g;\nint main(void)\n{\n  int x = 1;\n  if (x) {\n    x++;\n  }\n  return x +\n    1;\n}\n#define LATE 1\n"
	type cut struct {
		text string
		cat  string
		pe   bool
	}
	want := []cut{
		{"// header comment\n", checkers.BoundaryPreamble, false},
		{"#include <stdio.h>\n", checkers.BoundaryPreamble, false},
		{"\n", checkers.BoundaryPreamble, false},
		{"#include <stdlib.h>\n", checkers.BoundaryPreamble, true},
		{"/** doc */\n", checkers.BoundaryLine, false},
		{"int g;\n", checkers.BoundaryDecl, false},
		{"int main(void)\n", checkers.BoundaryLine, false},
		{"{\n", checkers.BoundaryLine, false},
		{"  int x = 1;\n", checkers.BoundaryStmt, false},
		{"  if (x) {\n", checkers.BoundaryLine, false},
		{"    x++;\n", checkers.BoundaryStmt, false},
		{"  }\n", checkers.BoundaryStmt, false},
		{"  return x +\n", checkers.BoundaryLine, false},
		{"    1;\n", checkers.BoundaryStmt, false},
		{"}\n", checkers.BoundaryDecl, false},
		{"#define LATE 1\n", checkers.BoundaryLine, false},
	}
	var got []cut
	for _, ch := range feed(text, Options{}, 11) {
		got = append(got, cut{ch.Text, ch.Cat, ch.PreambleEnd})
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%+v\nwant\n%+v", got, want)
	}
}

func TestPreambleEnd(t *testing.T) {
	tests := []struct {
		name string
		text string
		want int
	}{
		{"includes then code", "#include <a.h>\n#include <b.h>\nint x;\n", len("#include <a.h>\n#include <b.h>\n")},
		{"comments inside the preamble belong to it", "/* lic */\n#include <a.h>\n// c\n#include <b.h>\n\n// doc\nint x;\n", len("/* lic */\n#include <a.h>\n// c\n#include <b.h>\n")},
		{"conditional include block", "#ifdef _WIN32\n#include <w.h>\n#endif\nint x;\n", len("#ifdef _WIN32\n#include <w.h>\n#endif\n")},
		{"no preamble", "int x;\n#include <a.h>\n", 0},
		{"only a preamble", "#include <a.h>\n", len("#include <a.h>\n")},
		{"after a byte order mark", "\xEF\xBB\xBF#include <a.h>\nint x;\n", len("\xEF\xBB\xBF#include <a.h>\n")},
		{"code inside an #if ends the preamble before it", "#include <a.h>\n#if 1\nint y;\n#endif\n", len("#include <a.h>\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PreambleEnd(tt.text, Options{}); got != tt.want {
				t.Fatalf("PreambleEnd = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestBraceDepth(t *testing.T) {
	tests := []struct {
		name string
		text string
		want int
	}{
		{"open function body", "int f() {\n  if (x) {\n", 2},
		{"closed", "int f() {\n}\n", 0},
		{"braces in strings, chars and comments do not count", "int f() { const char *s = \"{{\"; char c = '{'; /* { */ // {\n", 1},
		{"braces in a raw string do not count", "auto s = R\"({{{\n}})\"; {\n", 1},
		{"braces in directives do not count", "#define OPEN {\nint f() {\n", 1},
		{"a stream starting inside a block goes negative", "  return 1;\n}\n", -1},
		{"last line without newline counts after flush", "int f() {", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := BraceDepth(tt.text, Options{}); got != tt.want {
				t.Fatalf("BraceDepth = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestOptionsForFlags(t *testing.T) {
	iso := Options{Trigraphs: true}
	tests := []struct {
		flags []string
		file  string
		want  Options
	}{
		{nil, "a.cpp", Options{}},
		{nil, "a.c", Options{NoDigitSeparators: true}},
		{[]string{"-std=c11"}, "a.c", Options{NoRawStrings: true, NoDigitSeparators: true, Trigraphs: true}},
		{[]string{"-std=gnu11"}, "a.c", Options{NoDigitSeparators: true}},
		{[]string{"-std=gnu89"}, "a.c", Options{NoRawStrings: true, NoDigitSeparators: true, NoUTFLiterals: true}},
		{[]string{"-std=gnu99"}, "a.c", Options{NoDigitSeparators: true, NoUTFLiterals: true}},
		{[]string{"-std=c89"}, "a.c", Options{NoRawStrings: true, NoDigitSeparators: true, Trigraphs: true, NoLineComments: true, NoDigraphs: true, NoUTFLiterals: true}},
		{[]string{"-ansi"}, "a.c", Options{NoRawStrings: true, NoDigitSeparators: true, Trigraphs: true, NoLineComments: true, NoDigraphs: true, NoUTFLiterals: true}},
		{[]string{"-std=iso9899:199409"}, "a.c", Options{NoRawStrings: true, NoDigitSeparators: true, Trigraphs: true, NoLineComments: true, NoUTFLiterals: true}},
		{[]string{"-ansi"}, "a.cpp", Options{NoRawStrings: true, NoDigitSeparators: true, Trigraphs: true, NoUTFLiterals: true}},
		{[]string{"-std=c++98"}, "a.cpp", Options{NoRawStrings: true, NoDigitSeparators: true, Trigraphs: true, NoUTFLiterals: true}},
		{[]string{"-std=gnu++98"}, "a.cpp", Options{NoRawStrings: true, NoDigitSeparators: true, NoUTFLiterals: true}},
		{[]string{"-std=c++11"}, "a.cpp", Options{NoDigitSeparators: true, Trigraphs: true}},
		{[]string{"-std=c++14"}, "a.cpp", iso},
		{[]string{"-std=c++17"}, "a.cpp", Options{}},
		{[]string{"-std=c++17", "-trigraphs"}, "a.cpp", iso},
		{[]string{"-std=c++14", "-fno-trigraphs"}, "a.cpp", Options{}},
		{[]string{"-std=c++14", "-fno-trigraphs", "-ftrigraphs"}, "a.cpp", iso},
		{[]string{"-std=c23"}, "a.c", Options{NoRawStrings: true, Trigraphs: true}},
		{[]string{"-std=c2y"}, "a.c", Options{NoRawStrings: true, Trigraphs: true}},
		{[]string{"-std=gnu2y"}, "a.c", Options{}},
		{[]string{"--std=c11"}, "a.c", Options{NoRawStrings: true, NoDigitSeparators: true, Trigraphs: true}},
		{[]string{"--std", "c11"}, "a.c", Options{NoRawStrings: true, NoDigitSeparators: true, Trigraphs: true}},
		// clang's driver has no "-std X": the value is an input file, the standard the default.
		{[]string{"-std", "c11"}, "a.c", Options{NoDigitSeparators: true}},
		{[]string{"-std=c11", "-std=gnu11"}, "a.c", Options{NoDigitSeparators: true}},
		{[]string{"-ansi", "-std=gnu11"}, "a.c", Options{NoDigitSeparators: true}},
		{[]string{"-std=c11", "-fraw-string-literals"}, "a.c", Options{NoDigitSeparators: true, Trigraphs: true}},
		{[]string{"-fno-raw-string-literals"}, "a.c", Options{NoRawStrings: true, NoDigitSeparators: true}},
		{[]string{"-fno-raw-string-literals"}, "a.cpp", Options{}}, // ignored from C++11 on
		{[]string{"-std=c++98", "-fraw-string-literals"}, "a.cpp", Options{NoDigitSeparators: true, Trigraphs: true, NoUTFLiterals: true}},
		{[]string{"-std=c11"}, "a.cpp", Options{}}, // a C standard for C++: clang refuses it
		{[]string{"-x", "c", "-std=c23"}, "a.cpp", Options{NoRawStrings: true, Trigraphs: true}},
		{[]string{"--language=c", "-std=c23"}, "a.cpp", Options{NoRawStrings: true, Trigraphs: true}},
		{[]string{"--language", "objective-c"}, "a.cpp", Options{NoDigitSeparators: true}},
		{[]string{"-xc++"}, "a.c", Options{}},
		{[]string{"-x", "c++-header", "-std=c++11"}, "a.c", Options{NoDigitSeparators: true, Trigraphs: true}},
		{[]string{"-fno-digraphs"}, "a.cpp", Options{NoDigraphs: true}},
	}
	for _, tt := range tests {
		if got := OptionsForFlags(tt.flags, tt.file); got != tt.want {
			t.Errorf("OptionsForFlags(%q, %q) = %+v, want %+v", tt.flags, tt.file, got, tt.want)
		}
	}
}

func TestNewAfterStartsAtThePrefixDepth(t *testing.T) {
	prefix := "int f(int x) {\n  if (x) {\n"
	body := "    x++;\n  }\n  return x;\n}\n"
	var cats []string
	c := NewAfter(Options{}, prefix)
	for _, ch := range append(c.Write(body), c.Flush()...) {
		cats = append(cats, ch.Cat)
	}
	// Fed after the prefix, the statements inside the function are statements and only the
	// function's closing brace ends a declaration — as Split sees them in the whole text.
	want := []string{checkers.BoundaryStmt, checkers.BoundaryStmt, checkers.BoundaryStmt, checkers.BoundaryDecl}
	if strings.Join(cats, ",") != strings.Join(want, ",") {
		t.Errorf("categories after the prefix = %v, want %v", cats, want)
	}
	var whole []string
	for _, ch := range Split(prefix+body, Options{}) {
		if ch.Off >= len(prefix) {
			whole = append(whole, ch.Cat)
		}
	}
	if strings.Join(whole, ",") != strings.Join(cats, ",") {
		t.Errorf("Split of the whole text says %v for the same lines, NewAfter %v", whole, cats)
	}
	if c.Depth() != 0 {
		t.Errorf("depth at the end = %d, want 0", c.Depth())
	}
}
