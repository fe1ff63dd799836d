package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/lang"
	"github.com/hydra-lsp/hydra/engine/model"
)

// Search runs one generation request to its end (docs/engine.md): it streams rollouts from gen,
// checks them with ck as they stream, builds the search tree from the checker's events, asks
// the request's policy what to do on every new node and carries out its spawns, kills and
// prunes, until the checker accepts a rollout or a budget runs out.
//
// It returns a Result in every case where the search itself could run: accepted text, or the
// best attempt with its diagnostics and the reason it stopped (including "cancelled" when ctx
// is cancelled, and "deadline"). The error is non-nil only for infrastructure failures — the
// model server unreachable or refusing the request, the checker unable to start a session —
// and then the Result, when not nil, holds what was done before.
//
// Result.Reason is one of: "accepted" (for an Unchecked search: streamed to its end);
// "max_attempts" (a spawn was refused, or none was left, with the attempts spent);
// "max_tokens"; "deadline" (Budget.Deadline or ctx's deadline); "cancelled"; "no_repair" (the
// policy spawned nothing more); "prefix_error" (the text before the insertion point does not
// compile, so nothing generated can be accepted; Diagnostics holds its error); and, with a
// non-nil error, "model_unavailable", "model_error" (the server refused the request before any
// token) or "checker_error".
//
// Every checker session and checkpoint the search made is closed or released when it
// returns. ck may be nil only when the policy's Mode is Unchecked.
func Search(ctx context.Context, ck checkers.Checker, gen model.Generator, req Request) (*Result, error) {
	if gen == nil {
		return nil, errors.New("search: no model generator")
	}
	s := newSearch(ck, gen, req)
	if ck == nil && s.mode != Unchecked {
		return nil, errors.New("search: no checker (only an Unchecked policy runs without one)")
	}
	return s.run(ctx)
}

// DefaultRolloutTokens is the max_tokens of one rollout's request when Request.Params leaves
// it zero (OpenAI-style servers default to as few as 16 tokens); the search's token budget
// lowers it further.
const DefaultRolloutTokens = 4096

// search is one running Search. The manager goroutine (run) owns the tree and every field
// not marked otherwise; rollout goroutines talk to it through msgs.
type search struct {
	ck     checkers.Checker
	gen    model.Generator
	req    Request
	policy Policy
	mode   Mode
	budget Budget
	prompt string // Request.Prompt, or Prefix when empty

	sessOpts     checkers.SessionOptions
	lang         *lang.Language // the language seam: the request's language, by its file name
	syntax       lang.Syntax    // how the request's file is lexed
	prefixDepth  int            // brace depth at the insertion point
	suffixCloses bool           // the suffix closes blocks open at the insertion point

	ctx   context.Context // the search's context (with the deadline)
	start time.Time
	msgs  chan message
	done  chan struct{} // closed when the manager stops reading msgs
	wg    sync.WaitGroup

	// Shared with the rollout goroutines.
	tokens    atomic.Int64 // output pieces streamed, over all rollouts (for the budget)
	modelWait atomic.Int64 // ns token streaming waited for the checker

	t             *tree
	rollouts      []*rollout
	live          map[int]*rollout
	pending       []Spawn // spawns waiting for a free checker process
	errNodes      []*Node
	rng           *rand.Rand
	rootConfirmed bool
	stats         Stats
	firstCheck    bool
	attemptsOut   bool // a spawn was refused for the attempts budget
	handling      *Node

	ended     bool
	reason    string
	err       error
	accepted  *rollout
	prefixErr *checkers.Event
	// clampedDiag holds the diagnostics of errors reported inside the prefix after it was
	// accepted.
	clampedDiag map[string]bool
	// notes are Result.Notes, each once.
	notes []string
	// base is the baseline's errors once checked (Request.Baseline, baseline.go);
	// excusedErrs the baseline errors rollouts met, each once (excusedSeen).
	base        *baseline
	excusedErrs []checkers.Event
	excusedSeen map[string]bool
}

func newSearch(ck checkers.Checker, gen model.Generator, req Request) *search {
	s := &search{ck: ck, gen: gen, req: req, policy: req.Policy, live: map[int]*rollout{}, clampedDiag: map[string]bool{}, excusedSeen: map[string]bool{},
		rng: rand.New(rand.NewSource(1))}
	if s.policy == nil {
		s.policy = DefaultPolicy()
	}
	if m, ok := s.policy.(Moder); ok {
		s.mode = m.Mode()
	}
	s.budget = req.Budget.withDefaults()
	s.prompt = req.Prompt
	if s.prompt == "" {
		s.prompt = req.Prefix
	}
	s.sessOpts = checkers.SessionOptions{Flags: req.Flags, Filename: req.Filename, Root: req.Root}
	s.lang = lang.ForFile(req.Filename)
	s.syntax = s.lang.Syntax(req.Flags, req.Filename)
	s.prefixDepth = s.syntax.BraceDepth(req.Prefix)
	s.suffixCloses = req.Suffix != "" && s.syntax.BraceDepth(req.Suffix) < 0
	s.t = newTree(req.Prefix, s.budget.MaxCheckpoints)
	return s
}

// withDefaults fills zero fields from DefaultBudget.
func (b Budget) withDefaults() Budget {
	d := DefaultBudget()
	if b.MaxTokens == 0 {
		b.MaxTokens = d.MaxTokens
	}
	if b.MaxAttempts == 0 {
		b.MaxAttempts = d.MaxAttempts
	}
	if b.Deadline == 0 {
		b.Deadline = d.Deadline
	}
	if b.MaxCheckpoints == 0 {
		b.MaxCheckpoints = d.MaxCheckpoints
	}
	if b.MaxProcesses == 0 {
		b.MaxProcesses = d.MaxProcesses
	}
	return b
}

func (s *search) run(parent context.Context) (*Result, error) {
	s.start = time.Now()
	s.t.start = s.start
	ctx, cancel := context.WithTimeout(parent, s.budget.Deadline)
	defer cancel()
	s.ctx = ctx
	s.msgs = make(chan message)
	s.done = make(chan struct{})

	s.spawn(Spawn{From: s.t.root})
	for !s.ended {
		if len(s.live) == 0 && len(s.pending) == 0 {
			s.finishWithout()
			break
		}
		select {
		case m := <-s.msgs:
			s.handle(m)
		case <-ctx.Done():
			switch {
			case parent.Err() == nil || errors.Is(parent.Err(), context.DeadlineExceeded):
				s.end("deadline", nil)
			default:
				s.end("cancelled", nil)
			}
		}
	}
	close(s.done)
	for _, r := range s.rollouts {
		if r.live {
			s.stopRollout(r, "killed")
		}
		r.cancel()
	}
	s.wg.Wait()
	res := s.result()
	for _, r := range s.rollouts {
		for _, cp := range r.pending {
			cp.Release()
		}
		r.pending = nil
	}
	s.t.releaseAll()
	s.update(Update{Kind: "done", Attempt: len(s.rollouts), Accepted: res.Text, Message: "search ended: " + res.Reason})
	return res, s.err
}

// finishWithout ends a search that has no rollout left to wait for.
func (s *search) finishWithout() {
	switch {
	case s.attemptsOut || len(s.rollouts) >= s.budget.MaxAttempts:
		s.end("max_attempts", nil)
	default:
		s.end("no_repair", nil) // the policy spawned nothing more
	}
}

// end stops the search with reason (and an infrastructure error, if any).
func (s *search) end(reason string, err error) {
	if s.ended {
		return
	}
	s.ended, s.reason, s.err = true, reason, err
}

// spawn carries out a Spawn action. It reports false when the spawn had to wait for a free
// checker process (it is then queued in s.pending).
func (s *search) spawn(a Spawn) bool {
	from := a.From
	if from == nil || from.Pruned || (from.Kind != NodeRoot && from.Kind != NodeProgress) {
		return true
	}
	if len(s.rollouts) >= s.budget.MaxAttempts {
		s.attemptsOut = true
		return true
	}
	// Each rollout needs a checker process; checkpoints give way first.
	if s.mode != Unchecked {
		for len(s.live)+1+s.t.held > s.budget.MaxProcesses && s.t.evictOne() {
		}
		if len(s.live)+1 > s.budget.MaxProcesses {
			s.pending = append(s.pending, a)
			return false
		}
	}
	params := s.req.Params
	if a.Params != nil {
		params = *a.Params
	}
	left := max(s.budget.MaxTokens-int(s.tokens.Load()), 1)
	if params.MaxTokens <= 0 {
		params.MaxTokens = DefaultRolloutTokens
	}
	params.MaxTokens = min(params.MaxTokens, left)
	if w, ok := s.policy.(LogprobsWanter); ok && params.Logprobs == 0 {
		params.Logprobs, _ = w.WantsLogprobs()
	}
	r := &rollout{id: len(s.rollouts), start: from, head: from, feedback: a.Feedback, params: params, spawned: time.Since(s.t.start),
		live: true, pending: map[int]checkers.Checkpoint{}, genEnd: -1, notify: make(chan struct{}, 1), depths: map[int]int{}}
	r.wantStartCkpt = from.Checkpoint == nil
	r.prompt = spawnPrompt(s.lang.LineComment, s.prompt, s.req.Prefix, from.Text, a.Feedback)
	r.text.WriteString(from.Text)
	r.ctx, r.cancel = context.WithCancel(s.ctx)
	if s.mode != Unchecked {
		cp := s.t.nearestCheckpoint(from)
		if warm := s.ck.Nearest(s.sessOpts, from.Text); warm != nil {
			if cp == nil || warm.Off() > cp.Off() {
				// A warm start from a checkpoint made elsewhere (e.g. a shared preamble,
				// see Prewarm); the tree keeps the reference Nearest gave.
				s.t.spare(warm)
				cp = warm
			} else {
				warm.Release()
			}
		}
		if cp != nil {
			cp.Retain()
			r.resume, r.resumeOff = cp, cp.Off()
		}
		if r.resume != nil {
			s.stats.CheckpointResumes++
		}
		if r.id > 0 {
			s.stats.ResubmittedBytes += len(from.Text) - r.resumeOff
		}
	}
	if h := s.handling; h != nil && (h.Kind == NodeError || h.Kind == NodeFail) {
		s.stats.Rollbacks++
		dist := max(lineOf(h.Text, h.Off)-lineOf(from.Text, from.Off), 0)
		s.stats.RollbackLines = append(s.stats.RollbackLines, dist)
		s.update(Update{Kind: "rollback", Attempt: r.id + 1, Accepted: s.generated(from.Text),
			Message: fmt.Sprintf("attempt %d: %s — %s", r.id+1, rollbackPhrase(dist), oneLine(h.Diag))})
	}
	s.rollouts = append(s.rollouts, r)
	s.live[r.id] = r
	s.update(Update{Kind: "attempt", Attempt: r.id + 1, Accepted: s.generated(from.Text),
		Message: fmt.Sprintf("attempt %d from line %d", r.id+1, from.Line)})
	q := newQueue()
	s.wg.Add(1)
	go s.produce(r, q)
	if s.mode != Unchecked {
		s.wg.Add(1)
		go s.submit(r, q)
	} else if r.resume != nil {
		r.resume.Release()
	}
	return true
}

// generated is the part of text after the prefix.
func (s *search) generated(text string) string {
	return text[min(len(s.req.Prefix), len(text)):]
}

// stopRollout ends r at once: its stream and session close, its pending checkpoints go.
func (s *search) stopRollout(r *rollout, outcome string) {
	if !r.live {
		return
	}
	r.live = false
	r.outcome = outcome
	r.cancel()
	for off, cp := range r.pending {
		cp.Release()
		delete(r.pending, off)
	}
	delete(s.live, r.id)
	for len(s.pending) > 0 && !s.ended {
		a := s.pending[0]
		s.pending = s.pending[1:]
		if !s.spawn(a) {
			// Still no room: put it back in front.
			s.pending = append([]Spawn{a}, s.pending[:len(s.pending)-1]...)
			break
		}
	}
}

// handle processes one message from a rollout.
func (s *search) handle(m message) {
	r := m.r
	switch m.kind {
	case msgSession:
		r.sessID = m.ev.ID
	case msgCheckerErr:
		if r.live {
			s.end("checker_error", fmt.Errorf("start checker session: %w", m.err))
		}
	case msgNote:
		s.note(m.note)
	case msgWaiting:
		s.update(Update{Kind: "waiting", Attempt: r.id + 1, Message: m.note})
	case msgStreamEnd:
		s.logprobsNote(r)
		s.streamEnded(r, m.err)
	case msgEvent:
		s.event(r, m.ev)
	case msgProbe:
		s.wantProbe(r, m.probe)
	case msgProbeEvent:
		s.probeEvent(r, m.ev)
	case msgProbeDone:
		s.probeDone(r, m.probe, m.ev.OK)
	}
}

// streamEnded handles the end of r's model stream.
func (s *search) streamEnded(r *rollout, err error) {
	r.mu.Lock()
	pieces := r.pieces
	r.mu.Unlock()
	if !r.live {
		return
	}
	switch {
	case err == nil:
		if s.mode == Unchecked {
			text, _ := r.snapshot()
			n := s.t.add(r.head, &Node{Kind: NodeDone, Off: len(text), Line: lineOf(text, len(text)), Rollout: r.id, Text: text})
			r.head = n
			s.stopRollout(r, "accepted")
			s.accepted = r
			s.onNode(n, r)
			s.end("accepted", nil)
		}
	case errors.Is(err, errTokenBudget):
		s.stopRollout(r, "budget")
		s.end("max_tokens", nil)
	case errors.Is(err, errLengthCut):
		s.note(fmt.Sprintf("attempt %d stopped at the model's length limit (finish_reason \"length\", max_tokens %d): its text is cut, not complete",
			r.id+1, r.params.MaxTokens))
		if s.mode == Unchecked {
			s.streamEnded(r, nil)
			return
		}
		s.fail(r, "length", errLengthCut.Error())
	case errors.Is(err, model.ErrUnavailable):
		s.stopRollout(r, "model_unavailable")
		s.end("model_unavailable", fmt.Errorf("attempt %d: %w", r.id+1, err))
	case r.ctx.Err() != nil:
		// Killed, or the search is over: nothing to record.
	case pieces == 0 && !errors.Is(err, model.ErrStreamCut):
		// The server refused the request before any token (bad model name, bad request…).
		s.stopRollout(r, "model_error")
		s.end("model_error", fmt.Errorf("attempt %d: %w", r.id+1, err))
	default:
		outcome := "model_error"
		if errors.Is(err, model.ErrStreamCut) {
			outcome = "stream_cut"
		}
		s.fail(r, outcome, err.Error())
	}
}

// note records something the summary should say (once) and reports it as a "note" update.
func (s *search) note(text string) {
	if text == "" || slices.Contains(s.notes, text) {
		return
	}
	s.notes = append(s.notes, text)
	s.update(Update{Kind: "note", Attempt: len(s.rollouts), Message: text})
}

// logprobsNote says once that the server sent no log-probabilities although the request (or
// the policy) asked for them, and how the policy does without.
func (s *search) logprobsNote(r *rollout) {
	r.mu.Lock()
	pieces, withLP := r.pieces, r.logprobs
	r.mu.Unlock()
	if r.params.Logprobs <= 0 || pieces == 0 || withLP > 0 {
		return
	}
	how := "it works without them"
	if w, ok := s.policy.(LogprobsWanter); ok {
		if _, fb := w.WantsLogprobs(); fb != "" {
			how = "the policy falls back to " + fb
		}
	}
	s.note("the model server sent no log-probabilities (logprobs): " + how)
}

// fail hangs a fail node (a rollout ended without a checker verdict) below r's head and asks the
// policy what to do.
func (s *search) fail(r *rollout, outcome, why string) {
	text := r.textUpTo(r.head.Off)
	n := s.t.add(r.head, &Node{Kind: NodeFail, Off: r.head.Off, Line: lineOf(text, len(text)), Cat: outcome,
		Diag: why, Rollout: r.id, Text: text})
	r.head = n
	r.errs = append(r.errs, checkers.Event{Kind: checkers.KindCrash, Off: n.Off, Line: n.Line, Cat: outcome, Diag: why})
	s.stopRollout(r, outcome)
	s.onNode(n, r)
}

// event handles one checker event of r.
func (s *search) event(r *rollout, ev checkers.Event) {
	if ev.Kind == checkers.KindChkpt {
		r.chkptAt = max(r.chkptAt, ev.Off)
		s.checkpoint(r, ev)
		s.maybeProbe(r) // a probe may wait for this checkpoint
		return
	}
	if !r.live {
		return
	}
	switch ev.Kind {
	case checkers.KindProgress:
		s.progress(r, ev)
	case checkers.KindError:
		s.checkError(r, ev)
	case checkers.KindDone:
		if !ev.OK && !s.acceptsDespiteErrors(r) {
			s.fail(r, "rejected", "the checker rejected the text without reporting an error")
			return
		}
		text, genEnd := r.snapshot()
		n := s.t.add(r.head, &Node{Kind: NodeDone, Off: len(text), Line: lineOf(text, len(text)), Rollout: r.id, Text: text})
		r.head = n
		s.stopRollout(r, "accepted")
		s.accepted = r
		s.update(Update{Kind: "accepted", Attempt: r.id + 1, Accepted: s.generated(text[:genEnd]), Message: "accepted"})
		s.onNode(n, r)
		s.end("accepted", nil)
	case checkers.KindCrash:
		s.checkerCrash(r, ev)
	}
}

// CatCheckerCrash is the category of the error node made for a checker crash.
const CatCheckerCrash = "checker_crash"

// checkerCrash turns a crash of r's checker session into an error node, so that the policy
// gets it as feedback ("checker crashed at line N: …") and treats it like any error (rolls back
// before the line, escalates when it repeats) instead of retrying the same text blindly. The
// session checks chunks in order and reports progress for each until an error, so the crash
// happened in the chunk that starts where r's last progress ended: its line is the one after
// r's head.
func (s *search) checkerCrash(r *rollout, ev checkers.Event) {
	off := r.head.Off
	line := lineOf(r.textUpTo(off), off)
	why := strings.TrimPrefix(ev.Diag, "checker crashed: ")
	s.checkError(r, checkers.Event{Kind: checkers.KindError, Off: off, Line: line, Col: 1, Cat: CatCheckerCrash,
		Diag: fmt.Sprintf("checker crashed at line %d: %s", line, why)})
}

// progress hangs a progress node below r's head.
func (s *search) progress(r *rollout, ev checkers.Event) {
	if ev.Off >= s.t.prefixLen {
		s.rootConfirmed = true
	}
	if ev.Off > s.t.prefixLen {
		s.checkedGenerated()
	}
	_, genEnd := r.snapshot()
	if ev.Off <= r.head.Off || ev.Off > genEnd {
		return // re-checked text before the start node, or the suffix
	}
	text := r.textUpTo(ev.Off)
	n := s.t.add(r.head, &Node{Kind: NodeProgress, Off: ev.Off, Line: lineOf(text, ev.Off), Cat: ev.Cat,
		Depth: s.depthAt(r, text), Rollout: r.id, Text: text})
	r.head = n
	if cp, ok := r.pending[ev.Off]; ok {
		delete(r.pending, ev.Off)
		if !s.t.attach(n, cp) {
			cp.Release()
		}
	}
	s.update(Update{Kind: "accepted", Attempt: r.id + 1, Accepted: s.generated(text)})
	s.onNode(n, r)
}

// depthAt is the brace depth at the end of text, r's checked text up to a progress event: as
// r's chunker recorded it for the chunk ending there, else (post-hoc mode submits no chunks of
// its own) lexed by the language's Syntax.
func (s *search) depthAt(r *rollout, text string) int {
	r.mu.Lock()
	d, ok := r.depths[len(text)]
	r.mu.Unlock()
	if ok {
		return d
	}
	return s.syntax.BraceDepth(text)
}

// checkedGenerated records Stats.TimeToFirstCheck at the checker's first verdict (progress or
// error) on a generated line; the prompt's own lines do not count.
func (s *search) checkedGenerated() {
	if !s.firstCheck {
		s.firstCheck = true
		s.stats.TimeToFirstCheck = time.Since(s.start)
	}
}

// checkpoint adopts the checkpoint of a chkpt event and hangs it where it belongs: on r's
// node at its offset, as a spare when it lies inside the prefix, or pending until the
// progress event for its offset comes.
func (s *search) checkpoint(r *rollout, ev checkers.Event) {
	cp := s.ck.Adopt(ev.ID)
	if cp == nil {
		return
	}
	defer s.keepProcessBudget()
	if r.live {
		for x := r.head; x != nil; x = x.Parent {
			if x.Off == cp.Off() && (x.Kind == NodeProgress || x.Kind == NodeRoot) {
				if s.t.attach(x, cp) {
					return
				}
				break
			}
			if x.Off < cp.Off() {
				break
			}
		}
		_, genEnd := r.snapshot()
		switch {
		case cp.Off() <= s.t.prefixLen && strings.HasPrefix(s.req.Prefix, cp.Text()):
			s.t.spare(cp)
			return
		case cp.Off() > r.head.Off && cp.Off() <= genEnd:
			if old, ok := r.pending[cp.Off()]; ok {
				old.Release()
			}
			r.pending[cp.Off()] = cp
			return
		}
	}
	cp.Release()
}

// keepProcessBudget releases checkpoints while the checker processes the search holds (live
// sessions and checkpoints) exceed Budget.MaxProcesses.
func (s *search) keepProcessBudget() {
	for len(s.live)+s.t.held > s.budget.MaxProcesses && s.t.evictOne() {
	}
}

// checkError hangs an error node at its offset (truncating progress it invalidates), ends the
// rollout and asks the policy for a repair.
func (s *search) checkError(r *rollout, ev checkers.Event) {
	if s.excused(r, ev) {
		return // it was in the document before: not the model's (baseline.go)
	}
	off := ev.Off
	if off < s.t.prefixLen {
		// Reported in the prefix before the prefix was accepted, or again after a repair: the
		// prefix's own error only when the document without the generated text has it too.
		// Otherwise it is the generated text's (an `#if`, `extern "C" {`, namespace or class
		// that the suffix closes is left open without it; a template instantiated from
		// it; a declaration it conflicts with), and it is repaired like any other.
		if (!s.rootConfirmed || s.clampedDiag[ev.Diag]) && s.documentHas(ev) {
			// The document before the insertion point does not compile: nothing generated
			// can fix that.
			s.prefixError(r, ev)
			return
		}
		s.clampedDiag[ev.Diag] = true
		off = s.t.prefixLen
	}
	s.checkedGenerated()
	text := r.textUpTo(off)
	e := &Node{Kind: NodeError, Off: off, Line: ev.Line, Col: ev.Col, Cat: ev.Cat, Diag: ev.Diag, Notes: ev.Notes, Rollout: r.id, Text: text}
	if e.Line == 0 {
		e.Line = lineOf(text, off)
	}
	onOthers := s.livePaths(r)
	if s.t.hangError(r.head, e, func(x *Node) bool { return onOthers[x] }) == nil {
		s.t.add(s.t.root, e)
	}
	r.head = e
	r.errs = append(r.errs, ev)
	s.errNodes = append(s.errNodes, e)
	s.stopRollout(r, "error")
	evc := ev
	s.update(Update{Kind: "error", Attempt: r.id + 1, Error: &evc,
		Message: fmt.Sprintf("attempt %d: line %d: %s", r.id+1, e.Line, oneLine(ev.Diag))})
	s.onNode(e, r)
}

// prefixError ends the search on ev, an error in the document before the insertion point that
// nothing generated can fix.
func (s *search) prefixError(r *rollout, ev checkers.Event) {
	s.prefixErr = &ev
	r.errs = append(r.errs, ev)
	s.stopRollout(r, "prefix_error")
	s.end("prefix_error", nil)
}

// livePaths returns the nodes on the paths of live rollouts other than r (from their heads to
// the root), which invalidation must keep.
func (s *search) livePaths(r *rollout) map[*Node]bool {
	keep := map[*Node]bool{}
	for _, o := range s.live {
		if o == r {
			continue
		}
		for x := o.head; x != nil && !keep[x]; x = x.Parent {
			keep[x] = true
		}
	}
	return keep
}

// onNode asks the policy about n and carries out its actions.
func (s *search) onNode(n *Node, r *rollout) {
	st := s.state(r)
	acts := s.policy.OnNode(n, st)
	if n.Kind == NodeDone {
		return
	}
	s.handling = n
	defer func() { s.handling = nil }()
	for _, a := range acts {
		if s.ended {
			return
		}
		switch a := a.(type) {
		case Spawn:
			s.spawn(a)
		case *Spawn:
			s.spawn(*a)
		case Kill:
			s.kill(a.Rollout)
		case *Kill:
			s.kill(a.Rollout)
		case Prune:
			s.pruneNode(a.Node)
		case *Prune:
			s.pruneNode(a.Node)
		}
	}
}

func (s *search) kill(id int) {
	if r, ok := s.live[id]; ok {
		s.stopRollout(r, "killed")
	}
}

// pruneNode prunes n's subtree and kills the live rollouts that grew inside it.
func (s *search) pruneNode(n *Node) {
	if n == nil || n == s.t.root {
		return
	}
	for _, r := range s.live {
		if isAncestor(n, r.head) {
			s.stopRollout(r, "pruned")
		}
	}
	s.t.prune(n)
}

// state builds the read-only State a policy sees for a node of r.
func (s *search) state(r *rollout) *State {
	cfg := StateConfig{Root: s.t.root, PrefixLen: s.t.prefixLen, Model: s.req.Model, Errors: append([]*Node(nil), s.errNodes...),
		Attempts: len(s.rollouts), Tokens: int(s.tokens.Load()), Budget: s.budget, Rand: s.rng}
	for _, x := range s.rollouts {
		v := x.view()
		cfg.Rollouts = append(cfg.Rollouts, v)
		if x.live {
			cfg.Active = append(cfg.Active, v)
		}
		if x == r {
			cfg.Current = v
		}
	}
	return NewState(cfg)
}

// update reports progress to the request's OnUpdate.
func (s *search) update(u Update) {
	if s.req.OnUpdate != nil {
		s.req.OnUpdate(u)
	}
}

// maxStreamPoints bounds the stream points a rollout's trace keeps.
const maxStreamPoints = 200

// thin keeps at most n of pts, evenly spaced, the last one always.
func thin(pts []TracePoint, n int) []TracePoint {
	if len(pts) <= n {
		return append([]TracePoint(nil), pts...)
	}
	out := make([]TracePoint, 0, n)
	for i := range n {
		out = append(out, pts[(i+1)*len(pts)/n-1])
	}
	return out
}

// result builds the Result once every rollout goroutine is gone.
func (s *search) result() *Result {
	res := &Result{Reason: s.reason}
	st := s.stats
	st.Attempts = len(s.rollouts)
	st.Wall = time.Since(s.start)
	st.ModelWaitOnChecker = time.Duration(s.modelWait.Load())
	tr := &Trace{}
	for _, r := range s.rollouts {
		r.mu.Lock()
		out := r.usage.CompletionTokens
		if out == 0 {
			out = r.pieces
		}
		st.OutputTokens += out
		st.PromptTokens += r.usage.PromptTokens
		if r.usage.PromptEstimated {
			st.PromptTokensEstimated += r.usage.PromptTokens
		}
		st.CachedPromptTokens += r.usage.CachedTokens
		finish := r.finish
		stream := thin(r.stream, maxStreamPoints)
		r.mu.Unlock()
		outcome := r.outcome
		if outcome == "" {
			outcome = "killed"
		}
		tr.Rollouts = append(tr.Rollouts, TraceRollout{ID: r.id, Start: r.start.ID, Feedback: r.feedback, Tokens: out,
			Outcome: outcome, FinishReason: finish, StartMS: ms(r.spawned), Stream: stream})
	}
	if st.PromptTokensEstimated > 0 {
		s.notes = append(s.notes, fmt.Sprintf("%d of the %d prompt tokens are estimated (rollouts stopped before the server reported usage)",
			st.PromptTokensEstimated, st.PromptTokens))
	}
	res.Notes = s.notes
	tr.Notes = s.notes
	res.Baseline = s.baselineResult()
	if st.RollbackLines == nil {
		st.RollbackLines = []int{}
	}
	res.Stats = st
	tr.Nodes = s.t.trace()
	res.Trace = tr
	if s.accepted != nil {
		text, genEnd := s.accepted.snapshot()
		res.OK = true
		res.Text = s.generated(text[:genEnd])
		return res
	}
	if s.prefixErr != nil {
		res.Diagnostics = []checkers.Event{*s.prefixErr}
	}
	if best := s.best(); best != nil {
		text, genEnd := best.snapshot()
		res.Text = s.generated(text[:genEnd])
		if res.Diagnostics == nil {
			res.Diagnostics = best.errs
		}
	}
	return res
}

// best picks the best attempt of a failed search: the rollout whose checked progress reached
// furthest (the later one on ties).
func (s *search) best() *rollout {
	var best *rollout
	bestOff := -1
	for _, r := range s.rollouts {
		off := -1
		for x := r.head; x != nil; x = x.Parent {
			if !x.Pruned && (x.Kind == NodeProgress || x.Kind == NodeRoot) {
				off = x.Off
				break
			}
		}
		if off >= bestOff {
			best, bestOff = r, off
		}
	}
	return best
}

// rollbackPhrase says how far a rollback went, for progress messages.
func rollbackPhrase(lines int) string {
	switch lines {
	case 0:
		return "retrying the failing line"
	case 1:
		return "rolled back 1 line"
	}
	return fmt.Sprintf("rolled back %d lines", lines)
}
