package typescript

import (
	"fmt"
	"sync"

	"github.com/hydra-lsp/hydra/checkers"
)

// Session is one checker session: a text that grows chunk by chunk, checked by the Checker's
// compiler after each chunk, in the session's own goroutine (Submit never waits for it).
type Session struct {
	c      *Checker
	srv    *server
	id     int64
	parent int64
	opts   checkers.SessionOptions
	events chan checkers.Event
	quit   chan struct{}

	mu       sync.Mutex
	text     string // everything given so far, prefix included
	queue    []item
	wake     chan struct{} // signalled when queue grows
	ended    bool          // EOS given or closed: no more input
	closed   bool
	prefixAt int // length of the prefix resumed from
	// unitStart of the resumed checkpoint (where the top-level unit being written begins).
	unitStart int
}

// item is one submitted chunk, or the end of input.
type item struct {
	text string
	opts checkers.SubmitOptions
	eos  bool
}

func newSession(c *Checker, srv *server, id int64, opts checkers.SessionOptions, from *Checkpoint) *Session {
	s := &Session{c: c, srv: srv, id: id, opts: opts,
		events: make(chan checkers.Event, 64), quit: make(chan struct{}), wake: make(chan struct{}, 1)}
	if from != nil {
		s.parent, s.text, s.prefixAt, s.unitStart = from.id, from.text, len(from.text), from.unitStart
	}
	return s
}

// ID identifies the session.
func (s *Session) ID() int64 { return s.id }

// Events delivers the session's events in order; closed after done or crash (or Close).
func (s *Session) Events() <-chan checkers.Event { return s.events }

// Text returns the prefix and everything submitted so far.
func (s *Session) Text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text
}

// Submit queues the next chunk; it never waits for the check.
func (s *Session) Submit(text string, opts checkers.SubmitOptions) error {
	return s.enqueue(item{text: text, opts: opts})
}

// EOS marks the end of input: the whole text is then checked as tsc would and done follows.
func (s *Session) EOS() error { return s.enqueue(item{eos: true}) }

func (s *Session) enqueue(it item) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return fmt.Errorf("typescript session %d: %w", s.id, checkers.ErrClosed)
	}
	if it.eos {
		s.ended = true
	} else {
		s.text += it.text
	}
	s.queue = append(s.queue, it)
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return nil
}

// Close ends the session at once; its event channel closes. Safe to call more than once.
func (s *Session) Close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		s.ended = true
		close(s.quit)
	}
	s.mu.Unlock()
	return nil
}

// next waits for the next queued item; ok is false once the session is closed.
func (s *Session) next() (item, bool) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return item{}, false
		}
		if len(s.queue) > 0 {
			it := s.queue[0]
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return it, true
		}
		s.mu.Unlock()
		select {
		case <-s.wake:
		case <-s.quit:
		}
	}
}

// emit delivers an event unless the session is closed first.
func (s *Session) emit(ev checkers.Event) bool {
	select {
	case s.events <- ev:
		return true
	case <-s.quit:
		return false
	}
}

// run checks the chunks as they come and reports.
func (s *Session) run() {
	defer close(s.events)
	defer s.c.forget(s)
	defer s.srv.use(s.opts.Filename)()
	text := s.Text()[:s.prefixAt]
	if !s.emit(checkers.Event{Kind: checkers.KindInit, ID: s.id, Parent: s.parent, Off: len(text), PID: s.srv.pid()}) {
		return
	}
	st := runState{unitStart: s.unitStart, reported: map[[2]int]bool{}}
	for {
		it, ok := s.next()
		if !ok {
			return
		}
		if it.eos {
			s.finish(&st, text)
			return
		}
		text += it.text
		if st.errored && !it.opts.KeepGoing {
			continue // after an error the session reads on and ends with done {ok:false}
		}
		j, alive := s.step(&st, text, false)
		if !alive {
			return
		}
		if st.errored && !it.opts.KeepGoing {
			continue
		}
		cat := it.opts.Cat
		if cat == "" {
			cat = checkers.BoundaryLine
			if j.complete {
				cat = checkers.BoundaryDecl
			}
		}
		if j.complete {
			st.unitStart = len(text)
		}
		if !s.emit(checkers.Event{Kind: checkers.KindProgress, Off: len(text), Cat: cat}) {
			return
		}
		if it.opts.Checkpoint {
			cp := s.c.newCheckpoint(s.opts, text)
			cp.unitStart = st.unitStart
			if !s.emit(checkers.Event{Kind: checkers.KindChkpt, ID: cp.id, Parent: s.id, Off: len(text), PID: s.srv.pid()}) {
				cp.Release()
				return
			}
		}
	}
}

// runState is what a session's goroutine keeps between chunks.
type runState struct {
	unitStart int
	errored   bool
	checked   bool            // the project's options have been looked at
	reported  map[[2]int]bool // errors reported (start, code)
}

// fatal reports the project's own errors (a tsconfig.json tsc -p would reject, options that do
// not go together) once, as a fatal error that ends the session; it says whether it did.
func (st *runState) fatal(s *Session, res result, text string) bool {
	if st.checked {
		return false
	}
	st.checked = true
	for _, d := range append(res.configDiags, res.program...) {
		if d.Category != categoryError {
			continue
		}
		msg := res.config + ": " + d.Text
		if s.emit(checkers.Event{Kind: checkers.KindError, Off: 0, Line: 1, Col: 1, Cat: checkers.CatFatal, Diag: msg,
			Meta: map[string]any{"code": d.Code}}) {
			s.emit(checkers.Event{Kind: checkers.KindDone, OK: false})
		}
		s.mu.Lock()
		s.ended = true
		s.mu.Unlock()
		return true
	}
	return false
}

// report sends an error event for f unless it was reported already.
func (s *Session) report(st *runState, text string, f finding) bool {
	key := [2]int{f.start, f.code}
	if st.reported[key] {
		return true
	}
	st.reported[key] = true
	st.errored = true
	line, col := lineCol(text, f.start)
	return s.emit(checkers.Event{Kind: checkers.KindError, Off: f.start, Line: line, Col: col, Cat: category(f),
		Diag: f.msg, Meta: map[string]any{"code": f.code}})
}

// step checks text (at the end of input when final), reports its first real error (at the end
// of input: every error, as tsc reports them, each once) and says whether the session goes on
// (false: it crashed, ended on a fatal error or was closed).
func (s *Session) step(st *runState, text string, final bool) (judgement, bool) {
	res, err := s.srv.check(s.opts.Filename, text)
	if err != nil {
		s.emit(checkers.Event{Kind: checkers.KindCrash, Diag: err.Error()})
		return judgement{}, false
	}
	if st.fatal(s, res, text) {
		return judgement{}, false
	}
	syn, sem := place(text, res.syntactic, true), place(text, res.semantic, false)
	j := judge(text, syn, sem, st.unitStart, final)
	if j.real != nil && !s.report(st, text, *j.real) {
		return j, false
	}
	if final {
		// tsc reports every syntax error, or when there is none every semantic error: so do we
		// (the errors that were in a document before generation are matched against these,
		// engine/baseline.go). The first is reported above.
		all := sem
		if len(syn) > 0 {
			all = syn
		}
		for _, f := range all {
			if !s.report(st, text, f) {
				return j, false
			}
		}
	}
	return j, true
}

// finish checks the whole text as tsc would at the end of input and sends done.
func (s *Session) finish(st *runState, text string) {
	if _, alive := s.step(st, text, true); alive {
		s.emit(checkers.Event{Kind: checkers.KindDone, OK: !st.errored})
	}
}
