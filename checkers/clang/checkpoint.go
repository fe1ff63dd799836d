package clang

import (
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
)

// Checkpoint is a dormant shim process holding the Clang state after a prefix of text. It is
// shared by every session that reaches the same prefix under the same options, and
// reference-counted: the last Release ends its process.
type Checkpoint struct {
	c       *Checker
	id      int64
	off     int
	text    string
	res     resolved
	hash    [32]byte
	pid     int
	session int64  // the session that made it
	sock    string // abstract socket name, without the leading '@'

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

// free asks the dormant process to exit, and kills it if it cannot be reached.
func (cp *Checkpoint) free() {
	conn, err := net.DialTimeout("unix", "@"+cp.sock, 2*time.Second)
	if err == nil {
		_ = conn.SetWriteDeadline(time.Now().Add(2 * time.Second))
		_, err = conn.Write([]byte(`{"op":"free"}` + "\n"))
		conn.Close()
	}
	if err != nil {
		cp.kill()
	}
}

// kill ends the dormant process at once.
func (cp *Checkpoint) kill() {
	if cp.pid > 0 {
		_ = syscall.Kill(cp.pid, syscall.SIGKILL)
	}
}

// adoptChkpt turns a chkpt event from session s into a registered checkpoint carrying one
// reference for the event's receiver. If an identical prefix is already checkpointed, the new
// process is freed and the event is rewritten to name the existing checkpoint.
func (c *Checker) adoptChkpt(s *Session, ev *checkers.Event, text []byte) {
	h := prefixHash(s.res.key, text)
	cp := &Checkpoint{
		c:       c,
		id:      ev.ID,
		off:     ev.Off,
		text:    string(text),
		res:     s.res,
		hash:    h,
		pid:     ev.PID,
		session: s.id,
		sock:    fmt.Sprintf("%s-%d", c.prefix, ev.ID),
		refs:    1,
	}
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
