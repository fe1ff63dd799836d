package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/lang"
	"github.com/hydra-lsp/hydra/checkers/typescript"
)

// typeScriptFile reports whether hydra check takes file as TypeScript (by its extension, as the
// language seam, checkers/lang, says).
func typeScriptFile(file string) bool {
	return lang.ForFile(file) == lang.TypeScript
}

// checkTypeScript runs one TypeScript file through the TypeScript checker, streamed line by
// line, and prints its events to w as check does for C/C++; it returns the verdict. The
// project's tsconfig.json (found from the file's directory up) applies; without one, TypeScript
// 7's own defaults (typescript.DefaultConfig). Clang flags after -- do not apply.
func checkTypeScript(ctx context.Context, a checkArgs, w io.Writer) (bool, error) {
	text, err := os.ReadFile(a.file)
	if err != nil {
		return false, err
	}
	ch, err := typescript.New(typescript.Options{})
	if err != nil {
		return false, fmt.Errorf("start checker: %w", err)
	}
	defer ch.Close()
	abs, err := filepath.Abs(a.file)
	if err != nil {
		abs = a.file
	}
	sess, err := ch.Start(ctx, checkers.SessionOptions{Filename: abs})
	if err != nil {
		return false, fmt.Errorf("start session: %w", err)
	}
	defer sess.Close()

	submitted := make(chan error, 1)
	go func() { submitted <- streamLinesTS(sess, string(text), a.every) }()

	p := &checkPrinter{w: w, json: a.json, file: a.file}
	ok, err := p.follow(ctx, ch, sess)
	sess.Close()
	serr := <-submitted
	if err != nil {
		return false, fmt.Errorf("%s: %w", a.file, err)
	}
	if serr != nil && ok {
		return false, fmt.Errorf("%s: %w", a.file, serr)
	}
	p.summary(ok)
	return ok, nil
}

// streamLinesTS submits text a line at a time (the checker names each boundary itself: decl
// where every bracket is closed, line elsewhere), with a checkpoint every `every` lines when
// every > 0, then ends the input.
func streamLinesTS(sess checkers.Session, text string, every int) error {
	n := 0
	for off, line := 0, ""; off < len(text); off += len(line) {
		line = text[off:]
		if i := strings.IndexByte(line, '\n'); i >= 0 {
			line = line[:i+1]
		}
		n++
		if err := sess.Submit(line, checkers.SubmitOptions{Checkpoint: every > 0 && n%every == 0}); err != nil {
			return fmt.Errorf("submit at byte %d: %w", off, err)
		}
	}
	if err := sess.EOS(); err != nil {
		return fmt.Errorf("end of input: %w", err)
	}
	return nil
}
