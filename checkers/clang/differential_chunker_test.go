package clang

import "testing"

// chunkerCases are the lexer corners where a chunker that cut in the wrong place (inside a
// comment, literal, directive or splice, or between a macro's name and its '(') would make the
// checker disagree with whole-file clang, in the language modes that change how clang lexes
// them. Each has an error after the corner, or none, so that both a wrong cut and a wrong merge
// show in the verdict or the first error line.
var chunkerCases = []diffCase{
	// Trigraphs: on in the ISO modes before C++17, off in GNU modes; -trigraphs/-fno-trigraphs.
	{"trigraph splice in // comment, c99", "t.c", []string{"-std=c99"}, "int a; // x ??/\nint b = ;\nint c;\n"},
	{"trigraph splice in // comment, c11", "t.c", []string{"-std=c11"}, "int a; // x ??/\nint b = ;\nint c = ;\n"},
	{"trigraph splice in // comment, c17", "t.c", []string{"-std=c17"}, "int a; // x ??/\nint b = ;\n"},
	{"no trigraphs in gnu11", "t.c", []string{"-std=gnu11"}, "int a; // x ??/\nint b = ;\n"},
	{"trigraph splice, c++98", "t.cpp", []string{"-std=c++98"}, "int a = 1 ??/\n+ 2;\nint b = ;\n"},
	{"trigraph splice, c++14", "t.cpp", []string{"-std=c++14"}, "int a; // x ??/\nint b = ;\nint c;\n"},
	{"trigraphs off in c++17", "t.cpp", []string{"-std=c++17"}, "int a; // x ??/\nint b = ;\n"},
	{"-trigraphs in c++17", "t.cpp", []string{"-std=c++17", "-trigraphs"}, "int a; // x ??/\nint b = ;\nint c;\n"},
	{"-fno-trigraphs in c99", "t.c", []string{"-std=c99", "-fno-trigraphs"}, "int a; // x ??/\nint b = ;\n"},
	{"??= directives", "t.c", []string{"-std=c11"}, "??=if 0\nint x = ;\n??=endif\nint y;\nint z = ;\n"},
	{"??= directives accepted", "t.c", []string{"-std=c99"}, "??=define N 3\n??=if N\nint x = N;\n??=endif\n"},
	{"??< ??> braces", "t.c", []string{"-std=c11"}, "int f(void) ??<\n  return 0;\n??>\nint g = ;\n"},
	// Line splices inside a comment opener, a raw-string opener, a directive name.
	{"splice in a comment opener", "t.c", nil, "int a; /\\\n* c\n int b = ; */\nint c;\n"},
	{"splice in a raw-string opener", "t.cpp", nil, "const char *s = R\\\n\"(a\nint b = ;\n)\";\nint c = ;\n"},
	{"splice in a directive name", "t.c", nil, "#i\\\nf 0\nint x = ;\n#endif\nint y;\n"},
	{"splice in #endif", "t.c", nil, "#if 0\nint x = ;\n#end\\\nif\nint y = ;\n"},
	// Raw strings on directive lines, and only in modes that have them.
	{"raw string on a #define line", "t.cpp", nil, "#define S R\"(\n)\"\nconst char *s = S;\nint b = ;\n"},
	{"raw string in a skipped block", "t.cpp", nil, "#if 0\nR\"(\n#endif\n)\"\n#endif\nint x = ;\n"},
	{"no raw strings in c++98", "t.cpp", []string{"-std=c++98"}, "int R = 1;\nint a = R\"(\";\nint b = ;\n"},
	{"no raw strings with -ansi", "t.cpp", []string{"-ansi"}, "int R = 1;\nint a = R\"(\";\nint b = ;\n"},
	{"no raw strings in gnu89", "t.c", []string{"-std=gnu89"}, "int R = 1;\nint a = R\"(\";\nint b = ;\n"},
	{"no raw strings with --std=c11", "t.c", []string{"--std=c11"}, "int R = 1;\nint a = R\"(\";\nint b = ;\n"},
	{"raw strings in gnu99", "t.c", []string{"-std=gnu99"}, "const char *s = R\"(\nint b = ;\n)\";\nint c = ;\n"},
	{"raw strings with -fraw-string-literals", "t.c", []string{"-std=c11", "-fraw-string-literals"}, "const char *s = R\"(\nint b = ;\n)\";\nint c = ;\n"},
	{"a splice does not end a raw string's delimiter", "t.cpp", nil, "const char *s = R\"(x)\\\n\";\nint a = ;\n)\";\nint y = ;\n"},
	{"a trigraph is not replaced in a raw string", "t.cpp", []string{"-std=c++14"}, "const char *s = R\"(??)\";\nint y = ;\n"},
	{"macro arguments over lines and an #if", "t.c", nil, "#define MAX(a,b) ((a)>(b)?(a):(b))\nint x = MAX(1,\n#if 1\n2\n#endif\n);\nint y = ;\n"},
	// Directives in odd spellings.
	{"/**/ #if 0", "t.c", nil, "/**/ #if 0\nint x = ;\n#endif\nint y = ;\n"},
	{"#/**/if 0", "t.c", nil, "#/**/if 0\nint x = ;\n#endif\nint y = ;\n"},
	{"%:if 0", "t.c", nil, "%:if 0\nint x = ;\n%:endif\nint y = ;\n"},
	{"%: is no directive in c89", "t.c", []string{"-std=c89"}, "%:if 0\nint x;\n%:endif\n"},
	{"multi-line comment then #if 0", "t.c", nil, "/* a\n*/ #if 0\nint x = ;\n#endif\nint y = ;\n"},
	{"token, multi-line comment, #", "t.c", nil, "int q; /* a\n*/ #if 0\nint x;\n"},
	// A lone CR ends a line.
	{"lone CR line ends", "t.c", nil, "#if 0\rint x = ;\r#endif\rint y;\nint z = ;\n"},
	{"lone CR ends a // comment", "t.c", nil, "// c\rint a = ;\nint b;\n"},
	{"a lone CR ends a string literal", "t.c", nil, "const char *s = \"ab\rint z = ;\nint y = ;\n"},
	{"a lone CR before #if 0", "t.c", nil, "int a;\r#if 0\nint x = ;\n#endif\nint y = ;\n"},
	// // comments: a comment in C89 unless a * follows.
	{"//* in c89", "t.c", []string{"-std=c89"}, "int a = 4 //* x\n*/ 2;\nint b = ;\n"},
	{"//* with -ansi", "t.c", []string{"-ansi"}, "int a = 4 //* x\n*/ 2;\nint b = ;\n"},
	{"//* in gnu89", "t.c", []string{"-std=gnu89"}, "int a = 4 //* x\n*/ 2;\n"},
	{"//* in c99", "t.c", []string{"-std=c99"}, "int a = 4 //* x\n*/ 2;\n"},
	// Digit separators: C++14 on, C23 and c2y.
	{"digit separator in c2y", "t.c", []string{"-std=c2y"}, "int x = 1'000 /* '\n*/;\nint y = ;\n"},
	{"digit separator in c23", "t.c", []string{"-std=c23"}, "int x = 1'000 /* '\n*/;\nint y = ;\n"},
	{"no digit separator in c17", "t.c", []string{"-std=c17"}, "int x = 1'000 /* '\n*/;\nint y = ;\n"},
	{"no digit separator in c++11", "t.cpp", []string{"-std=c++11"}, "int x = 1'000 /* '\n*/;\nint y = ;\n"},
	{"digit separator in c++14", "t.cpp", []string{"-std=c++14"}, "int x = 1'000 /* '\n*/;\nint y = ;\n"},
	// A function-like macro's name made by expansion at a line's end.
	// A line held for a '(' that does not come: the cut goes where the text was last clean, not
	// inside a comment that opened on the lines between and closes on the deciding line.
	{"held line, multi-line comment, then a directive", "t.c", []string{"-std=gnu11"},
		"_Pragma(\"clang diagnostic ignored \\\"-Wunused\\\"\")\n/*\n*/#\nint b = ;\n"},
	{"held line, multi-line comment, then code on its last line", "t.c", nil,
		"int f(void)\n/* old-style\n   comment */ { return 0; }\nint b = ;\n"},
	{"ID(F) then ( on the next line", "t.c", nil, "#define ID(x) x\n#define F(x) x\nint y = ID(F)\n(1);\nint z = ;\n"},
	{"object-like macro to a function-like name", "t.c", nil, "#define F(x) x\n#define G F\nint y = G\n(1);\nint z = ;\n"},
	// Pragmas that must begin and end in one file.
	{"assume_nonnull across lines", "t.c", nil, "#pragma clang assume_nonnull begin\nint *p;\n#pragma clang assume_nonnull end\nint y = ;\n"},
	{"arc_cf_code_audited across lines", "t.c", nil, "#pragma clang arc_cf_code_audited begin\nint *p;\n#pragma clang arc_cf_code_audited end\nint y = ;\n"},
	{"_Pragma assume_nonnull across lines", "t.c", nil, "_Pragma(\"clang assume_nonnull begin\")\nint *p;\n_Pragma(\"clang assume_nonnull end\")\nint y = ;\n"},
	// White space clang skips before a '#'.
	{"NUL before #if 0", "t.c", nil, "\x00#if 0\nint x = ;\n#endif\nint y = ;\n"},
	{"NBSP and U+3000 before #if 0", "t.c", nil, "\u00a0#if 0\nint x = ;\n#endif\n\u3000#if 0\nint z = ;\n#endif\nint y = ;\n"},
	// A header name is not a comment.
	{"/* inside a header name", "t.c", nil, "#if __has_include(<a/*b.h>)\n#endif\nint y = ;\n"},
}

func TestChunkedAgreesWithWholeFileOnLexerCorners(t *testing.T) {
	runDifferential(t, chunkerCases)
}
