package clang

import (
	"context"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/checkers/agreement"
)

// diffCase is one differential case: a source text checked under a file name and flags.
type diffCase struct {
	name  string
	file  string // its extension picks the language (.c: C, else C++), as for the checker
	flags []string
	text  string
}

// knownDisagreement is a case where the chunked checker is known to disagree with whole-file
// clang, with the reason and the checker's current verdict: the test asserts that the
// disagreement is still exactly that, so that it fails when the case is fixed (and must move
// to the agreeing table).
type knownDisagreement struct {
	diffCase
	reason string
	ok     bool // the checker's current verdict
	line   int  // its current first error line (0 when it accepts)
}

// diffSides runs both sides on c: whole-file clang-19 -fsyntax-only (checkers/wholefile, via
// agreement.Whole) and the chunked checker, with the text streamed line by line through
// checkers/chunk into one session of the real shim (agreement.Incremental). A failure of the
// reference (no temporary file, clang not run, no error line on a rejection) fails the test:
// it is no verdict to compare with. A failure of the checker's side (a crash, a lost chunk) is
// returned as the checker's error.
func diffSides(t *testing.T, ch *Checker, clangBin string, c diffCase) (whole, chunked agreement.Verdict, cerr error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	whole, err := agreement.Whole(ctx, clangBin, c.text, c.file, c.flags)
	if err != nil {
		t.Fatalf("%s: whole-file clang gave no verdict: %v", c.name, err)
	}
	chunked, cerr = agreement.Incremental(ctx, ch, c.text, c.file, c.flags)
	return whole, chunked, cerr
}

// sameVerdict compares verdicts and first error lines.
func sameVerdict(a, b agreement.Verdict) bool {
	return a.OK == b.OK && (a.OK || a.Line == b.Line)
}

// runDifferential asserts that the chunked checker agrees with whole-file clang on every case:
// the same verdict and, when rejected, the same first error line.
func runDifferential(t *testing.T, cases []diffCase) {
	clangBin := clangDriver(t)
	ch := newChecker(t, Options{Timeout: time.Minute})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			whole, chunked, err := diffSides(t, ch, clangBin, c)
			if err != nil {
				t.Fatalf("chunked checker failed: %v (whole-file clang: %v) on %q %q", err, whole, c.flags, c.text)
			}
			if !sameVerdict(whole, chunked) {
				t.Errorf("chunked checker: %v; whole-file clang: %v; flags %q, text %q", chunked, whole, c.flags, c.text)
			}
		})
	}
}

// runKnownDisagreements asserts that each case still disagrees with whole-file clang exactly as
// recorded: the checker's verdict and line as listed, clang's different.
func runKnownDisagreements(t *testing.T, cases []knownDisagreement) {
	clangBin := clangDriver(t)
	ch := newChecker(t, Options{Timeout: time.Minute})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			whole, chunked, err := diffSides(t, ch, clangBin, c.diffCase)
			if err != nil {
				t.Fatalf("chunked checker failed: %v on %q %q", err, c.flags, c.text)
			}
			recorded := agreement.Verdict{OK: c.ok, Line: c.line}
			if sameVerdict(whole, chunked) {
				t.Fatalf("now agrees with whole-file clang (%v): move it to the agreeing cases (it was: %s)", whole, c.reason)
			}
			if !sameVerdict(chunked, recorded) {
				t.Fatalf("chunked checker: %v, recorded %v (%s); whole-file clang: %v", chunked, recorded, c.reason, whole)
			}
		})
	}
}

// clangDriver returns the clang-19 driver or fails the test.
func clangDriver(t *testing.T) string {
	t.Helper()
	p, err := agreement.ClangPath()
	if err != nil {
		t.Fatal(err)
	}
	return p
}
