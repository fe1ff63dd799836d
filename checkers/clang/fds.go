package clang

import (
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// fdConn is a session's channel: a UNIX stream socket whose reads also collect the descriptors
// the shim passes along with some events (SCM_RIGHTS): a checkpoint's control socket and pidfd
// with its chkpt event, a resumed session's own pidfd with its init. On a stream socket a
// descriptor arrives no later than the byte it was sent with, so by the time an event's line has
// been read, its descriptors are at the front of the queue, in order.
type fdConn struct {
	*net.UnixConn
	raw  syscall.RawConn
	oob  []byte        // Read's control buffer (Read is called from one goroutine)
	spin time.Duration // how long Read tries before it parks (0: park at once)

	mu  sync.Mutex
	fds []int // received and not yet taken, oldest first
}

func newFdConn(c *net.UnixConn, spin time.Duration) *fdConn {
	fc := &fdConn{UnixConn: c, oob: make([]byte, unix.CmsgSpace(8*4)), spin: spin}
	if raw, err := c.SyscallConn(); err == nil {
		fc.raw = raw
	}
	return fc
}

// Read reads data, keeping any descriptors that came with it. With c.spin > 0 (Options.Spin),
// when nothing is there yet it tries again for up to c.spin (yielding the processor in
// between) before it parks the goroutine in the poller.
func (c *fdConn) Read(p []byte) (int, error) {
	if c.raw == nil {
		return c.readMsg(p)
	}
	var n, oobn int
	var rerr error
	var until time.Time
	err := c.raw.Read(func(fd uintptr) bool {
		for {
			n, oobn, _, _, rerr = unix.Recvmsg(int(fd), p, c.oob, unix.MSG_CMSG_CLOEXEC)
			switch {
			case rerr == unix.EINTR:
				continue
			case rerr != unix.EAGAIN:
				return true
			case c.spin <= 0:
				return false
			case until.IsZero():
				until = time.Now().Add(c.spin)
			case time.Now().After(until):
				return false // park; the next call after readiness does not spin again
			}
			runtime.Gosched()
		}
	})
	if err == nil && rerr != nil {
		err = os.NewSyscallError("recvmsg", rerr)
	}
	if err != nil {
		return 0, err
	}
	return c.got(n, oobn, len(p))
}

// readMsg is Read without spinning, through the net package.
func (c *fdConn) readMsg(p []byte) (int, error) {
	n, oobn, _, _, err := c.ReadMsgUnix(p, c.oob) // MSG_CMSG_CLOEXEC on Linux
	if err != nil {
		return max(n, 0), err
	}
	return c.got(n, oobn, len(p))
}

// got keeps the descriptors of a received message and turns an empty read into io.EOF (a
// stream's end).
func (c *fdConn) got(n, oobn, want int) (int, error) {
	if oobn > 0 {
		var got []int
		if msgs, perr := unix.ParseSocketControlMessage(c.oob[:oobn]); perr == nil {
			for i := range msgs {
				if fds, ferr := unix.ParseUnixRights(&msgs[i]); ferr == nil {
					got = append(got, fds...)
				}
			}
		}
		c.mu.Lock()
		c.fds = append(c.fds, got...)
		c.mu.Unlock()
	}
	if n <= 0 && want > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// take removes and returns the n oldest received descriptors, or an error (taking none) if
// fewer arrived.
func (c *fdConn) take(n int) ([]int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.fds) < n {
		return nil, fmt.Errorf("checker protocol error: want %d descriptors with the event, got %d", n, len(c.fds))
	}
	out := append([]int(nil), c.fds[:n]...)
	c.fds = c.fds[n:]
	return out, nil
}

// Close closes the socket and every descriptor received and not taken (a checkpoint whose
// control socket is closed unread ends itself).
func (c *fdConn) Close() error {
	c.mu.Lock()
	for _, fd := range c.fds {
		_ = unix.Close(fd)
	}
	c.fds = nil
	c.mu.Unlock()
	return c.UnixConn.Close()
}

// socketPair returns both ends of a new UNIX stream socket pair: ours as a connection, theirs
// as a file to hand over.
func socketPair(name string) (*net.UnixConn, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	mine := os.NewFile(uintptr(fds[0]), name)
	theirs := os.NewFile(uintptr(fds[1]), name+"-shim")
	conn, err := net.FileConn(mine)
	mine.Close()
	if err != nil {
		theirs.Close()
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	return conn.(*net.UnixConn), theirs, nil
}

// unixRights is the control message that passes fds.
func unixRights(fds ...int) []byte { return unix.UnixRights(fds...) }

// pidFD is a process identified by a pidfd: signals reach that process or, once it has exited,
// nothing — never another process that reuses its pid.
type pidFD struct {
	mu sync.Mutex
	fd int // -1 once closed
}

func newPidFD(fd int) *pidFD { return &pidFD{fd: fd} }

// kill sends SIGKILL to the process (no-op when closed or already gone).
func (p *pidFD) kill() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fd >= 0 {
		_ = unix.PidfdSendSignal(p.fd, unix.SIGKILL, nil, 0)
	}
}

// close releases the descriptor.
func (p *pidFD) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fd >= 0 {
		_ = unix.Close(p.fd)
		p.fd = -1
	}
}
