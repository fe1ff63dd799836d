package clang

import (
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
)

// Checkpoint is a dormant shim process holding the Clang state after a prefix of text. It is
// shared by every session that reaches the same prefix under the same options, and
// reference-counted: the last Release ends its process.
//
// The driver reaches it only through ctrl, its end of a socket pair the shim made before the fork
// and passed over the session's channel: nothing listens, so no other process can resume or free
// it. Closing ctrl (or the driver's death) ends the dormant process; proc is its pidfd.
type Checkpoint struct {
	c       *Checker
	id      int64
	off     int
	text    string
	res     resolved
	hash    [32]byte
	pid     int
	session int64 // the session that made it

	ctrlMu sync.Mutex // serialises resumes on ctrl
	ctrl   *net.UnixConn
	proc   *pidFD

	// ForkTime is how long the shim's fork() took (as the shim measured it).
	ForkTime time.Duration

	refs int // guarded by c.mu
}

var _ checkers.Checkpoint = (*Checkpoint)(nil)

// ID identifies the checkpoint in events.
func (cp *Checkpoint) ID() int64 { return cp.id }

// Off is the length of the prefix the checkpoint holds.
func (cp *Checkpoint) Off() int { return cp.off }

// Text is the checked prefix the checkpoint holds.
func (cp *Checkpoint) Text() string { return cp.text }

// PID is the dormant process behind the checkpoint.
func (cp *Checkpoint) PID() int { return cp.pid }

// PrivateBytes is the private memory of the checkpoint's process (PrivateKB): what freeing it
// gives back.
func (cp *Checkpoint) PrivateBytes() (int64, error) {
	kb, err := PrivateKB(cp.pid)
	if err != nil {
		return 0, fmt.Errorf("checkpoint %d: %w", cp.id, err)
	}
	return int64(kb * 1024), nil
}

// Refs returns the current reference count (0 once freed).
func (cp *Checkpoint) Refs() int {
	cp.c.mu.Lock()
	defer cp.c.mu.Unlock()
	return max(cp.refs, 0)
}

// Retain adds a reference. Retaining a freed checkpoint has no effect.
func (cp *Checkpoint) Retain() {
	cp.c.mu.Lock()
	defer cp.c.mu.Unlock()
	if cp.refs > 0 {
		cp.refs++
	}
}

// Release drops a reference; the last one ends the checkpoint's process. Extra releases are
// ignored.
func (cp *Checkpoint) Release() {
	c := cp.c
	c.mu.Lock()
	if cp.refs <= 0 {
		c.mu.Unlock()
		return
	}
	cp.refs--
	last := cp.refs == 0
	if last && c.cps[cp.id] == cp {
		delete(c.cps, cp.id)
		if c.byHash[cp.hash] == cp {
			delete(c.byHash, cp.hash)
		}
	}
	c.mu.Unlock()
	if last {
		cp.free()
	}
}

// free ends the dormant process: it exits when its control socket hangs up.
func (cp *Checkpoint) free() {
	cp.ctrlMu.Lock()
	if cp.ctrl != nil {
		cp.ctrl.Close()
	}
	cp.ctrlMu.Unlock()
	cp.proc.close()
}

// kill ends the dormant process at once (its pidfd names exactly it).
func (cp *Checkpoint) kill() {
	cp.proc.kill()
	cp.free()
}

// resume hands channel (and its ring, unless nil) to the dormant process with a resume for
// session id (SCM_RIGHTS); the process forks a session that uses them.
func (cp *Checkpoint) resume(id int64, channel, ring *os.File) error {
	cp.ctrlMu.Lock()
	defer cp.ctrlMu.Unlock()
	line := fmt.Appendf(nil, `{"op":"resume","id":%d}`+"\n", id)
	fds := []int{int(channel.Fd())}
	if ring != nil {
		fds = append(fds, int(ring.Fd()))
	}
	n, _, err := cp.ctrl.WriteMsgUnix(line, unixRights(fds...), nil)
	if err == nil && n != len(line) {
		_, err = cp.ctrl.Write(line[n:])
	}
	return err
}

// adoptChkpt turns a chkpt event from session s into a registered checkpoint carrying one
// reference for the event's receiver. If an identical prefix is already checkpointed, the new
// process is freed and the event is rewritten to name the existing checkpoint.
// fds are the control socket and pidfd that came with the event; the checkpoint owns them.
func (c *Checker) adoptChkpt(s *Session, ev *checkers.Event, text []byte, fds []int) {
	h := prefixHash(s.res.key, text)
	ctrlFile := os.NewFile(uintptr(fds[0]), "hydra-checkpoint")
	ctrl, err := net.FileConn(ctrlFile)
	ctrlFile.Close()
	cp := &Checkpoint{
		c:       c,
		id:      ev.ID,
		off:     ev.Off,
		text:    string(text),
		res:     s.res,
		hash:    h,
		pid:     ev.PID,
		session: s.id,
		proc:    newPidFD(fds[1]),
		refs:    1,
	}
	if err != nil { // cannot happen for a socket; the process ends when its pair is gone
		cp.kill()
		return
	}
	cp.ctrl = ctrl.(*net.UnixConn)
	if us, ok := ev.Meta["fork_us"].(float64); ok {
		cp.ForkTime = time.Duration(us) * time.Microsecond
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		cp.kill()
		return
	}
	if old := c.byHash[h]; old != nil && old.refs > 0 {
		old.refs++
		c.mu.Unlock()
		cp.free()
		if ev.Meta == nil {
			ev.Meta = map[string]any{}
		}
		ev.Meta["shared"] = true
		ev.Meta["freed_duplicate_pid"] = ev.PID
		ev.ID, ev.PID = old.id, old.pid
		return
	}
	c.cps[cp.id] = cp
	c.byHash[h] = cp
	c.mu.Unlock()
}

// lookupShared returns, retained, a live checkpoint for exactly this prefix, or nil.
func (c *Checker) lookupShared(key string, text []byte) *Checkpoint {
	h := prefixHash(key, text)
	c.mu.Lock()
	defer c.mu.Unlock()
	if cp := c.byHash[h]; cp != nil && cp.refs > 0 {
		cp.refs++
		return cp
	}
	return nil
}
