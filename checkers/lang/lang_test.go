package lang

import (
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hydra-lsp/hydra/checkers/chunk"
)

func TestLookup(t *testing.T) {
	files := map[string]*Language{
		"a.ts": TypeScript, "b.MTS": TypeScript, "c.cts": TypeScript, "d/e.tsx": TypeScript,
		"a.c": C, "a.cpp": C, "a.h": C, "noext": C, "a.inc": C, "": C,
	}
	for f, want := range files {
		if got := ForFile(f); got != want {
			t.Errorf("ForFile(%q) = %s, want %s", f, got.Name, want.Name)
		}
	}
	ids := map[string]*Language{"typescript": TypeScript, "typescriptreact": TypeScript, "c": C, "cpp": C, "python": nil, "": nil}
	for id, want := range ids {
		if got := ForLanguageID(id); got != want {
			t.Errorf("ForLanguageID(%q) = %v, want %v", id, got, want)
		}
	}
	if a, b := TypeScript.UntitledName("typescript"), TypeScript.UntitledName("typescriptreact"); a != "untitled.ts" || b != "untitled.tsx" {
		t.Errorf("untitled TypeScript documents are checked as %q and %q, want untitled.ts and untitled.tsx (JSX)", a, b)
	}
	if all := All(); len(all) < 2 || all[0] != C {
		t.Errorf("All() = %v, want C/C++ first", all)
	}
	for _, l := range All() {
		if l.Name == "" || len(l.Extensions) == 0 || len(l.LanguageIDs) == 0 || l.LineComment == "" ||
			l.ProjectConfig == "" || l.Syntax == nil || l.NewChecker == nil {
			t.Errorf("language %+v leaves something unsaid", l)
		}
	}
}

// The C/C++ Syntax is checkers/chunk under the options the flags give, unchanged; TypeScript's
// is its own: a '}' in a template literal is no block to it, and a cut never falls inside one.
func TestSyntaxIsTheLanguagesOwn(t *testing.T) {
	texts := []string{
		"#include <stdio.h>\n\nint f(void) {\n  return 1'0;\n}\n",
		"/* a\n b */ int x = R\"(})\";\nvoid g() {\n",
		"#define M(x) x\nint y = M\n(1);\n",
	}
	for _, flags := range [][]string{nil, {"-xc", "-std=c89"}, {"-std=c++11"}} {
		syn := C.Syntax(flags, "f.cpp")
		opts := chunk.OptionsForFlags(flags, "f.cpp")
		for _, text := range texts {
			if got, want := syn.Split(text), chunk.Split(text, opts); !reflect.DeepEqual(got, want) {
				t.Errorf("flags %q: Split(%q) = %+v, chunk.Split %+v", flags, text, got, want)
			}
			if got, want := syn.BraceDepth(text), chunk.BraceDepth(text, opts); got != want {
				t.Errorf("flags %q: BraceDepth(%q) = %d, chunk's %d", flags, text, got, want)
			}
			if got, want := syn.PreambleEnd(text), chunk.PreambleEnd(text, opts); got != want {
				t.Errorf("flags %q: PreambleEnd(%q) = %d, chunk's %d", flags, text, got, want)
			}
			ch := syn.NewChunker(text[:strings.IndexByte(text, '\n')+1])
			ch.Write(text[strings.IndexByte(text, '\n')+1:])
			ch.Flush()
			if got, want := ch.Depth(), chunk.BraceDepth(text, opts); got != want {
				t.Errorf("flags %q: a Chunker after the first line of %q ends at depth %d, want %d", flags, text, got, want)
			}
		}
	}
	const ts = "function f() {\n  const s = `}\n`;\n"
	if d := SyntaxFor(nil, "x.ts").BraceDepth(ts); d != 1 {
		t.Errorf("TypeScript's depth of %q = %d, want 1", ts, d)
	}
	if d := SyntaxFor(nil, "x.cpp").BraceDepth(ts); d == 1 {
		t.Errorf("C++'s depth of %q = 1: the seam did not pick the file's language", ts)
	}
	if chs := SyntaxFor(nil, "x.ts").Split(ts); len(chs) != 2 || chs[1].Text != "  const s = `}\n`;\n" {
		t.Errorf("TypeScript chunks of %q: %+v", ts, chs)
	}
}

// The engine and the language server speak to the seam, not to one language's lexer or
// checker, and the policies to the search tree only (issue 36: "policy/ imports no checkers
// package, and lsp/ and engine/ contain no C lexing of their own").
func TestLayering(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}",
		"github.com/hydra-lsp/hydra/engine", "github.com/hydra-lsp/hydra/lsp", "github.com/hydra-lsp/hydra/policy").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 {
		t.Fatalf("go list printed %q", out)
	}
	for _, line := range lines {
		f := strings.Fields(line)
		if f[0] == "github.com/hydra-lsp/hydra/policy" {
			for _, imp := range f[1:] {
				if strings.HasPrefix(imp, "github.com/hydra-lsp/hydra/checkers") {
					t.Errorf("policy imports %s", imp)
				}
			}
			continue
		}
		seam := false
		for _, imp := range f[1:] {
			switch strings.TrimPrefix(imp, "github.com/hydra-lsp/hydra/") {
			case "checkers/chunk", "checkers/clang", "checkers/typescript":
				t.Errorf("%s imports %s", f[0], imp)
			case "checkers/lang":
				seam = true
			}
		}
		if !seam {
			t.Errorf("%s does not import checkers/lang", f[0])
		}
	}
}

// Each language's checker starts (TypeScript's compiler from scripts/install-deps.sh, Clang's
// shim from make build) and closes.
func TestNewChecker(t *testing.T) {
	for _, l := range All() {
		ck, err := l.NewChecker(CheckerOptions{})
		if err != nil {
			t.Fatalf("%s: %v", l.Name, err)
		}
		if err := ck.Close(); err != nil {
			t.Errorf("%s: close: %v", l.Name, err)
		}
	}
}

// Each language names its own language server: clangd for C/C++ (when one is on $PATH), and
// TypeScript 7's compiler in its LSP mode for TypeScript (installed by scripts/install-deps.sh).
func TestLanguageServers(t *testing.T) {
	p, args, err := TypeScript.LanguageServer()
	if err != nil {
		t.Fatalf("TypeScript's language server: %v", err)
	}
	if filepath.Base(p) != "tsc" || strings.Join(args, " ") != "--lsp --stdio" {
		t.Errorf("TypeScript's language server %s %v, want tsc --lsp --stdio", p, args)
	}
	_, lookErr := exec.LookPath("clangd-19")
	if p, _, err := C.LanguageServer(); (err == nil) != (lookErr == nil || p != "") || err == nil && !strings.Contains(filepath.Base(p), "clangd") {
		t.Errorf("C/C++'s language server %q, %v (clangd-19 on $PATH: %v)", p, err, lookErr == nil)
	}
}
