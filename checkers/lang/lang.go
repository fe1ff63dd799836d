// Package lang is Hydra's language seam (issue 36): one place that says, for each language Hydra
// serves, which files and LSP language IDs it takes, how its text is cut into checkable units
// and where blocks open and close (Syntax), how repair feedback is commented, how the project's
// configuration is found, and which checker checks it. The engine, the commands and the
// language server ask this package, by file name or language ID, instead of calling one
// language's lexer or checker themselves.
//
// Adding a language is one package under checkers/ (its checker and its Syntax) and one entry
// in languages (registry.go).
package lang

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/chunk"
	"github.com/hydra-lsp/hydra/checkers/wholefile"
)

// Chunk is one piece of text ready to submit to a checker session (checkers/chunk's, the same
// for every language: its text, offset, boundary category, preamble end, unclean tail).
type Chunk = chunk.Chunk

// Chunker cuts streamed text into chunks a checker session takes (checkers/chunk.Chunker is the
// C/C++ one): Write the text in any pieces, submit the chunks it returns in order, Flush at the
// end of input.
type Chunker interface {
	// Write feeds more text and returns the chunks that became complete.
	Write(text string) []Chunk
	// Flush ends the input and returns what is left (the last chunk Unclean when it does not
	// end at a clean cut).
	Flush() []Chunk
	// Depth is the brace depth over the complete lines written so far, the prefix's included.
	Depth() int
	// Offset is the number of bytes written so far.
	Offset() int
	// ClosingBrace is the offset (as Offset counts) of the first '}' of the last line written
	// that took the depth below d, or -1.
	ClosingBrace(d int) int
	// Closable returns the complete lines written since the last chunk returned, as one chunk,
	// and the text that closes what keeps them from being cut cleanly, so that the chunk's text
	// and the closer end at a clean cut: for C/C++, an "#endif" for each conditional open in
	// them (checkers/chunk). ok is false when nothing is held or the language knows no truthful
	// closer for what is open (TypeScript: a comment or a literal). The engine checks such
	// text in a throw-away continuation, to confirm lines before the real cut comes.
	Closable() (held Chunk, closer string, ok bool)
}

// Syntax is a language's lexical structure for one file (its flags and name).
type Syntax interface {
	// NewChunker returns a Chunker for text that continues prefix (which ends at a clean cut).
	NewChunker(prefix string) Chunker
	// Split cuts a whole text as a Chunker fed with it would.
	Split(text string) []Chunk
	// BraceDepth is the brace depth at the end of text, as Chunker.Depth counts it.
	BraceDepth(text string) int
	// PreambleEnd is the end of the text's preamble (what a warm start checkpoints), 0 if none.
	PreambleEnd(text string) int
	// InCommentOrLiteral says whether the end of text lies in a comment or a literal.
	InCommentOrLiteral(text string) bool
}

// CheckerOptions are what the commands and the language server set on a checker, whatever the
// language; a checker ignores what does not apply to it.
type CheckerOptions struct {
	// Timeout bounds how long a session may stay silent while an answer is due (clang.Options).
	Timeout time.Duration
	// Stderr receives the checker processes' own standard error.
	Stderr *os.File
	// OnDroppedFlag is told each compiler flag the checker left out (clang.Options).
	OnDroppedFlag func(flag, why string)
}

// FileOptions say how Language.CheckFile checks a program.
type FileOptions struct {
	// Name is the file's base name (its extension may pick the dialect).
	Name string
	// Compiler is the compiler to run; empty: the language's default (clang-19, the pinned tsc).
	Compiler string
	// Flags are compiler flags, for a language that takes them (UsesFlags).
	Flags []string
}

// Language is one language Hydra serves.
type Language struct {
	// Name is what messages call it ("C/C++", "TypeScript").
	Name string
	// Extensions are the file name extensions it serves, lower case with the dot.
	Extensions []string
	// LanguageIDs are the LSP language identifiers (TextDocumentItem.languageId) it serves.
	LanguageIDs []string
	// Untitled names, by language ID, the file a document without a path is checked as (the
	// language server); without an entry, "untitled" and the first extension.
	Untitled map[string]string
	// LineComment starts a line comment; repair feedback is written as such comments
	// (engine.FeedbackComment).
	LineComment string
	// ProjectConfig is the file that holds the project's configuration, found from the file's
	// directory up: compile_commands.json (compile flags) for C/C++, tsconfig.json for TypeScript.
	ProjectConfig string
	// UsesFlags says whether the checker takes compiler flags (SessionOptions.Flags); without
	// them the project's configuration is the checker's own business.
	UsesFlags bool
	// Syntax returns the language's Syntax for a file checked with flags.
	Syntax func(flags []string, filename string) Syntax
	// NewChecker starts the language's checker.
	NewChecker func(CheckerOptions) (checkers.Checker, error)
	// CheckFile checks a whole program on its own, as the language's compiler does from the
	// command line (clang -fsyntax-only, tsc --noEmit): the reference verdict of the simulated
	// model's fault planner and of `hydra bench`'s static check, independent of the checker.
	CheckFile func(ctx context.Context, text string, o FileOptions) (wholefile.Verdict, error)
	// LanguageServer finds the language's own language server, which `hydra lsp` can run
	// behind itself for clients that take one server per language (lsp/backend.go): its
	// program and the arguments that make it speak LSP on stdio.
	LanguageServer func() (string, []string, error)
}

// UntitledName is the file a document of language ID id without a path is checked as.
func (l *Language) UntitledName(id string) string {
	if n, ok := l.Untitled[id]; ok {
		return n
	}
	return "untitled" + l.Extensions[0]
}

// Serves says whether the language serves file by its extension.
func (l *Language) Serves(file string) bool {
	return slices.Contains(l.Extensions, strings.ToLower(filepath.Ext(file)))
}

// ForFile returns the language of file by its extension; C/C++ for any extension no language
// claims (Hydra's first language takes every file it always took).
func ForFile(file string) *Language {
	for _, l := range languages {
		if l.Serves(file) {
			return l
		}
	}
	return C
}

// ForLanguageID returns the language that serves an LSP language ID, or nil.
func ForLanguageID(id string) *Language {
	for _, l := range languages {
		if slices.Contains(l.LanguageIDs, id) {
			return l
		}
	}
	return nil
}

// All returns the registered languages, C/C++ first.
func All() []*Language { return slices.Clone(languages) }

// SyntaxFor is the Syntax of file under flags, in the language ForFile gives.
func SyntaxFor(flags []string, file string) Syntax {
	return ForFile(file).Syntax(flags, file)
}
