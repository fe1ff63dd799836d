package clang

import (
	"fmt"
	"io"
	"net"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// fdConn is a session's channel: a UNIX stream socket whose reads also collect the descriptors
// the shim passes along with some events (SCM_RIGHTS): a checkpoint's control socket and pidfd
// with its chkpt event, a resumed session's own pidfd with its init. On a stream socket a
// descriptor arrives no later than the byte it was sent with, so by the time an event's line has
// been read, its descriptors are at the front of the queue, in order.
type fdConn struct {
	*net.UnixConn
	oob []byte // Read's control buffer (Read is called from one goroutine)

	mu  sync.Mutex
	fds []int // received and not yet taken, oldest first
}

func newFdConn(c *net.UnixConn) *fdConn {
	return &fdConn{UnixConn: c, oob: make([]byte, unix.CmsgSpace(8*4))}
}

// Read reads data, keeping any descriptors that came with it.
func (c *fdConn) Read(p []byte) (int, error) {
	n, oobn, _, _, err := c.ReadMsgUnix(p, c.oob) // MSG_CMSG_CLOEXEC on Linux
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
	if n < 0 {
		n = 0
	}
	if n == 0 && err == nil && len(p) > 0 {
		err = io.EOF // ReadMsgUnix reports a stream's end as an empty read
	}
	return n, err
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
