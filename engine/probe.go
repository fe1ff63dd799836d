package engine

import (
	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/lang"
)

// Probes: confirming lines that the chunker holds (docs/engine.md, "Inside an open #if").
//
// The chunker never cuts inside an open conditional (a Clang chunk is its own buffer with its
// own conditional stack), so a rollout's session waits at the last clean cut while the model
// writes the lines inside the `#if`; they reach it only with the `#endif`, or with the suffix in
// the final check. So that those lines are still checked as they come, the producer asks the
// language (lang.Chunker.Closable) for the held lines and the text that closes what is open in
// them (an `#endif` per open conditional), and the manager checks held lines + closer in a
// throw-away continuation: it resumes the live checkpoint nearest before them (once the last
// one the producer asked for before them exists: the one at the last clean cut, when it could
// ask for one there), submits the text between, the held lines and the closer as one chunk,
// and reads the verdict. Progress past the held lines makes
// a progress node at their end: a line confirmed as any other, streamed to the editor as any
// other. An error inside them is the rollout's error, found while the model still writes,
// handled as the rollout's own (checkError: the rollout stops and the policy repairs). An
// error in the closer itself says nothing about the lines and is left to the real check.
//
// A probe node has no checkpoint of its own: a rollback to it resumes the nearest checkpoint
// before it and resubmits the text between, as every spawn from a node without one does
// (spawn, Stats.ResubmittedBytes). One probe per rollout runs at a time; a newer request
// replaces one still waiting, since it checks all the held lines again.

// probeReq asks for a probe of a rollout's held lines (offsets in the rollout's checked text).
type probeReq struct {
	start  int    // where the held lines start: the last clean cut
	end    int    // the end of the held lines (complete lines)
	closer string // what closes what is open in them
	cat    string // the boundary category of their last line
	// after is where the last checkpoint the producer asked for before the held lines lies (at
	// start when it could ask for one there), -1 if none: the probe waits for its chkpt event
	// rather than re-check the text before it from an older checkpoint, or from scratch.
	after int
}

// probeHeld asks the manager to probe the chunker's held lines when there are new ones past
// the start node. It runs on the producer goroutine: base is the start node's text, ckptAt the
// end of the last chunk it asked a checkpoint for (-1: none) and last the end of the last probe
// it asked for (updated).
func (s *search) probeHeld(r *rollout, ch lang.Chunker, base string, ckptAt int, last *int) {
	held, closer, ok := ch.Closable()
	if !ok {
		return
	}
	start, end := r.resumeOff+held.Off, r.resumeOff+held.End()
	if end <= len(base) || end <= *last {
		return // nothing new past what the start node already holds
	}
	*last = end
	r.mu.Lock()
	r.depths[end] = held.Depth
	r.mu.Unlock()
	s.send(message{r: r, kind: msgProbe, probe: &probeReq{start: start, end: end, closer: closer, cat: held.Cat, after: ckptAt}})
}

// wantProbe records the newest probe request of r and starts it when it can.
func (s *search) wantProbe(r *rollout, p *probeReq) {
	if !r.live {
		return
	}
	r.probeWant = p
	s.maybeProbe(r)
}

// maybeProbe starts r's waiting probe unless one is running, its lines are confirmed already,
// or the checkpoint it waits for has not come yet.
func (s *search) maybeProbe(r *rollout) {
	p := r.probeWant
	if p == nil || r.probing || !r.live || s.ended {
		return
	}
	if p.end <= r.head.Off {
		r.probeWant = nil // the rollout's session confirmed them meanwhile
		return
	}
	if r.chkptAt < p.after {
		return // checkpoint() calls again when it comes
	}
	r.probeWant = nil
	r.probing = true
	s.stats.Probes++
	cp := s.ck.Nearest(s.sessOpts, r.textUpTo(p.start))
	from := 0
	if cp != nil {
		from = cp.Off()
	}
	s.stats.ProbeBytes += p.end - from + len(p.closer)
	s.wg.Add(1)
	go s.probe(r, *p, cp)
}

// probe runs one probe (on its own goroutine) and tells the manager its verdict: ev.OK when
// the checker accepted the held lines. It releases cp, the retained checkpoint to resume (nil:
// a fresh session checks the text from its start).
func (s *search) probe(r *rollout, p probeReq, cp checkers.Checkpoint) {
	defer s.wg.Done()
	ok := s.probeVerdict(r, p, cp)
	s.send(message{r: r, kind: msgProbeDone, probe: &p, ev: checkers.Event{OK: ok}})
}

// probeVerdict resumes cp (or starts afresh), submits the text from there to the held lines'
// end and the closer, and reads until the verdict. Errors inside the held text go to the
// manager as they come (msgProbeEvent); it reports whether progress passed the held lines.
func (s *search) probeVerdict(r *rollout, p probeReq, cp checkers.Checkpoint) bool {
	var sess checkers.Session
	var err error
	from := 0
	if cp != nil {
		from = cp.Off()
		sess, err = s.ck.Resume(r.ctx, cp)
		cp.Release()
	} else {
		sess, err = s.ck.Start(r.ctx, s.sessOpts)
	}
	if err != nil {
		return false
	}
	defer sess.Close()
	text := r.textUpTo(p.end)
	if len(text) < p.end || from > p.start {
		return false
	}
	if sess.Submit(text[from:]+p.closer, checkers.SubmitOptions{Cat: p.cat, KeepGoing: s.req.Baseline}) != nil {
		return false
	}
	want := p.end + len(p.closer)
	for {
		select {
		case ev, open := <-sess.Events():
			if !open {
				return false
			}
			switch ev.Kind {
			case checkers.KindProgress:
				if ev.Off >= want {
					return true
				}
			case checkers.KindError:
				if ev.Off >= p.end {
					return false // in the closer: nothing said about the held lines
				}
				if !s.send(message{r: r, kind: msgProbeEvent, ev: ev, probe: &p}) || !s.req.Baseline {
					return false
				}
				// With a baseline the manager may excuse it; the session goes on.
			case checkers.KindChkpt:
				if c := s.ck.Adopt(ev.ID); c != nil {
					c.Release()
				}
			case checkers.KindDone, checkers.KindCrash:
				return false
			}
		case <-r.ctx.Done():
			return false
		}
	}
}

// probeEvent handles an error a probe of r found inside r's held lines: r's own error.
func (s *search) probeEvent(r *rollout, ev checkers.Event) {
	if r.live {
		s.checkError(r, ev)
	}
}

// probeDone handles the end of r's probe p: accepted held lines become a progress node at
// their end; then the next waiting probe starts.
func (s *search) probeDone(r *rollout, p *probeReq, ok bool) {
	r.probing = false
	if !r.live {
		return
	}
	if ok {
		s.progress(r, checkers.Event{Kind: checkers.KindProgress, Off: p.end, Cat: p.cat})
	}
	s.maybeProbe(r)
}
