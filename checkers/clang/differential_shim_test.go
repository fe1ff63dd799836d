package clang

import (
	"strings"
	"testing"
)

// shimCases are seams between chunked and whole-file checking that come from how the shim feeds
// chunks to Clang (shim/stream.cpp, shim/action.cpp; issue 33), each under flags that turn the
// difference into a verdict: main-file-only pragmas and warnings, the include level, and
// per-file state at a chunk's end. Each agrees with whole-file clang-19 -fsyntax-only.
var shimCases = []diffCase{
	// `#pragma hydra_next` in checked text is an unknown pragma, as for clang (-Wunknown-pragmas).
	{"hydra_next is an unknown pragma", "t.c", []string{"-Wall", "-Werror"}, "int a;\n#pragma hydra_next\nint b;\n"},
	{"hydra_next without -Wunknown-pragmas", "t.c", nil, "int a;\n#pragma hydra_next\nint b = ;\n"},
	// #pragma once and system_header only warn in the main file (Preprocessor::HandlePragmaOnce,
	// HandlePragmaSystemHeader), under any spelling.
	{"#pragma once in the main file", "t.c", []string{"-Werror"}, "int a;\n#pragma once\nint b;\n"},
	{"#pragma once warns only", "t.cpp", nil, "#pragma once\nint a;\nint b = ;\n"},
	{"_Pragma(\"once\")", "t.c", []string{"-Werror"}, "int a;\n_Pragma(\"once\")\nint b;\n"},
	{"#pragma GCC system_header in the main file", "t.c", []string{"-Werror"}, "int a;\n#pragma GCC system_header\nint b;\n"},
	{"#pragma clang system_header in the main file", "t.cpp", []string{"-Werror"}, "int a;\n#pragma clang system_header\nint b;\n"},
	{"system_header does not silence the main file", "t.c", []string{"-Wall", "-Werror", "-Wno-pragma-system-header-outside-header"},
		"#pragma GCC system_header\nint f(void) {\n  int x;\n  return x;\n}\n"},
	{"_Pragma(\"GCC system_header\")", "t.c", []string{"-Werror"}, "int a;\n_Pragma(\"GCC system_header\")\nint b;\n"},
	// Sema's main-file-only warnings (SourceManager::isInMainFile).
	{"unused static variable in C", "t.c", []string{"-Wall", "-Werror"}, "static int g;\nint main(void) { return 0; }\n"},
	{"unused static function", "t.c", []string{"-Wall", "-Werror"}, "static void f(void) {}\nint main(void) { return 0; }\n"},
	{"unused const variable", "t.cpp", []string{"-Wunused-const-variable", "-Werror"}, "static const int k = 1;\nint main() {}\n"},
	{"using directive in the main file is no header hygiene issue", "t.cpp", []string{"-Wheader-hygiene", "-Werror"},
		"namespace n {}\nusing namespace n;\nint b;\n"},
	// __INCLUDE_LEVEL__ is 0 in the main file.
	{"__INCLUDE_LEVEL__", "t.c", []string{"-std=c11"}, "_Static_assert(__INCLUDE_LEVEL__ == 0, \"level\");\nint b;\n"},
	// #pragma pack state at a chunk's end is no "included file" state (Sema's FileChanged).
	{"#pragma pack across lines", "t.c", []string{"-Werror"}, "#pragma pack(push, 1)\nstruct S { char c; int i; };\n#pragma pack(pop)\nint b;\n"},
	// #include_next and __has_include_next in the main file warn in -Winclude-next-outside-header
	// (none in a header checked as one), not -Winclude-next-absolute-path as in an entered file
	// (Preprocessor::getIncludeNextStart).
	{"#include_next in the main file", "t.c", []string{"-Werror"}, "int z;\n#include_next <stddef.h>\nint a;\n"},
	{"#include_next without -Winclude-next-outside-header", "t.c", []string{"-Werror", "-Wno-include-next-outside-header"},
		"int z;\n#include_next <stddef.h>\nint a;\n"},
	{"#include_next without -Winclude-next-absolute-path", "t.c", []string{"-Werror", "-Wno-include-next-absolute-path"},
		"int z;\n#include_next <stddef.h>\nint a;\n"},
	{"__has_include_next in the main file", "t.c", []string{"-Werror"},
		"int z;\n#if __has_include_next(<stddef.h>)\nint a;\n#endif\n"},
	{"__has_include_next without -Winclude-next-outside-header", "t.c", []string{"-Werror", "-Wno-include-next-outside-header"},
		"int z;\n#if __has_include_next( <stddef.h>)\nint a;\n#endif\nint b = ;\n"},
	{"__has_include_next through a macro", "t.c", []string{"-Werror"},
		"#define HIN __has_include_next\nint z;\n#if HIN(<stddef.h>)\nint a;\n#endif\n"},
	{"__has_include_next through macros without -Winclude-next-absolute-path", "t.c",
		[]string{"-Werror", "-Wno-include-next-absolute-path"},
		"#define HIN __has_include_next\n#define HIN2 HIN\nint z;\n#if HIN2(<stddef.h>)\nint a;\n#endif\n"},
	{"#include_next in a header checked as one", "t.h", []string{"-x", "c-header", "-Werror"},
		"int z;\n#include_next <stddef.h>\n#if __has_include_next(<stddef.h>)\nint a;\n#endif\n"},
	// Baselines: an error after each of the above still lands on its line.
	{"error after #pragma once", "t.c", nil, "#pragma once\nint a;\nint b = ;\n"},
	{"error after system_header", "t.c", nil, "#pragma GCC system_header\nint a = ;\n"},
	// Per-file pragma state and conditionals that span lines (and so chunks).
	{"assume_nonnull across lines", "t.c", nil, "#pragma clang assume_nonnull begin\nint *p;\n#pragma clang assume_nonnull end\nint b;\n"},
	{"arc_cf_code_audited across lines", "t.c", nil, "#pragma clang arc_cf_code_audited begin\nint a;\n#pragma clang arc_cf_code_audited end\nint b;\n"},
	{"#if across lines", "t.c", nil, "#if 1\nint a;\n#endif\nint b = ;\n"},
	{"restrict_expansion across lines", "t.c", []string{"-Werror"}, "#define M 1\n#pragma clang restrict_expansion(M)\nint a = M;\n"},
	{"linemarker flags", "t.c", []string{"-Werror"}, "# 1 \"x.c\" 3\nint f(void) { int x; return x; }\nint b = ;\n"},
	{"#line naming a file with a newline", "t.c", []string{"-std=c11"},
		"int a;\n#line 1 \"a\\nb.c\"\n_Static_assert(sizeof(__FILE__) == 5, \"name\");\nint b = ;\n"},
	{"#line near the maximum", "t.c", nil, "#line 2147483646\nint a;\nint b = ;\n"},
	// Statements in different chunks: the spelling lines of a chunk's text are not shifted by
	// anything the shim adds (a line note, not a #line directive, continues the file's lines).
	{"empty body on the next line", "t.c", []string{"-Wempty-body", "-Werror"}, "void f(int x) {\n  if (x)\n    ;\n}\n"},
	{"misleading indentation", "t.c", []string{"-Wall", "-Werror"}, "int f(int x) {\n  if (x)\n    x++;\n    x++;\n  return x;\n}\n"},
	// Sema's -Wempty-body compares the statement's presumed line with the ';' 's spelling line
	// (ShouldDiagnoseEmptyStmtBody): chunks that may hold such a ';' count spelling lines as the
	// file does (shim/spelling.h), past the first chunk too.
	{"empty body on the if's line", "t.c", []string{"-Werror"}, "int a;\nvoid f(int x) {\n  if (x);\n}\n"},
	{"empty body of a condition split over lines", "t.c", []string{"-Werror"}, "int g;\nvoid f(int x) {\n  if (x\n      );\n}\n"},
	{"empty body after a comment", "t.c", []string{"-Werror"}, "int g;\nvoid f(int x) {\n  if (x) /* c */ ; else x++;\n}\n"},
	{"empty for, while and switch bodies", "t.c", []string{"-Werror"},
		"int g;\nvoid f(int x) {\n  for (;x;);\n  {\n  }\n  while (--x);\n    x++;\n  switch (x);\n}\n"},
	// A for or while body is judged when the compound statement around it ends
	// (DiagnoseEmptyLoopBody): its chunk keeps the file's numbering until then.
	{"empty for body judged at the function's end", "t.c", []string{"-Werror"},
		"int g;\nint f(int x) {\n  for (;x;);\n    x++;\n" + strings.Repeat("  x += g;\n", 40) + "  {\n    x--;\n  }\n  return x;\n}\n"},
	{"empty while body on the next line", "t.c", []string{"-Werror"}, "int g;\nvoid f(int x) {\n  while (x)\n    ;\n  while (--x) x++;\n}\n"},
	{"empty range-for body", "t.cpp", []string{"-std=c++17", "-Werror"}, "int g;\nvoid f() {\n  int a[3] = {};\n  for (int v : a);\n}\n"},
	{"empty if constexpr body", "t.cpp", []string{"-std=c++17", "-Werror"}, "int g;\nvoid f() {\n  if constexpr (true);\n}\n"},
	{"empty body from a macro that expands to if", "t.c", []string{"-Werror"},
		"#define CHECK(x) if (x)\nint g;\nvoid f(int a) {\n  CHECK(a);\n}\n"},
	{"empty body from an object-like macro", "t.c", []string{"-Werror"}, "#define COND if (g)\nint g;\nvoid f(void) {\n  COND;\n}\n"},
	{"a macro's ';' is spelled on its #define line", "t.c", []string{"-Werror"},
		"int g;\n#define NOTHING ;\nvoid f(int a) {\n  int b;\n  if (a) NOTHING\n}\n"},
	// Spelling lines are the file's physical lines, whatever a #line says of presumed ones.
	{"empty body after a #line", "t.c", []string{"-Werror"}, "int g;\n#line 100\nvoid f(int x) {\n  if (x);\n}\n"},
	{"empty body of a nested if", "t.c", []string{"-Werror"}, "int g;\nvoid f(int a, int b) {\n  if (a) if (b);\n}\n"},
	{"empty loop body in a lambda", "t.cpp", []string{"-std=c++17", "-Werror"},
		"int g;\nvoid f(int x) {\n  auto l = [&] { for (;x;);\n      x++; };\n  l();\n}\n"},
	{"a while inside a do is no do-while", "t.c", []string{"-Werror"},
		"int g;\nvoid f(int x, int y) {\n  do { while (x);\n      x++; } while (y);\n}\n"},
	// The if on line 3, its ';' on line 7, inside a chunk (the #if block) that starts on line 5:
	// the ';' is on that chunk's own line 3.
	{"empty body four lines down is none", "t.c", []string{"-Werror"},
		"int g;\nvoid f(int x) {\n  if (x)\n  // c\n#if 1\n\n  ;\n#endif\n}\n"},
	// The shim's line continuation is no #line directive for -pedantic to judge.
	{"C89 -pedantic-errors past line 32767", "t.c", []string{"-std=c89", "-pedantic-errors"}, "#line 32765\nint a;\nint b;\nint c;\nint d;\nint e = ;\n"},
}

// TestShimAgreesWithWholeFile runs shimCases through the chunked checker and whole-file clang.
func TestShimAgreesWithWholeFile(t *testing.T) {
	runDifferential(t, shimCases)
}

// shimKnownDisagreements are seams the shim does not close. A loop's empty body holds its
// chunk's spelling lines as the file's until the compound statement around it ends (Sema judges
// it then), for at most EmptyBodyLines::MaxLive (4,096) chunks at once (shim/spelling.h): past
// them a chunk keeps its own numbering, and Sema does not see the next one on its line.
var shimKnownDisagreements = []knownDisagreement{
	{diffCase{"the 4,097th empty loop body open in one function", "t.c", []string{"-Werror"},
		"int g;\nint f(int x) {\n" + strings.Repeat("  for (;x;);\n  x++;\n", 4096) + "  for (;x;);\n    x++;\n  return x;\n}\n"},
		"no spelling lines past EmptyBodyLines::MaxLive open loop bodies", true, 0},
}

// TestShimKnownDisagreements asserts each known seam is still exactly as recorded.
func TestShimKnownDisagreements(t *testing.T) {
	runKnownDisagreements(t, shimKnownDisagreements)
}
