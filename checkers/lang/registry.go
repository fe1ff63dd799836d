package lang

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/chunk"
	"github.com/hydra-lsp/hydra/checkers/clang"
	"github.com/hydra-lsp/hydra/checkers/typescript"
	"github.com/hydra-lsp/hydra/checkers/wholefile"
)

// languages are the languages Hydra serves, C/C++ (the default) first. Adding a language is one
// entry here.
var languages = []*Language{C, TypeScript}

// C is C and C++ (and Objective-C), checked by Clang through checkers/clang's shim, cut by
// checkers/chunk.
var C = &Language{
	Name: "C/C++",
	Extensions: []string{".c", ".h", ".cc", ".cpp", ".cxx", ".c++", ".cp", ".hh", ".hpp", ".hxx", ".h++", ".inl",
		".ipp", ".tcc", ".cu", ".m", ".mm"},
	LanguageIDs:   []string{"c", "cpp", "objective-c", "objective-cpp", "cuda", "cuda-cpp"},
	LineComment:   "//",
	ProjectConfig: "compile_commands.json",
	UsesFlags:     true,
	Syntax: func(flags []string, filename string) Syntax {
		return cSyntax{chunk.OptionsForFlags(flags, filename)}
	},
	NewChecker: func(o CheckerOptions) (checkers.Checker, error) {
		return clang.New(clang.Options{Timeout: o.Timeout, Stderr: o.Stderr, OnDroppedFlag: o.OnDroppedFlag})
	},
	CheckFile: func(ctx context.Context, text string, o FileOptions) (wholefile.Verdict, error) {
		return wholefile.Check(ctx, text, wholefile.Options{Clang: o.Compiler, Name: o.Name, Flags: o.Flags})
	},
	// clangd: Debian's clangd-19 (the Clang Hydra checks with), else any clangd.
	LanguageServer: func() (string, []string, error) {
		for _, name := range []string{"clangd-19", "clangd"} {
			if p, err := exec.LookPath(name); err == nil {
				return p, nil, nil
			}
		}
		return "", nil, errors.New("neither clangd-19 nor clangd is on $PATH")
	},
}

// TypeScript is checked by TypeScript 7's native compiler (checkers/typescript), which reads
// the project's tsconfig.json itself.
var TypeScript = &Language{
	Name:          "TypeScript",
	Extensions:    []string{".ts", ".mts", ".cts", ".tsx"},
	LanguageIDs:   []string{"typescript", "typescriptreact"},
	Untitled:      map[string]string{"typescriptreact": "untitled.tsx"},
	LineComment:   "//",
	ProjectConfig: "tsconfig.json",
	Syntax: func(_ []string, filename string) Syntax {
		return tsSyntax{typescript.Syntax{JSX: strings.EqualFold(filepath.Ext(filename), ".tsx")}}
	},
	NewChecker: func(CheckerOptions) (checkers.Checker, error) {
		return typescript.New(typescript.Options{})
	},
	CheckFile: func(ctx context.Context, text string, o FileOptions) (wholefile.Verdict, error) {
		return typescript.CheckFile(ctx, o.Compiler, o.Name, text)
	},
	// TypeScript 7's own language server is the checker's compiler: `tsc --lsp --stdio`.
	LanguageServer: func() (string, []string, error) {
		p, err := typescript.FindCompiler("")
		return p, []string{"--lsp", "--stdio"}, err
	},
}

// cSyntax is checkers/chunk under the options clang's flags give.
type cSyntax struct{ opts chunk.Options }

func (s cSyntax) NewChunker(prefix string) Chunker {
	if prefix == "" {
		return chunk.New(s.opts)
	}
	return chunk.NewAfter(s.opts, prefix)
}
func (s cSyntax) Split(text string) []chunk.Chunk     { return chunk.Split(text, s.opts) }
func (s cSyntax) BraceDepth(text string) int          { return chunk.BraceDepth(text, s.opts) }
func (s cSyntax) PreambleEnd(text string) int         { return chunk.PreambleEnd(text, s.opts) }
func (s cSyntax) InCommentOrLiteral(text string) bool { return chunk.InCommentOrLiteral(text, s.opts) }

// tsSyntax is checkers/typescript's Syntax (its NewChunker returns its own Chunker type).
type tsSyntax struct{ typescript.Syntax }

func (s tsSyntax) NewChunker(prefix string) Chunker { return s.Syntax.NewChunker(prefix) }
