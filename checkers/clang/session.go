package clang

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
)

// Session is one active shim process checking one text. It implements checkers.Session.
type Session struct {
	c      *Checker
	id     int64
	parent int64 // checkpoint resumed from, or 0
	res    resolved
	conn   *fdConn
	events chan checkers.Event
	notify chan struct{} // a queued event or the end is waiting for the deliverer
	stop   chan struct{} // closed by Close: the deliverer and watchdog quit
	// delivered is closed when the deliverer returns (if run started it).
	delivered chan struct{}
	term      chan struct{} // closed once the terminal event is queued
	cancel    func() bool   // stops the context watcher; set and read under mu

	// cmd, exited and exitErr are set for a root session (a child of this process).
	cmd     *exec.Cmd
	exited  chan struct{}
	exitErr error
	// proc is a resumed session's pidfd, from its init event (nil before).
	proc *pidFD

	// wmu serialises writes to conn so that the shim receives chunks in the order text grows.
	wmu sync.Mutex

	// mu guards the fields below.
	mu      sync.Mutex
	text    []byte // start prefix + everything submitted
	pid     int
	gotInit bool
	errored bool // an error event was seen: no more progress will come (unless keepGoing)
	// keepGoing: a chunk was submitted with SubmitOptions.KeepGoing, so progress still comes
	// after an error.
	keepGoing bool
	eos       bool  // EOS was sent
	finished  bool  // the terminal event (done or crash) is queued, or the session was closed
	closed    bool  // Close was called
	pending   []int // ends of submitted chunks still awaiting progress
	virtual   []virtualChkpt
	since     time.Time // start of the current wait for an answer
	queue     []checkers.Event
	// eventsClosed is set when the deliverer has closed events: nothing may be sent any more.
	eventsClosed bool
	delivering   bool // run started the deliverer
}

// virtualChkpt is a checkpoint request served by an existing checkpoint of the same prefix: its
// chkpt event is sent when the session's progress reaches off.
type virtualChkpt struct {
	off int
	cp  *Checkpoint
}

var _ checkers.Session = (*Session)(nil)

func newSession(c *Checker, id, parent int64, res resolved, conn *fdConn, prefix []byte) *Session {
	return &Session{
		c:      c,
		id:     id,
		parent: parent,
		res:    res,
		conn:   conn,
		events: make(chan checkers.Event, 64),
		notify: make(chan struct{}, 1),
		stop:   make(chan struct{}),
		term:   make(chan struct{}),
		text:   prefix,
		since:  time.Now(),

		delivered: make(chan struct{}),
	}
}

// run starts the session's goroutines: reader, deliverer, watchdog and context watcher.
func (s *Session) run(ctx context.Context) {
	// With ctx already cancelled the watcher runs at once, in its own goroutine, and may reach
	// fail before AfterFunc returns: s.cancel is set and read under s.mu.
	stop := context.AfterFunc(ctx, func() {
		s.fail("checker session cancelled: " + context.Cause(ctx).Error())
		s.kill()
	})
	s.mu.Lock()
	s.cancel = stop
	s.delivering = true
	s.mu.Unlock()
	go s.readLoop()
	go s.deliver()
	if t := s.c.sessionTimeout(); t > 0 {
		go s.watch(t)
	}
}

// ID identifies the session in events.
func (s *Session) ID() int64 { return s.id }

// Parent is the checkpoint the session was resumed from, or 0.
func (s *Session) Parent() int64 { return s.parent }

// PID is the shim process behind the session (0 until known for a resumed session).
func (s *Session) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pid
}

// Events delivers the session's events in order; it is closed after done or crash (or Close).
func (s *Session) Events() <-chan checkers.Event { return s.events }

// Text returns the start prefix and everything submitted so far.
func (s *Session) Text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.text)
}

// submitHeader is the JSON line before a chunk's raw bytes (raw, so that any bytes, valid
// UTF-8 or not, reach Clang unchanged).
type submitHeader struct {
	Op    string `json:"op"`
	Len   int    `json:"len"`
	Cat   string `json:"cat,omitempty"`
	Chkpt int64  `json:"chkpt,omitempty"`
	// KeepGoing asks for progress (and the checkpoint) after an error too.
	KeepGoing bool `json:"keep_going,omitempty"`
}

// Submit sends the next chunk. It returns once the channel has taken the bytes, never waiting
// for the check itself.
func (s *Session) Submit(text string, opts checkers.SubmitOptions) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	if err := s.startInputLocked("submit to"); err != nil {
		s.mu.Unlock()
		return err
	}
	s.text = append(s.text, text...)
	end := len(s.text)
	s.pending = append(s.pending, end)
	var chk int64
	if opts.Checkpoint {
		if cp := s.c.lookupShared(s.res.key, s.text); cp != nil {
			s.virtual = append(s.virtual, virtualChkpt{off: end, cp: cp})
		} else {
			chk = s.c.nextID.Add(1)
		}
	}
	s.mu.Unlock()

	if opts.KeepGoing {
		s.mu.Lock()
		s.keepGoing = true
		s.mu.Unlock()
	}
	hdr, err := s.submitLine(submitHeader{Op: "submit", Len: len(text), Cat: opts.Cat, Chkpt: chk, KeepGoing: opts.KeepGoing})
	if err != nil {
		return fmt.Errorf("submit to clang session %d: %w", s.id, err)
	}
	if _, err := s.conn.writev(hdr, []byte(text)); err != nil {
		return fmt.Errorf("submit to clang session %d: %w", s.id, s.writeErr(err))
	}
	return nil
}

// startInputLocked checks that the session can take more input (what names the operation in
// the error) and, when no answer was due yet, starts the silence timer that Options.Timeout
// bounds. s.mu must be held.
func (s *Session) startInputLocked(what string) error {
	if err := s.usableLocked(what); err != nil {
		return err
	}
	if !s.waitingLocked() {
		s.since = time.Now()
	}
	return nil
}

// EOS marks the end of input; the session then finishes the translation unit and sends done.
func (s *Session) EOS() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	if err := s.startInputLocked("end input of"); err != nil {
		s.mu.Unlock()
		return err
	}
	s.eos = true
	s.mu.Unlock()
	if _, err := s.conn.Write([]byte(`{"op":"eos"}` + "\n")); err != nil {
		return fmt.Errorf("end input of clang session %d: %w", s.id, s.writeErr(err))
	}
	return nil
}

func (s *Session) usableLocked(what string) error {
	switch {
	case s.closed:
		return fmt.Errorf("%s clang session %d: %w", what, s.id, checkers.ErrClosed)
	case s.finished:
		return fmt.Errorf("%s clang session %d: session already ended: %w", what, s.id, checkers.ErrClosed)
	case s.eos:
		return fmt.Errorf("%s clang session %d: input already ended (EOS)", what, s.id)
	}
	return nil
}

func (s *Session) writeErr(err error) error {
	s.mu.Lock()
	ended := s.finished
	s.mu.Unlock()
	if ended {
		return fmt.Errorf("session ended: %w", checkers.ErrClosed)
	}
	return err
}

// Close ends the session and its process at once. It is safe to call more than once.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	alive := !s.finished
	s.finished = true
	virtual := s.virtual
	s.virtual = nil
	s.mu.Unlock()
	close(s.stop)
	s.conn.Close()
	if alive {
		s.kill()
		s.waitExit(closeExitWait)
	}
	for _, v := range virtual {
		v.cp.Release()
	}
	s.releaseUnread()
	s.stopWatcher()
	s.mu.Lock()
	proc := s.proc
	s.mu.Unlock()
	proc.close()
	return nil
}

// releaseUnread releases the checkpoints of the chkpt events that nobody will read now: each
// carried a reference for the consumer (checkers.Session.Events), and without this the
// checkpoint's process would live until the checker closes. It runs once the deliverer has
// returned, so that no event is both handed to a consumer and released here; a consumer that
// reads the channel at the same time takes some of them, and releases those as usual.
func (s *Session) releaseUnread() {
	s.mu.Lock()
	delivering := s.delivering
	s.mu.Unlock()
	if delivering {
		<-s.delivered
	}
	s.mu.Lock()
	unread := s.queue
	s.queue = nil
	s.mu.Unlock()
drain:
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				break drain
			}
			unread = append(unread, ev)
		default:
			break drain
		}
	}
	for _, ev := range unread {
		if ev.Kind != checkers.KindChkpt {
			continue
		}
		if cp := s.c.AdoptCheckpoint(ev.ID); cp != nil {
			cp.Release()
		}
	}
}

// kill ends the session's process at once: a root session through os.Process (a pidfd on
// Linux), a resumed one through the pidfd it sent with its init. A resumed session that has
// not sent its init yet has no identity to signal; it ends when its channel hangs up (its
// watchdog) or with the driver (lifeline).
func (s *Session) kill() {
	if s.cmd != nil {
		_ = s.cmd.Process.Kill()
		return
	}
	s.mu.Lock()
	proc := s.proc
	s.mu.Unlock()
	proc.kill()
}

// closeExitWait bounds how long Close waits for a killed process to be gone. SIGKILL ends a
// process within milliseconds (tearing down its memory); waiting for it means that a caller
// which limits how many sessions run at once (the LSP's warm builds) counts processes, not
// Session values.
const closeExitWait = 2 * time.Second

// waitExit waits up to timeout for the session's process to exit: a root session until its
// Wait returns, a resumed one until its pidfd is readable.
func (s *Session) waitExit(timeout time.Duration) {
	if s.exited != nil {
		select {
		case <-s.exited:
		case <-time.After(timeout):
		}
		return
	}
	s.mu.Lock()
	proc := s.proc
	s.mu.Unlock()
	proc.waitExit(timeout)
}

// waitingLocked reports whether an answer from the shim is due.
func (s *Session) waitingLocked() bool {
	return !s.gotInit || (s.eos && !s.finished) || ((!s.errored || s.keepGoing) && len(s.pending) > 0)
}

// pushLocked hands an event to the consumer: straight into the Events channel when nothing is
// queued before it and the channel has room (the common, low-latency path), else onto the
// unbounded queue that the deliverer drains in order. The deliverer pops an event only after
// sending it, so a non-empty queue always means "something is still ahead of you".
func (s *Session) pushLocked(ev checkers.Event) {
	if s.eventsClosed {
		return
	}
	if len(s.queue) == 0 {
		select {
		case s.events <- ev:
			return
		default:
		}
	}
	s.queue = append(s.queue, ev)
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// endLocked queues the terminal event (if any) and releases what the session still holds.
func (s *Session) endLocked(ev *checkers.Event) []virtualChkpt {
	if ev != nil {
		s.pushLocked(*ev)
	}
	s.finished = true
	close(s.term)
	select { // wake the deliverer: it closes Events once its queue is empty
	case s.notify <- struct{}{}:
	default:
	}
	virtual := s.virtual
	s.virtual = nil
	return virtual
}

// fail ends the session with a crash event saying why, unless it has already ended.
func (s *Session) fail(why string) {
	s.mu.Lock()
	if s.finished {
		s.mu.Unlock()
		return
	}
	virtual := s.endLocked(&checkers.Event{Kind: checkers.KindCrash, ID: s.id, Off: len(s.text), Diag: why, PID: s.pid})
	s.mu.Unlock()
	for _, v := range virtual {
		v.cp.Release()
	}
	s.conn.Close()
	s.stopWatcher()
}

// stopWatcher stops the context watcher that run started, if it did. Call it without s.mu.
func (s *Session) stopWatcher() {
	s.mu.Lock()
	stop := s.cancel
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// readLoop turns the shim's event lines into events until done, crash or EOF.
func (s *Session) readLoop() {
	r := bufio.NewReaderSize(s.conn, 32<<10)
	for {
		line, err := r.ReadBytes('\n')
		if err == nil {
			var ev checkers.Event
			if jerr := s.c.decodeEvent(line, &ev); jerr != nil {
				s.fail(fmt.Sprintf("checker protocol error: %v in %.200q", jerr, line))
				s.kill()
				return
			}
			s.conn.settleSpin(&ev)
			if s.handle(ev) {
				return
			}
			continue
		}
		s.fail(s.deathReason(err))
		return
	}
}

// deathReason explains an unexpected end of the channel.
func (s *Session) deathReason(err error) string {
	s.mu.Lock()
	pid := s.pid
	s.mu.Unlock()
	if s.exited != nil {
		select {
		case <-s.exited:
			if s.exitErr != nil {
				return fmt.Sprintf("checker process %d died without finishing: %v%s", pid, s.exitErr, s.c.startFailure(s.exitErr))
			}
			return fmt.Sprintf("checker process %d exited without finishing", pid)
		case <-time.After(2 * time.Second):
		}
	}
	if errors.Is(err, io.EOF) {
		return fmt.Sprintf("checker process %d ended without finishing (channel closed)", pid)
	}
	return fmt.Sprintf("checker process %d: channel: %v", pid, err)
}

// handle processes one event from the shim; true when it was the last.
func (s *Session) handle(ev checkers.Event) bool {
	s.mu.Lock()
	s.since = time.Now()
	switch ev.Kind {
	case checkers.KindInit:
		s.gotInit = true
		if ev.PID > 0 {
			s.pid = ev.PID
		}
		if s.parent != 0 && s.proc == nil {
			fds, err := s.conn.take(1)
			if err != nil {
				s.mu.Unlock()
				s.fail(err.Error())
				return true
			}
			s.proc = newPidFD(fds[0])
		}
		ev.ID, ev.Parent = s.id, s.parent
		s.pushLocked(ev)
		if ev.Meta != nil {
			s.mu.Unlock()
			s.c.droppedFlags(ev.Meta) // not under s.mu: the callback is the caller's
			return false
		}
	case checkers.KindProgress:
		i := 0
		for i < len(s.pending) && s.pending[i] <= ev.Off {
			i++
		}
		s.pending = s.pending[i:]
		s.pushLocked(ev)
		var stale []virtualChkpt
		keep := s.virtual[:0]
		for _, v := range s.virtual {
			switch {
			case v.off == ev.Off:
				s.pushLocked(checkers.Event{Kind: checkers.KindChkpt, ID: v.cp.id, Parent: s.id, Off: v.off,
					PID: v.cp.pid, Meta: map[string]any{"shared": true}})
			case v.off < ev.Off:
				stale = append(stale, v)
			default:
				keep = append(keep, v)
			}
		}
		s.virtual = keep
		s.mu.Unlock()
		for _, v := range stale {
			v.cp.Release()
		}
		return false
	case checkers.KindError:
		s.errored = true
		s.pushLocked(ev)
	case checkers.KindChkpt:
		if ev.Off < 0 || ev.Off > len(s.text) {
			s.mu.Unlock()
			s.fail(fmt.Sprintf("checker protocol error: checkpoint at %d beyond the text (%d bytes)", ev.Off, len(s.text)))
			s.kill()
			return true
		}
		prefix := s.text[:ev.Off]
		s.mu.Unlock()
		fds, err := s.conn.take(2)
		if err != nil {
			s.fail(err.Error())
			s.kill()
			return true
		}
		s.c.adoptChkpt(s, &ev, prefix, fds)
		s.mu.Lock()
		if s.finished {
			// Closed meanwhile: nobody will adopt it.
			s.mu.Unlock()
			if cp := s.c.AdoptCheckpoint(ev.ID); cp != nil {
				cp.Release()
			}
			return false
		}
		s.pushLocked(ev)
	case checkers.KindDone, checkers.KindCrash:
		if s.finished {
			s.mu.Unlock()
			return true
		}
		if ev.Kind == checkers.KindCrash && ev.Diag == "" {
			ev.Diag = "checker crashed"
		}
		if ev.Kind == checkers.KindCrash {
			ev.PID = s.pid
		}
		virtual := s.endLocked(&ev)
		s.mu.Unlock()
		for _, v := range virtual {
			v.cp.Release()
		}
		s.conn.Close()
		s.stopWatcher()
		return true
	}
	s.mu.Unlock()
	return false
}

// deliver moves queued events to the Events channel, closing it after the last one.
func (s *Session) deliver() {
	defer close(s.delivered)
	defer s.c.unregister(s)
	defer func() {
		s.mu.Lock()
		s.eventsClosed = true
		close(s.events)
		s.mu.Unlock()
	}()
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			fin := s.finished
			s.mu.Unlock()
			if fin {
				return
			}
			select {
			case <-s.notify:
			case <-s.stop:
				return
			}
			continue
		}
		ev := s.queue[0]
		s.mu.Unlock()
		select {
		case s.events <- ev:
		case <-s.stop:
			return
		}
		s.mu.Lock()
		s.queue[0] = checkers.Event{}
		s.queue = s.queue[1:]
		s.mu.Unlock()
	}
}

// minInitTimeout is the least time a session's init may take, whatever the per-answer limit:
// starting a checker (loading Clang's libraries, the driver's pass over the flags) takes seconds
// on a loaded machine, and the limit a user sets (--timeout, checkTimeout) is for checking text.
const minInitTimeout = 30 * time.Second

// watch ends the session when an answer is overdue.
func (s *Session) watch(timeout time.Duration) {
	tick := time.NewTicker(min(timeout/4, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-s.term:
			return
		case <-tick.C:
			s.mu.Lock()
			limit := timeout
			if !s.gotInit {
				limit = max(timeout, minInitTimeout)
			}
			late := s.waitingLocked() && time.Since(s.since) > limit
			s.mu.Unlock()
			if late {
				s.fail(fmt.Sprintf("checker timed out: no answer for %v", limit))
				s.kill()
				return
			}
		}
	}
}
