package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/hydra-lsp/hydra/engine/model/modeltest"
)

// What counts as an error of the prefix (issue 34): only one the document without the generated
// text has too. An error that Clang places inside the prefix but that the generated text caused
// is repaired like any other; an `#if`, `extern "C" {`, namespace or class that the suffix closes
// is never an error of the prefix.

// TestErrorPlacedInThePrefixByTheGeneratedText: a call the prefix starts and the model finishes
// with one argument too many; Clang reports "no matching function" at the callee's name, in the
// prefix, before the prefix's line is confirmed. It is the model's: repaired, not prefix_error.
func TestErrorPlacedInThePrefixByTheGeneratedText(t *testing.T) {
	prefix := "int g(int);\nint main() { return g("
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
		rule(FeedbackMarker, "1); }\n"),
		rule("", "1, 2); }\n"),
	}})
	res, err := Search(context.Background(), newChecker(t), newClient(t, srv.URL), Request{Prefix: prefix, Filename: "g.cc", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Text != "1); }\n" || res.Stats.Attempts != 2 {
		t.Fatalf("ok=%v reason=%s text=%q attempts=%d diagnostics=%v; want the repair accepted", res.OK, res.Reason, res.Text, res.Stats.Attempts, res.Diagnostics)
	}
	errs := traceNodes(res, "error")
	if len(errs) != 1 || !strings.Contains(errs[0].Diag, "no matching function") {
		t.Errorf("error nodes %+v, want the model's call error", errs)
	}
}

// TestOpenBlocksTheSuffixCloses: generation inside blocks that only the suffix closes. The
// prefix's own lines compile as part of the whole file, so none of these may end in
// prefix_error, and the accepted text is the body.
func TestOpenBlocksTheSuffixCloses(t *testing.T) {
	openBlocks(t, []openBlock{
		{"extern C in #ifdef __cplusplus", "f.cc", "#ifdef __cplusplus\nextern \"C\" {\n#endif\nint f(void) {\n", "  return 1;\n", "}\n#ifdef __cplusplus\n}\n#endif\n"},
		{"namespace", "f.cc", "namespace a {\nnamespace b {\nint f() {\n", "  return 1;\n", "}\n}  // namespace b\n}  // namespace a\nint main() { return a::b::f() - 1; }\n"},
		{"class method", "f.cc", "class C {\n public:\n  int f() const {\n", "    return n_;\n", "  }\n\n private:\n  int n_ = 0;\n};\n"},
	})
}

// TestConditionalTheSuffixCloses: generation inside an `#if` whose `#endif` is in the suffix
// (platform code). The chunker cannot cut inside an open conditional (each chunk is its own
// buffer with its own conditional stack), so the text from the `#if` on reaches the rollout's
// session with the suffix, in the final check's one piece: accepted as the whole file is.
// (Probes confirm the lines on the way: probe_test.go.)
func TestConditionalTheSuffixCloses(t *testing.T) {
	openBlocks(t, []openBlock{
		{"#if", "f.c", "#if 1\nint f(void) {\n", "  return 1;\n", "}\n#endif\n"},
		{"#ifdef with #else", "f.c", "#define HAVE_F 1\n#ifdef HAVE_F\nint f(void) {\n", "  return 1;\n", "}\n#else\nint f(void) { return 0; }\n#endif\nint main(void) { return f() - 1; }\n"},
		{"method in #if in a class", "f.cc", "struct S {\n#if __cplusplus >= 201103L\n  int g() const {\n", "    return 2;\n", "  }\n#endif\n};\n"},
	})
}

// TestConditionalRepair: the model's mistake inside an `#if` that the suffix closes is found by
// the final check and repaired; the prefix is never blamed.
func TestConditionalRepair(t *testing.T) {
	prefix, suffix := "#if 1\nint f(void) {\n", "}\n#endif\nint main(void) { return f() - 1; }\n"
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
		rule(FeedbackMarker, "  return 1;\n}\n"),
		rule("", "  return one;\n}\n"),
	}})
	res, err := Search(context.Background(), newChecker(t), newClient(t, srv.URL), Request{Prefix: prefix, Suffix: suffix,
		Filename: "f.c", Model: "m", StopAtClose: true, Budget: Budget{MaxAttempts: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Text != "  return 1;\n" || res.Stats.Attempts != 2 {
		t.Fatalf("ok=%v reason=%s text=%q attempts=%d diagnostics=%v; want the repair accepted", res.OK, res.Reason, res.Text, res.Stats.Attempts, res.Diagnostics)
	}
	errs := traceNodes(res, "error")
	if len(errs) != 1 || !strings.Contains(errs[0].Diag, "one") {
		t.Errorf("error nodes %+v, want the undeclared 'one'", errs)
	}
}

// openBlock is a body to generate inside blocks the suffix closes.
type openBlock struct{ name, file, prefix, body, suffix string }

// openBlocks generates each case's body with a stand-in that writes the body, the suffix's
// closing line and more, and wants the body accepted, never a prefix_error.
func openBlocks(t *testing.T, cases []openBlock) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if res := searchOpenBlock(t, c); !res.OK || res.Text != c.body {
				t.Fatalf("ok=%v reason=%s text=%q diagnostics=%v; want %q accepted", res.OK, res.Reason, res.Text, res.Diagnostics, c.body)
			}
		})
	}
}

// searchOpenBlock generates c's body with a stand-in that writes the body, the suffix's closing
// line and more (the search stops before the closing line, as the suffix brings its own), and
// fails the test on a prefix_error: the prefix compiles as part of the file.
func searchOpenBlock(t *testing.T, c openBlock) *Result {
	t.Helper()
	close := c.suffix[:strings.IndexByte(c.suffix, '\n')+1]
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{rule("", c.body+close+"int junk;\n")}})
	res, err := Search(context.Background(), newChecker(t), newClient(t, srv.URL), Request{Prefix: c.prefix, Suffix: c.suffix,
		Filename: c.file, Model: "m", StopAtClose: true, Budget: Budget{MaxAttempts: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason == "prefix_error" {
		t.Fatalf("prefix_error %v: the prefix compiles as part of the file", res.Diagnostics)
	}
	return res
}
