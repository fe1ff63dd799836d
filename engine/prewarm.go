package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/lang"
)

// Prewarm checks the preamble of text (its leading block of preprocessor lines: the language
// seam's Syntax.PreambleEnd, chunk.PreambleEnd for C/C++, none in TypeScript) in a session of
// its own and returns a checkpoint of the checker right after it, retained for the caller, who
// must Release it. While the caller holds it, every Search with the same checker, flags and
// filename whose text starts with that preamble resumes it (through Checker.Nearest) instead
// of parsing the headers again — the warm start that makes a `#include <bits/stdc++.h>` cost
// milliseconds instead of a second (checkers/clang/README.md).
// It returns nil and no error when text has no preamble.
func Prewarm(ctx context.Context, ck checkers.Checker, opts checkers.SessionOptions, text string) (checkers.Checkpoint, error) {
	syn := lang.SyntaxFor(opts.Flags, opts.Filename)
	end := syn.PreambleEnd(text)
	if end == 0 {
		return nil, nil
	}
	if cp := ck.Nearest(opts, text[:end]); cp != nil {
		if cp.Off() == end {
			return cp, nil
		}
		cp.Release()
	}
	sess, err := ck.Start(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("prewarm: start session: %w", err)
	}
	defer sess.Close()
	chs := syn.Split(text[:end])
	for i, c := range chs {
		if err := sess.Submit(c.Text, checkers.SubmitOptions{Cat: c.Cat, Checkpoint: i == len(chs)-1}); err != nil {
			return nil, fmt.Errorf("prewarm: submit preamble: %w", err)
		}
	}
	for {
		select {
		case ev, ok := <-sess.Events():
			if !ok {
				return nil, errors.New("prewarm: the checker session ended without a checkpoint")
			}
			switch ev.Kind {
			case checkers.KindChkpt:
				cp := ck.Adopt(ev.ID)
				if cp != nil && cp.Off() == end {
					return cp, nil
				}
				if cp != nil {
					cp.Release()
				}
			case checkers.KindError:
				return nil, fmt.Errorf("prewarm: the preamble does not compile: line %d: %s", ev.Line, ev.Diag)
			case checkers.KindCrash:
				return nil, fmt.Errorf("prewarm: checker crashed: %s", ev.Diag)
			}
		case <-ctx.Done():
			return nil, fmt.Errorf("prewarm: %w", ctx.Err())
		}
	}
}
