package clang

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/chunk"
)

// run checks text line by line in a fresh session and returns its events.
func run(t *testing.T, c *Checker, opts checkers.SessionOptions, text string) []checkers.Event {
	t.Helper()
	s, err := c.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	submitAll(t, s, lines(text))
	return collect(t, s)
}

// Each error class of checkers/checker.go comes from the diagnostic Clang really emits.
func TestErrorCategories(t *testing.T) {
	c := newChecker(t, Options{})
	cases := []struct {
		name, file, text string
		flags            []string
		cat              string
	}{
		{"undeclared variable", "u.cpp", "int main() { return nope; }\n", nil, checkers.CatUndeclared},
		{"undeclared function in C", "u.c", "int main(void) { return nope(); }\n", nil, checkers.CatUndeclared},
		{"unknown type name", "t.cpp", "Widget w;\n", nil, checkers.CatUndeclared},
		{"no member", "m.cpp", "struct P { int x; };\nint f(P p) { return p.y; }\n", nil, checkers.CatNoMember},
		{"type mismatch", "ty.cpp", "struct A {};\nint f() { A a; int *p = a; return 0; }\n", nil, checkers.CatTypeMismatch},
		{"too many arguments", "a.c", "int f(int a) { return a; }\nint main(void) { return f(1, 2); }\n", nil, checkers.CatArgCount},
		{"no viable overload by arity", "o.cpp", "int f(int a) { return a; }\nint f(int a, int b) { return a + b; }\nint main() { return f(1, 2, 3); }\n", nil, checkers.CatArgCount},
		{"redefinition", "r.cpp", "int x = 1;\nint x = 2;\n", nil, checkers.CatRedefinition},
		{"syntax", "s.cpp", "int main() { return (1 + ; }\n", nil, checkers.CatSyntax},
		{"missing return under -Werror", "mr.cpp", "int f(int a) { if (a) return 1; }\n", []string{"-Werror=return-type"}, checkers.CatMissingReturn},
		{"missing include is fatal", "f.cpp", "#include <no_such_header_hydra.h>\nint x;\n", nil, checkers.CatFatal},
		{"other", "e.cpp", "#error stop here\n", nil, checkers.CatOther},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			evs := run(t, c, checkers.SessionOptions{Filename: tc.file, Flags: tc.flags}, tc.text)
			v, first := sessionVerdict(t, evs)
			if v.OK || first == nil {
				t.Fatalf("accepted, want a %s error: %+v", tc.cat, evs)
			}
			if first.Cat != tc.cat {
				t.Fatalf("category %q (%v, meta %v), want %q", first.Cat, v, first.Meta, tc.cat)
			}
			if id, _ := first.Meta["diag_id"].(string); id == "" {
				t.Fatalf("no diag_id in meta: %+v", first)
			}
		})
	}
}

// Warnings are not errors unless -Werror says so.
func TestWarningsAreNotErrorsUnlessWerror(t *testing.T) {
	c := newChecker(t, Options{})
	text := "int f(int a) { int unused; return a; }\n"
	flags := []string{"-Wall"}
	if v, _ := sessionVerdict(t, run(t, c, checkers.SessionOptions{Filename: "w.cpp", Flags: flags}, text)); !v.OK {
		t.Fatalf("warning rejected the text: %v", v)
	}
	flags = append(flags, "-Werror")
	v, first := sessionVerdict(t, run(t, c, checkers.SessionOptions{Filename: "w.cpp", Flags: flags}, text))
	if v.OK || !strings.Contains(first.Diag, "unused variable") {
		t.Fatalf("with -Werror: %v, want the unused-variable warning as an error", v)
	}
	if first.Meta["option"] != "-Wunused-variable" {
		t.Fatalf("meta option %v, want -Wunused-variable", first.Meta["option"])
	}
}

// The language follows the file name unless -x says otherwise: .c is C, everything else C++.
func TestLanguageDefaultFollowsExtension(t *testing.T) {
	c := newChecker(t, Options{})
	text := "int class = 1;\n" // valid C, invalid C++
	for _, tc := range []struct {
		file  string
		flags []string
		ok    bool
	}{
		{"x.c", nil, true},
		{"x.cpp", nil, false},
		{"x.h", nil, false},
		{"noext", nil, false},
		{"x.c", []string{"-x", "c++"}, false},
		{"x.cpp", []string{"-xc"}, true},
	} {
		v, _ := sessionVerdict(t, run(t, c, checkers.SessionOptions{Filename: tc.file, Flags: tc.flags}, text))
		if v.OK != tc.ok {
			t.Errorf("%s %v: %v, want ok=%v", tc.file, tc.flags, v, tc.ok)
		}
	}
}

// Errors that Clang reports only after reading past the chunk (lookahead) or at the end of a
// class carry the offset and line of their cause, not of where they were noticed.
func TestLateErrorsCarryTheirOwnOffset(t *testing.T) {
	c := newChecker(t, Options{})
	cases := []struct {
		name     string
		text     string
		at       string // the error is at the first occurrence of this text...
		delta    int    // ...plus this many bytes
		line     int
		diagPart string
		// after: the error arrives after progress reached this offset (it was late).
		after int
	}{
		{
			name: "missing semicolon at a chunk end",
			text: "int a = 1\nint b = 2;\n",
			at:   "1\n", delta: 1, line: 1, diagPart: "expected ';'",
			after: len("int a = 1\n"),
		},
		{
			name: "inline member function body, reported at the class end",
			text: "struct S {\n  int f() { return missing; }\n  int g() { return 2; }\n};\n",
			at:   "missing", line: 2, diagPart: "use of undeclared identifier 'missing'",
			after: len("struct S {\n  int f() { return missing; }\n  int g() { return 2; }\n"),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			evs := run(t, c, checkers.SessionOptions{Filename: "late.cpp"}, tc.text)
			_, first := sessionVerdict(t, evs)
			if first == nil {
				t.Fatalf("no error: %+v", evs)
			}
			wantOff := strings.Index(tc.text, tc.at) + tc.delta
			if first.Off != wantOff || first.Line != tc.line || !strings.Contains(first.Diag, tc.diagPart) {
				t.Fatalf("error %+v, want off %d line %d %q", *first, wantOff, tc.line, tc.diagPart)
			}
			progressed := 0
			for _, ev := range evs {
				if ev.Kind == checkers.KindProgress {
					progressed = ev.Off
				}
				if ev.Kind == checkers.KindError {
					break
				}
			}
			if progressed < tc.after {
				t.Fatalf("error arrived after progress to %d, expected it late (after %d): the case does not test lookahead", progressed, tc.after)
			}
		})
	}
}

// Errors inside a header are placed at the user code that caused them, with the header's
// position in meta.
func TestHeaderErrorsMapToUserCode(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tmpl.h"), []byte("template <class T> int get(T t) {\n  return t.nope;\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newChecker(t, Options{})
	text := "#include \"tmpl.h\"\nstruct W { int v; };\nint main() {\n  return get(W{1});\n}\n"
	name := filepath.Join(dir, "main.cpp")
	want := wholeFile(t, dir, "main.cpp", nil, text)
	v, first := sessionVerdict(t, run(t, c, checkers.SessionOptions{Filename: name}, text))
	if !strings.HasSuffix(want.File, "tmpl.h") {
		t.Fatalf("test case broken: whole-file clang's first error is in %s", want.File)
	}
	if v.OK || first.Diag != want.Diag {
		t.Fatalf("got %v, whole-file clang %v", v, want)
	}
	if first.Line != 4 || first.Off != strings.Index(text, "get(W") {
		t.Fatalf("error at line %d off %d, want the instantiating call on line 4 (off %d)", first.Line, first.Off, strings.Index(text, "get(W"))
	}
	if f, _ := first.Meta["file"].(string); !strings.HasSuffix(f, "tmpl.h") || first.Meta["file_line"] != float64(want.Line) {
		t.Fatalf("meta %v, want file tmpl.h line %d", first.Meta, want.Line)
	}
}

// Quoted includes resolve next to the checked file, and #pragma once in a chunk is harmless.
func TestQuotedIncludesAndPragmaOnce(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "local.h"), []byte("#pragma once\nstatic int local_value = 7;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newChecker(t, Options{})
	text := "#pragma once\n#include \"local.h\"\n#include \"local.h\"\nint main() { return local_value + __LINE__; }\n"
	v, _ := sessionVerdict(t, run(t, c, checkers.SessionOptions{Filename: filepath.Join(dir, "main.cpp")}, text))
	if !v.OK {
		t.Fatalf("%v", v)
	}
}

// Bad flags give an error event and a done, not a hang.
func TestBadFlags(t *testing.T) {
	c := newChecker(t, Options{})
	v, first := sessionVerdict(t, run(t, c, checkers.SessionOptions{Filename: "f.cpp", Flags: []string{"-std=c++99x"}}, "int x;\n"))
	if v.OK || first.Cat != checkers.CatFatal || !strings.Contains(first.Diag, "invalid compiler flags") || !strings.Contains(first.Diag, "c++99x") {
		t.Fatalf("got %v (%+v), want a fatal invalid-flags error naming the flag", v, first)
	}
}

// A session that stops answering is ended by the timeout with a crash event.
func TestTimeoutEndsAHungSession(t *testing.T) {
	c := newChecker(t, Options{Timeout: 300 * time.Millisecond})
	s, err := c.StartSession(context.Background(), checkers.SessionOptions{Filename: "hang.cpp"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, checkers.KindInit)
	pid := s.PID()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := s.Submit("int x;\n", checkers.SubmitOptions{}); err != nil {
		t.Fatal(err)
	}
	ev := waitFor(t, s, checkers.KindCrash)
	if !strings.Contains(ev.Diag, "timed out") {
		t.Fatalf("crash %q, want a timeout", ev.Diag)
	}
	if alive := waitGone([]int{pid}, 20*time.Second); len(alive) > 0 {
		t.Fatalf("hung process %d not killed", pid)
	}
}

// Cancelling the session's context ends it with a crash event and ends its process.
func TestContextCancelEndsSession(t *testing.T) {
	c := newChecker(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	s, err := c.StartSession(ctx, checkers.SessionOptions{Filename: "cancel.cpp"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, checkers.KindInit)
	pid := s.PID()
	cancel()
	ev := waitFor(t, s, checkers.KindCrash)
	if !strings.Contains(ev.Diag, "cancelled") {
		t.Fatalf("crash %q, want cancelled", ev.Diag)
	}
	if alive := waitGone([]int{pid}, 20*time.Second); len(alive) > 0 {
		t.Fatalf("process %d survived cancellation", pid)
	}
	if err := s.Submit("int x;\n", checkers.SubmitOptions{}); !errors.Is(err, checkers.ErrClosed) {
		t.Fatalf("Submit after cancel: %v, want ErrClosed", err)
	}
	if _, err := c.Start(ctx, checkers.SessionOptions{}); err == nil {
		t.Fatal("Start with a cancelled context succeeded")
	}
}

// Close ends the process, closes Events, and makes later calls fail with ErrClosed.
func TestSessionCloseAndMisuse(t *testing.T) {
	c := newChecker(t, Options{})
	s, err := c.StartSession(context.Background(), checkers.SessionOptions{Filename: "close.cpp"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, checkers.KindInit)
	if err := s.EOS(); err != nil {
		t.Fatal(err)
	}
	if err := s.Submit("int x;\n", checkers.SubmitOptions{}); err == nil {
		t.Fatal("Submit after EOS succeeded")
	}
	if ev := waitFor(t, s, checkers.KindDone); !ev.OK {
		t.Fatalf("empty input rejected: %+v", ev)
	}

	s2, err := c.StartSession(context.Background(), checkers.SessionOptions{Filename: "close.cpp"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, s2, checkers.KindInit)
	pid := s2.PID()
	s2.Close()
	s2.Close()
	collect(t, s2) // the channel closes
	if alive := waitGone([]int{pid}, 20*time.Second); len(alive) > 0 {
		t.Fatalf("process %d survived Close", pid)
	}
	if err := s2.Submit("int x;\n", checkers.SubmitOptions{}); !errors.Is(err, checkers.ErrClosed) {
		t.Fatalf("Submit after Close: %v, want ErrClosed", err)
	}
	c.Close()
	if _, err := c.Start(context.Background(), checkers.SessionOptions{}); !errors.Is(err, checkers.ErrClosed) {
		t.Fatalf("Start after Checker.Close: %v, want ErrClosed", err)
	}
	if n, m := c.Live(); n != 0 || m != 0 {
		t.Fatalf("after Close %d sessions, %d checkpoints live", n, m)
	}
}

// #embed and __has_embed (C23, and C++ as an extension) and a leading UTF-8 byte-order mark get
// the verdict whole-file clang gives (first error line, column and message), where the shim
// used to crash (#embed) or reject the file (BOM).
func TestEmbedAndByteOrderMarkAgreeWithWholeFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "data.bin"), []byte{1, 2, 3, 0, 255}, 0o644); err != nil {
		t.Fatal(err)
	}
	const bom = "\xEF\xBB\xBF"
	cases := []struct {
		name, file string
		flags      []string
		text       string
	}{
		{"embed in C23", "e.c", []string{"-std=c23"},
			"const unsigned char d[] = {\n#embed \"data.bin\"\n};\nint main(void) { return d[0]; }\n"},
		{"embed with parameters in C23", "e.c", []string{"-std=c23"},
			"const unsigned char d[] = {\n#embed \"data.bin\" limit(2) suffix(, 9) if_empty(0)\n};\nint main(void) { return d[1]; }\n"},
		{"embed of a missing file", "e.c", []string{"-std=c23"},
			"const unsigned char d[] = {\n#embed \"missing.bin\"\n};\n"},
		{"embed in C++", "e.cpp", []string{"-std=c++17"},
			"#include <cstddef>\nconst unsigned char d[] = {\n#embed <data.bin>\n};\nstd::size_t n = sizeof d;\n"},
		{"has_embed in C++", "h.cpp", []string{"-std=c++17"},
			"#if __has_embed(\"data.bin\") && !__has_embed(\"nope.bin\")\nint found = 1;\n#else\nint found = x;\n#endif\n"},
		{"has_embed used wrongly", "h.c", []string{"-std=c23"},
			"int f(void) { return __has_embed(\"data.bin\"); }\n"},
		{"byte-order mark, accepted", "b.cpp", nil, bom + "#include <cstdio>\nint main() { std::puts(\"hi\"); }\n"},
		{"byte-order mark, error on line 1", "b.c", nil, bom + "int x = ;\n"},
		{"byte-order mark alone on line 1", "b.c", nil, bom + "\nint y = z;\n"},
		{"byte-order mark not at the start", "b.c", nil, "int a;\n" + bom + "int b;\n"},
	}
	c := newChecker(t, Options{})
	for _, cs := range cases {
		t.Run(cs.name, func(t *testing.T) {
			flags := append([]string{"-I", dir}, cs.flags...)
			want := wholeFile(t, dir, cs.file, flags, cs.text)
			opts := checkers.SessionOptions{Filename: filepath.Join(dir, cs.file), Flags: flags}
			s, err := c.Start(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var pieces []string // cut as the engine cuts, where the lexer state is clean
			for _, ch := range chunk.Split(cs.text, chunk.OptionsForFlags(flags, cs.file)) {
				pieces = append(pieces, ch.Text)
			}
			submitAll(t, s, pieces)
			got, _ := sessionVerdict(t, collect(t, s))
			if got.OK != want.OK || got.Line != want.Line || got.Col != want.Col || got.Diag != want.Diag {
				t.Fatalf("checker: %v\nwhole-file clang: %v", got, want)
			}
		})
	}
}
