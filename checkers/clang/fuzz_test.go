package clang

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/agreement"
	"github.com/hydra-lsp/hydra/checkers/chunk"
	"github.com/hydra-lsp/hydra/checkers/mutate"
	"github.com/hydra-lsp/hydra/checkers/wholefile"
)

// fuzzSnippets are what FuzzChunkedAgainstWholeFile inserts into programs (the ops argument
// picks them): the preprocessor and lexer corners where a chunked checker can differ from a
// whole file — directives, #embed and __has_embed, pragmas and _Pragma, line continuations,
// trigraphs, NULs, byte-order marks, #line, unterminated constructs.
var fuzzSnippets = []string{
	"const unsigned char embedded[] = {\n#embed \"data.bin\"\n};\n",
	"#embed \"data.bin\" limit(1)\n",
	"#if __has_embed(\"data.bin\")\nint has_embed_ok;\n#endif\n",
	"#if __has_embed(<missing.bin>)\n#error no\n#endif\n",
	"#pragma once\n",
	"#pragma GCC system_header\n",
	"#pragma clang system_header\n",
	"_Pragma(\"once\")\n",
	"_Pragma(\"GCC system_header\")\n",
	"_Pragma(\"clang diagnostic ignored \\\"-Wunused\\\"\")\n",
	"#pragma hydra_next\n",
	"#pragma GCC poison fuzz_poisoned\n",
	"#pragma push_macro(\"FUZZ\")\n#define FUZZ 1\n#pragma pop_macro(\"FUZZ\")\n",
	"#pragma pack(push, 1)\nstruct packed { char c; int i; };\n#pragma pack(pop)\n",
	"#define CONT(a, b) \\\n  ((a) + \\\n   (b))\n",
	"int continued = 1 + \\\n  2;\n",
	"??=define TRI 1\n",
	"int tri ??( 1 ??) = { 0 }; ??/\n",
	"\x00",
	"int nul\x00x;\n",
	"\xEF\xBB\xBF",
	"#line 500 \"elsewhere.c\"\n",
	"#include \"local.h\"\n",
	"#include_next <stdio.h>\n",
	"#if __INCLUDE_LEVEL__\n#endif\n",
	"#define STR(x) #x\nconst char *file_name = __FILE__ STR(__LINE__);\n",
	"#error fuzz error\n",
	"#warning fuzz warning\n",
	"/* unterminated comment\n",
	"const char *raw = R\"x(raw\n)x\";\n",
	"#ifdef FUZZ_UNDEFINED\nint a = ;\n#else\nint b = 0;\n#endif\n",
	"#if 1\n",
	"#endif\n",
	"'\n",
	"\"unterminated\n",
	"}\n",
	"{\n",
	"template <typename T> T twice(T v) { return v + v; }\nint tw = twice(1);\n",
	"static_assert(sizeof(int) == 4, \"int\");\n",
	"int __counter_a = __COUNTER__;\n",
	// Lexer corners that decide where checkers/chunk may cut (checkers/chunk/clanglex_test.go):
	// trigraphs, splices, raw strings, directives in odd spellings, lone CRs, C89's //*, digit
	// separators, a function-like macro's name at a line end, pragmas that span lines.
	"??=if 0\nint tri_skipped = ;\n??=endif\n",
	"int tri_c = 1; // ??/\nint tri_d = ;\n",
	"int tri_f(void) ??<\n  return 0;\n??>\n",
	"int spl_a; /\\\n* spliced comment */\n",
	"const char *spl_r = R\\\n\"(a\n)\";\n",
	"#i\\\nf 0\nint spl_skipped = ;\n#end\\\nif\n",
	"#define RAW_DEF R\"(\n)\"\n",
	"#if 0\nR\"(\n#endif\n)\"\n#endif\n",
	"/**/ #if 0\nint odd_a = ;\n#endif\n",
	"#/**/if 0\nint odd_b = ;\n#endif\n",
	"%:if 0\nint odd_c = ;\n%:endif\n",
	"/* a\n*/ #if 0\nint odd_d = ;\n#endif\n",
	"#if 0\rint cr_a = ;\r#endif\rint cr_b;\n",
	"int c89_div = 4 //* x\n*/ 2;\n",
	"int sep = 1'000 /* '\n*/;\n",
	"#define FZ_ID(x) x\n#define FZ_F(x) x\nint fz_call = FZ_ID(FZ_F)\n(1);\n",
	"#pragma clang assume_nonnull begin\nint *nn_p;\n#pragma clang assume_nonnull end\n",
	"#pragma clang arc_cf_code_audited begin\nint *cf_p;\n#pragma clang arc_cf_code_audited end\n",
	"static int fz_unused;\n",
	"void fz_empty(int x) { if (x);\n}\n",
	// Empty bodies: Sema compares the statement's presumed line with the ';' 's spelling line
	// (shim/spelling.h), through macros and across chunks.
	"#define FZ_IF(x) if (x)\nvoid fz_mac(int x) {\n  FZ_IF(x);\n}\n",
	"void fz_loops(int x) {\n  for (;x;);\n  {\n  }\n  while (--x);\n    x++;\n}\n",
	"void fz_far(int x) {\n  if (x)\n#if 1\n\n  ;\n#endif\n}\n",
}

// fuzzModes are the language modes programs run under: lang bits 3–5 pick one (0 keeps the
// four of lang bits 0–1), bits 6–7 a set of warnings made errors.
var (
	fuzzCModes   = [][]string{{"-std=c89"}, {"-std=c99"}, {"-std=gnu89"}, {"-std=c2y"}, {"-ansi"}, {"-std=c11", "-trigraphs"}, {"--std=c17"}}
	fuzzCxxModes = [][]string{{"-std=c++98"}, {"-std=c++11"}, {"-std=c++14"}, {"--std=c++14"}, {"-std=c++17", "-trigraphs"}, {"-std=c++14", "-fno-trigraphs"}, {"-ansi"}}
	fuzzWerror   = [][]string{nil, {"-Werror", "-Wall"}, {"-Werror", "-Wextra"}, {"-pedantic-errors"}}
)

// fuzzFlags returns the file name and flags lang selects.
func fuzzFlags(lang uint8) (string, []string) {
	file, flags := "fuzz.c", []string{"-std=gnu11"}
	switch lang & 3 {
	case 1:
		file, flags = "fuzz.cpp", []string{"-std=c++17"}
	case 2:
		flags = []string{"-std=c23"}
	case 3:
		file, flags = "fuzz.cpp", []string{"-std=gnu++20"}
	}
	if m := int(lang>>3) & 7; m > 0 {
		modes := fuzzCModes
		if lang&1 != 0 {
			modes = fuzzCxxModes
		}
		flags = modes[(m-1)%len(modes)]
	}
	return file, append(append([]string(nil), flags...), fuzzWerror[lang>>6]...)
}

// referenceCrashed reports whether err from wholefile.Check is clang's own outcome on the text
// (it ran and exited abnormally, or rejected it without an error line) rather than a failure to
// run it at all (a temporary file, exec, a missing driver), after which there is nothing to
// compare with: the test fails. The second case is matched by wholefile.Check's message.
func referenceCrashed(err error) bool {
	var exit *exec.ExitError
	return errors.As(err, &exit) || strings.Contains(err.Error(), "failed without an error line")
}

// outsideRoots matches an #include or #embed (or __has_ form) of an absolute or upward path:
// the checker refuses those on purpose (README.md, "File access") where whole-file clang reads
// them, so verdicts are not compared on such text (crashes still are).
var outsideRoots = regexp.MustCompile(`(include|embed|import)\w*\s*\(?\s*["<]\s*(/|.*\.\.)`)

// fuzzSeeds are short corpus programs with a few fixed splits and decorations.
func fuzzSeeds(tb testing.TB) []agreement.Program {
	progs := corpusT(tb)
	var short []agreement.Program
	for _, p := range progs {
		if len(p.Text) < 2500 {
			short = append(short, p)
		}
	}
	sort.Slice(short, func(i, j int) bool { return short[i].ID < short[j].ID })
	var out []agreement.Program
	for i := 0; i < len(short) && len(out) < 8; i += max(1, len(short)/8) {
		out = append(out, short[i])
	}
	return out
}

// corpusT loads the corpus programs from the shared data next to the repository.
func corpusT(tb testing.TB) []agreement.Program {
	path := filepath.Join(repoRootT(tb), "..", "shared", "data", "thealgorithms-corpus.jsonl.gz")
	progs, err := agreement.LoadCorpus(path)
	if err != nil {
		tb.Fatalf("corpus: %v (expected the shared data next to the repository)", err)
	}
	return progs
}

func repoRootT(tb testing.TB) string {
	root, err := repoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	return root
}

// FuzzChunkedAgainstWholeFile feeds the checker chunk sequences made from a program and compares
// them with whole-file clang-19 -fsyntax-only: the checker must not crash where clang does not,
// and must give the same verdict. The inputs: text (corpus programs, mutated by the fuzzer);
// lang (bit 0: C or C++; bit 1: the other standard; bit 2: take a checkpoint halfway and resume
// it for a second verdict; bits 3–5: another language mode, bits 6–7: -Werror sets, fuzzFlags); splits (bit i merges chunk i with the next, so the cut points vary
// over the clean ones checkers/chunk finds); ops (each byte inserts one of fuzzSnippets at a
// line, or applies a checkers/mutate operator). Crashes it finds become seeds under
// testdata/fuzz/FuzzChunkedAgainstWholeFile (go test runs them as regression tests).
//
// CI runs it for a bounded time: make test-fuzz (go test -run='^$' -fuzz=… -fuzztime=60s).
func FuzzChunkedAgainstWholeFile(f *testing.F) {
	for i, p := range fuzzSeeds(f) {
		lang := uint8(0)
		if p.Lang == "c++" {
			lang = 1
		}
		f.Add(p.Text, lang|uint8(i%2)<<2, uint64(0x5555)<<i, uint64(i*0x0301+0x0702))
	}
	f.Add("int main(void) { return 0; }\n", uint8(0), uint64(0), uint64(0x0100))
	f.Add("#include <vector>\nint main() { std::vector<int> v; return (int)v.size(); }\n", uint8(1|4), uint64(1), uint64(0x0302))
	clangBin, err := wholefile.Clang()
	if err != nil {
		f.Fatal(err)
	}
	c, err := New(Options{Timeout: time.Minute})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { c.Close() })
	f.Fuzz(func(t *testing.T, text string, lang uint8, splits, ops uint64) {
		if len(text) > 16<<10 {
			t.Skip("long texts make slow fuzzing")
		}
		text = decorate(text, lang, ops)
		file, flags := fuzzFlags(lang)
		dir := t.TempDir()
		for name, body := range map[string]string{"data.bin": "\x01\x02\x00\xff", "local.h": "int local_h = 1;\n"} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		whole, err := wholefile.Check(ctx, text, wholefile.Options{Clang: clangBin, Dir: dir, Name: file,
			Flags: resolve(checkers.SessionOptions{Flags: flags, Filename: file}).flags})
		if ctx.Err() != nil {
			t.Skipf("whole-file clang: %v", err) // a timeout on a pathological text: nothing to compare
		}
		if err != nil && !referenceCrashed(err) {
			t.Fatalf("whole-file clang gave no verdict: %v", err)
		}
		wholeOK, wholeCrash := whole.OK, err != nil // clang crashed (or rejected without an error line)
		pieces := cutPieces(text, file, flags, splits)
		opts := checkers.SessionOptions{Filename: filepath.Join(dir, file), Flags: flags}
		mid := -1
		if lang&4 != 0 && len(pieces) > 1 {
			mid = len(pieces) / 2
		}
		out, cp := chunkedVerdict(t, c, opts, pieces, mid)
		wholeLine, wholeFile := 0, ""
		if d, ok := whole.First(); ok {
			wholeLine = d.Line
			if filepath.Base(d.File) != file {
				wholeFile = filepath.Base(d.File) // a header's, or a name a #line gave the text
			}
		}
		compare := func(side string, o fuzzOutcome) {
			if o.crash != "" && !wholeCrash {
				t.Fatalf("%s: the checker crashed (%s) where whole-file clang did not, on %q cut %q", side, o.crash, text, pieces)
			}
			if o.crash != "" || wholeCrash || outsideRoots.MatchString(text) {
				return
			}
			// An error the checker places in a header is compared in the header's lines.
			if o.ok != wholeOK || o.line != wholeLine || (o.file != "" && o.file != wholeFile) {
				t.Fatalf("%s: checker says ok=%v (first error line %d %s), whole-file clang ok=%v (line %d %s), under %q on %q cut %q",
					side, o.ok, o.line, o.file, wholeOK, wholeLine, wholeFile, flags, text, pieces)
			}
		}
		compare("fresh session", out)
		if cp != nil {
			defer cp.Release()
			s, err := c.Resume(ctx, cp)
			if err != nil {
				t.Fatal(err)
			}
			compare("resumed checkpoint", sessionOutcome(t, s, pieces[mid+1:]))
		}
	})
}

// decorate applies ops to text: each non-zero byte either inserts a snippet at a line start or
// applies a mutation operator (deterministic for the inputs).
func decorate(text string, lang uint8, ops uint64) string {
	langName := "c"
	if lang&1 != 0 {
		langName = "c++"
	}
	for k := 0; k < 8; k++ {
		op := byte(ops >> (8 * k))
		if op == 0 {
			continue
		}
		if int(op)%(len(fuzzSnippets)+4) >= len(fuzzSnippets) {
			m, err := mutate.Apply(text, langName, mutate.Ops[int(op)%len(mutate.Ops)], rand.New(rand.NewPCG(uint64(op), ops)))
			if err == nil {
				text = m.Text
			}
			continue
		}
		snip := fuzzSnippets[int(op)%(len(fuzzSnippets)+4)]
		starts := []int{0}
		for i := 0; i < len(text); i++ {
			if text[i] == '\n' {
				starts = append(starts, i+1)
			}
		}
		at := starts[int(ops>>(8*k+3))%len(starts)]
		text = text[:at] + snip + text[at:]
	}
	return text
}

// cutPieces cuts text where checkers/chunk finds a clean lexer state, then merges neighbours
// as splits says.
func cutPieces(text, file string, flags []string, splits uint64) []string {
	var pieces []string
	merge := false
	for i, ch := range chunk.Split(text, chunk.OptionsForFlags(flags, file)) {
		if merge && len(pieces) > 0 {
			pieces[len(pieces)-1] += ch.Text
		} else {
			pieces = append(pieces, ch.Text)
		}
		merge = i < 64 && splits&(1<<i) != 0
	}
	return pieces
}

// fuzzOutcome is one side's outcome: its verdict and first error line (0 when accepted), or the
// crash that ended it.
type fuzzOutcome struct {
	ok    bool
	line  int
	file  string // the header the first error is in (its meta "file", a base name); "": the text
	crash string
}

// chunkedVerdict checks pieces in a fresh session (asking for a checkpoint after piece mid when
// mid >= 0) and returns its outcome and the checkpoint.
func chunkedVerdict(t *testing.T, c *Checker, opts checkers.SessionOptions, pieces []string, mid int) (fuzzOutcome, *Checkpoint) {
	t.Helper()
	s, err := c.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i, p := range pieces {
		if err := s.Submit(p, checkers.SubmitOptions{Checkpoint: i == mid}); err != nil {
			if errors.Is(err, checkers.ErrClosed) {
				break // ended early (a fatal error): its events say how
			}
			t.Fatal(err)
		}
	}
	_ = s.EOS()
	var cp *Checkpoint
	evs := collect(t, s)
	for _, ev := range evs {
		if ev.Kind == checkers.KindChkpt {
			cp = c.AdoptCheckpoint(ev.ID)
		}
	}
	return outcomeOf(evs), cp
}

// sessionOutcome submits pieces to a resumed session and returns its outcome.
func sessionOutcome(t *testing.T, s checkers.Session, pieces []string) fuzzOutcome {
	t.Helper()
	defer s.Close()
	for _, p := range pieces {
		if err := s.Submit(p, checkers.SubmitOptions{}); err != nil {
			break
		}
	}
	_ = s.EOS()
	return outcomeOf(collect(t, s))
}

// outcomeOf reads a session's verdict, first error line and crash from its events.
func outcomeOf(evs []checkers.Event) fuzzOutcome {
	var o fuzzOutcome
	for _, ev := range evs {
		switch ev.Kind {
		case checkers.KindError:
			if o.line == 0 {
				o.line = ev.Line
				// An error inside a header lands in the text where the header was entered; its
				// own file and line, as clang reports them, ride in the event's meta.
				if f, ok := ev.Meta["file"].(string); ok && f != "" {
					if l, ok := ev.Meta["file_line"].(float64); ok { // JSON numbers
						o.file, o.line = filepath.Base(f), int(l)
					}
				}
			}
		case checkers.KindDone:
			o.ok = ev.OK
		case checkers.KindCrash:
			o.crash = ev.Diag
		}
	}
	return o
}
