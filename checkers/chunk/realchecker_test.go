package chunk_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/agreement"
	"github.com/hydra-lsp/hydra/checkers/chunk"
	"github.com/hydra-lsp/hydra/checkers/clang"
)

// verdictOf submits pieces to a fresh session of the real checker and returns its verdict
// (accepted, or the first error's line and message).
func verdictOf(t *testing.T, ch checkers.Checker, flags []string, name string, pieces []string) agreement.Verdict {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sess, err := ch.Start(ctx, checkers.SessionOptions{Flags: flags, Filename: name})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	go func() {
		for _, p := range pieces {
			if sess.Submit(p, checkers.SubmitOptions{Cat: checkers.BoundaryLine}) != nil {
				return
			}
		}
		_ = sess.EOS()
	}()
	for {
		select {
		case <-ctx.Done():
			t.Fatal("no verdict within a minute")
		case ev, ok := <-sess.Events():
			if !ok {
				t.Fatal("session ended without a verdict")
			}
			switch ev.Kind {
			case checkers.KindError:
				return agreement.Verdict{Line: ev.Line, Col: ev.Col, Msg: ev.Diag}
			case checkers.KindDone:
				return agreement.Verdict{OK: ev.OK}
			case checkers.KindCrash:
				t.Fatalf("checker crashed: %s", ev.Diag)
			}
		}
	}
}

// TestUncleanCutsBreakTheRealChecker proves each rule of the chunker against the real Clang
// checker: submitting the text cut at every line end (ignoring the rule) makes the checker
// disagree with whole-file clang, while the chunker's cuts agree with it. The last cases are
// the traps of checkers/clang/README.md that reach the checker through chunks.
func TestUncleanCutsBreakTheRealChecker(t *testing.T) {
	tests := []struct {
		name string
		file string
		text string
		// naiveBreaks: cutting at every line end must make the checker disagree.
		naiveBreaks bool
	}{
		{"block comment", "a.c", "int a;\n/* one\n   two */\nint main(void) { return a; }\n", true},
		{"raw string", "a.cpp", "const char *s = R\"(one\ntwo)\";\nint main() { return s[0]; }\n", true},
		{"backslash continuation", "a.c", "#define ADD(x, y) \\\n  ((x) + (y))\nint main(void) { return ADD(1, -1); }\n", true},
		{"string continued by a backslash", "a.c", "const char *s = \"one\\\ntwo\";\nint main(void) { return s[0] - 'o'; }\n", true},
		{"open #if", "a.c", "#if 1\nint a = 0;\n#endif\nint main(void) { return a; }\n", true},
		{"function-like macro name at the end of a line", "a.c", "#define ZERO(x) ((x) - (x))\nint main(void) {\n  return ZERO\n    (5);\n}\n", true},
		{"#pragma once in a chunk", "a.cpp", "#pragma once\n#include <cstdio>\nint main() { return 0; }\n", false},
		{"#pragma GCC system_header in a chunk", "a.cpp", "#pragma GCC system_header\nint main() { return 0; }\n", false},
		{"fatal error stops the checker", "a.c", "#include <no_such_header_hydra.h>\nint main(void) { return undeclared; }\n", false},
	}
	ch, err := clang.New(clang.Options{})
	if err != nil {
		t.Fatalf("clang checker: %v (run `make build` first)", err)
	}
	defer ch.Close()
	cl, err := agreement.ClangPath()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lang := "c++"
			if strings.HasSuffix(tt.file, ".c") {
				lang = "c"
			}
			flags := []string{"-x", lang}
			whole, err := agreement.Whole(context.Background(), cl, tt.text, tt.file, flags)
			if err != nil {
				t.Fatal(err)
			}
			var pieces []string
			for _, c := range chunk.Split(tt.text, chunk.OptionsForFlags(flags, tt.file)) {
				pieces = append(pieces, c.Text)
			}
			got := verdictOf(t, ch, flags, tt.file, pieces)
			if !agreement.Agree(got, whole) {
				t.Fatalf("chunker's cuts %q: checker %s, whole-file clang %s", pieces, got, whole)
			}
			if tt.naiveBreaks {
				naive := strings.SplitAfter(tt.text, "\n")
				if len(naive) <= len(pieces) {
					t.Fatalf("the chunker cut as often as the naive cut: %q", pieces)
				}
				if bad := verdictOf(t, ch, flags, tt.file, naive); agreement.Agree(bad, whole) {
					t.Fatalf("cutting at every line also agrees (%s): the rule is not needed here", bad)
				}
			}
		})
	}
}
