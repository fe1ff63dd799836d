package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/lang"
)

// This file is Request.Baseline: errors that were in the document before generation are not
// the model's. The baseline is the document with the generated region empty (Prefix+Suffix,
// with a `}` for each block open at the insertion point that the suffix does not close).
// It is checked once, the first time a rollout meets an error (a document that compiles never
// pays for it); an error then counts only when it is new relative to the baseline — matched by
// message and position, the position shifted by the generated text when it lies in the suffix.
// Excused errors neither stop a rollout nor spend an attempt: every session runs with
// SubmitOptions.KeepGoing, so Clang recovers and goes on reporting progress past them.

// baselineTimeout bounds the baseline check (a whole-document check).
const baselineTimeout = 2 * time.Minute

// baseline is the baseline's errors, once checked.
type baseline struct {
	errs []checkers.Event
	err  error // the check itself failed: nothing is excused
	// closer closes, in the baseline, the blocks the generated text must close (a signature
	// with no `}` anywhere): without it everything after the region would be parsed inside
	// the open body and its errors would not be the document's.
	closer string
}

// checkBaseline checks Prefix+Suffix once and remembers its errors.
func (s *search) checkBaseline() *baseline {
	if s.base != nil {
		return s.base
	}
	ctx, cancel := context.WithTimeout(s.ctx, baselineTimeout)
	defer cancel()
	closer := strings.Repeat("}\n", s.needClose())
	errs, err := CheckText(ctx, s.ck, s.sessOpts, s.req.Prefix+closer+s.req.Suffix)
	s.base = &baseline{errs: errs, err: err, closer: closer}
	if err != nil {
		s.note(fmt.Sprintf("the document could not be checked without the generated code (%v): errors elsewhere count as the model's", err))
	}
	return s.base
}

// CheckText checks text as a whole translation unit in one fresh session and returns its errors
// in order.
func CheckText(ctx context.Context, ck checkers.Checker, opts checkers.SessionOptions, text string) ([]checkers.Event, error) {
	// A fresh session, never a resumed checkpoint: the verdict must not depend on a state made
	// elsewhere (a checkpoint taken past an error, or for another document).
	sess, err := ck.Start(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("check document: start session: %w", err)
	}
	defer sess.Close()
	go func() {
		for _, c := range lang.Merge(lang.SyntaxFor(opts.Flags, opts.Filename).Split(text), lang.MergeMin(len(text))) {
			if sess.Submit(c.Text, checkers.SubmitOptions{Cat: c.Cat}) != nil {
				return
			}
		}
		_ = sess.EOS()
	}()
	var errs []checkers.Event
	for {
		select {
		case <-ctx.Done():
			return errs, fmt.Errorf("check document: %w", ctx.Err())
		case ev, ok := <-sess.Events():
			if !ok {
				return errs, fmt.Errorf("check document: the session ended without a verdict")
			}
			switch ev.Kind {
			case checkers.KindError:
				errs = append(errs, ev)
			case checkers.KindChkpt:
				if cp := ck.Adopt(ev.ID); cp != nil {
					cp.Release()
				}
			case checkers.KindDone:
				return errs, nil
			case checkers.KindCrash:
				return errs, fmt.Errorf("check document: %s", ev.Diag)
			}
		}
	}
}

// excused says whether ev, an error of rollout r, was already in the baseline (and records it
// for Result.Baseline). Errors inside the generated text are never excused.
func (s *search) excused(r *rollout, ev checkers.Event) bool {
	if !s.req.Baseline || s.ck == nil {
		return false
	}
	text, genEnd := r.snapshot()
	prefixLen := len(s.req.Prefix)
	genLen := genEnd - prefixLen
	if ev.Off >= prefixLen && ev.Off < genEnd {
		return false
	}
	b := s.checkBaseline()
	if b.err != nil {
		return false
	}
	genLines := strings.Count(text[prefixLen:genEnd], "\n")
	for _, e := range b.errs {
		if e.Diag != ev.Diag {
			continue
		}
		off, line := e.Off, e.Line
		if e.Off >= prefixLen {
			if e.Off < prefixLen+len(b.closer) {
				continue // at the closing braces the baseline added
			}
			off -= len(b.closer)
			line -= strings.Count(b.closer, "\n")
			off, line = off+genLen, line+genLines
		}
		if ev.Off == off || (line > 0 && ev.Line == line) {
			if ev.Cat == checkers.CatFatal {
				// A fatal error (a missing #include) stops Clang: nothing after it is checked,
				// so it cannot be gone past. The search ends on it, as on a prefix error.
				s.prefixError(r, ev)
				return true
			}
			key := fmt.Sprintf("%d\x00%s", e.Off, e.Diag)
			if !s.excusedSeen[key] {
				s.excusedSeen[key] = true
				s.excusedErrs = append(s.excusedErrs, e)
			}
			return true
		}
	}
	return false
}

// documentHas says whether ev, an error a rollout met inside the prefix, is the document's own:
// the document with the generated region empty (the baseline, checked once) has the same error
// at the same place. When the baseline cannot be checked, an error inside the prefix counts as
// the document's, as before this check existed.
func (s *search) documentHas(ev checkers.Event) bool {
	b := s.checkBaseline()
	if b.err != nil {
		return true
	}
	for _, e := range b.errs {
		if e.Diag == ev.Diag && (e.Off == ev.Off || (ev.Line > 0 && e.Line == ev.Line)) {
			return true
		}
	}
	return false
}

// acceptsDespiteErrors says whether a rollout whose session ended with done{ok:false} is
// accepted: in baseline mode, when the baseline had errors (each error the rollout met was
// excused, or it would have stopped at it) and the generated text closes what it must — an
// error at the end of input such as "expected '}'" would otherwise excuse an unfinished body.
func (s *search) acceptsDespiteErrors(r *rollout) bool {
	if !s.req.Baseline {
		return false
	}
	if b := s.checkBaseline(); b.err != nil || len(b.errs) == 0 {
		return false
	}
	text, genEnd := r.snapshot()
	return s.closesWhatItMust(text[len(s.req.Prefix):genEnd])
}

// closesWhatItMust says whether gen, written at the insertion point, leaves the brace depth
// where the document needs it: the blocks open at the insertion point that the suffix does not
// close are closed by gen, and nothing more is left open.
func (s *search) closesWhatItMust(gen string) bool {
	need := s.needClose()
	c := s.syntax.NewChunker(s.req.Prefix)
	c.Write(gen)
	c.Flush()
	return c.Depth()-s.prefixDepth == -need
}

// needClose is how many blocks open at the insertion point the generated text must close: those
// the suffix does not close.
func (s *search) needClose() int {
	closedBySuffix := -minDepth(s.req.Suffix, s.syntax)
	return s.prefixDepth - min(s.prefixDepth, closedBySuffix)
}

// minDepth is the lowest brace depth text reaches from 0, line by line (negative when it closes
// blocks opened before it).
func minDepth(text string, syn lang.Syntax) int {
	c := syn.NewChunker("")
	low := 0
	for len(text) > 0 {
		j := strings.IndexByte(text, '\n')
		if j < 0 {
			j = len(text) - 1
		}
		c.Write(text[:j+1])
		text = text[j+1:]
		low = min(low, c.Depth())
	}
	c.Flush()
	return min(low, c.Depth())
}

// baselineResult is Result.Baseline: the excused errors, in document order.
func (s *search) baselineResult() []checkers.Event {
	out := append([]checkers.Event(nil), s.excusedErrs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Off < out[j].Off })
	return out
}
