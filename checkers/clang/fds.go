package clang

import (
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hydra-lsp/hydra/checkers"
)

// fdConn is a session's channel: our end of a UNIX stream socket pair, read and written with
// blocking system calls on a descriptor kept out of Go's network poller. In the poller, every
// chunk cost the driver an extra wake-up: the shim reading a chunk frees room in our socket's
// send buffer, the edge-triggered EPOLLOUT that follows wakes the poller's thread, and on a
// small virtual machine each wake-up is a context switch of several microseconds
// (docs/checker-benchmark.md, "The driver's wake-ups"). A blocked reader holds one thread per
// session. With a ring (ring.go, the default) the protocol's bytes go through shared memory and
// the socket carries only wake-up bytes, descriptors and hang-up.
//
// Reads also collect the descriptors the shim passes along with some events (SCM_RIGHTS): a
// checkpoint's control socket and pidfd with its chkpt event, a resumed session's own pidfd
// with its init. On a stream socket a descriptor arrives no later than the byte it was sent
// with, so by the time an event's line has been read, its descriptors are at the front of the
// queue, in order.
type fdConn struct {
	oob  []byte        // Read's control buffer (Read is called from one goroutine)
	spin time.Duration // how long Read tries before it blocks (0: block at once)
	gate SpinGate      // whether it spins this time (Read's and settleSpin's; one reader)
	// noYield: Read does not yield before it reads (a reader with no goroutine to hand its
	// data to: RawChannel).
	noYield bool

	// ring, when set, carries the channel's bytes both ways, and the socket only the wake-up
	// bytes, descriptors and hang-up (ring.go). Unmapped with the socket's descriptor.
	ring *shmRing
	eof  bool // the ring's socket hung up (Read's, and take's while Read is not running)

	mu     sync.Mutex
	fd     int   // -1 once closed
	uses   int   // calls using fd right now
	closed bool  // Close was called: fd is shut down, and closed once uses is 0
	fds    []int // received and not yet taken, oldest first
}

func newFdConn(fd int, spin time.Duration) *fdConn {
	return &fdConn{oob: make([]byte, unix.CmsgSpace(8*4)), spin: spin, fd: fd}
}

// acquire returns the descriptor for one call, or false once the connection is closed; each
// true must be followed by release. A descriptor is never closed while a call uses it, so its
// number cannot be reused under a read that is still blocked on it.
func (c *fdConn) acquire() (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return -1, false
	}
	c.uses++
	return c.fd, true
}

func (c *fdConn) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.uses--
	if c.closed && c.uses == 0 && c.fd >= 0 {
		c.closeFD()
	}
}

// closeFD closes the socket's descriptor and unmaps the ring; under mu, once no call uses them.
func (c *fdConn) closeFD() {
	_ = unix.Close(c.fd)
	c.fd = -1
	if c.ring != nil {
		c.ring.unmap()
	}
}

// Read reads data, keeping any descriptors that came with it. With c.spin > 0 (Options.Spin),
// when nothing is there yet it tries again for up to c.spin (yielding the processor in
// between) before it blocks, unless its SpinGate says to block at once.
func (c *fdConn) Read(p []byte) (int, error) {
	fd, ok := c.acquire()
	if !ok {
		return 0, net.ErrClosed
	}
	defer c.release()
	// The reader has usually just handed an event to a goroutine waiting for it, which Go
	// queues to run next on this thread; blocking in a system call now would leave it there
	// until another thread steals it, after a sleep of its own. Yield first: it runs at once.
	if !c.noYield {
		runtime.Gosched()
	}
	if c.ring != nil {
		return c.readRing(fd, p)
	}
	flags := 0
	var until time.Time
	if c.spin > 0 && c.gate.Spin() {
		flags = unix.MSG_DONTWAIT
	}
	for {
		n, oobn, _, _, err := unix.Recvmsg(fd, p, c.oob, unix.MSG_CMSG_CLOEXEC|flags)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN && flags != 0:
			if until.IsZero() {
				until = time.Now().Add(c.spin)
			} else if time.Now().After(until) {
				flags = 0       // block from now on
				c.gate.RanOut() // the next event says whether that counts (settleSpin)
			}
			runtime.Gosched()
			continue
		case err != nil:
			return 0, os.NewSyscallError("recvmsg", err)
		}
		if flags != 0 && !until.IsZero() {
			c.gate.Spun(true)
		}
		return c.got(n, oobn, len(p))
	}
}

// readRing is Read for a channel with a ring: what the shim wrote there, else, after a spin
// over the ring (no system call), blocking on the socket for the shim's wake-up byte.
func (c *fdConn) readRing(fd int, p []byte) (int, error) {
	r := c.ring
	spin := c.spin > 0 && c.gate.Spin()
	var until time.Time
	for {
		n, err := r.read(p)
		if err != nil {
			return 0, err
		}
		if n > 0 {
			if spin && !until.IsZero() {
				c.gate.Spun(true)
			}
			return n, nil
		}
		if c.eof {
			return 0, io.EOF
		}
		if spin {
			if until.IsZero() {
				until = time.Now().Add(c.spin)
			} else if time.Now().After(until) {
				spin = false
				c.gate.RanOut() // the next event says whether that counts (settleSpin)
			}
			if spin {
				runtime.Gosched()
				continue
			}
		}
		r.setDriverWaiting(true)
		if r.pending() {
			r.setDriverWaiting(false)
			continue
		}
		err = c.recvSocket(fd)
		r.setDriverWaiting(false)
		if err != nil {
			return 0, err
		}
	}
}

// recvSocket blocks for what comes on the socket of a channel with a ring (wake-up bytes,
// which it drops, and descriptors, which it keeps); at hang-up it sets c.eof. What is left in
// the ring is still read after that.
func (c *fdConn) recvSocket(fd int) error {
	var drop [64]byte
	for {
		n, oobn, _, _, err := unix.Recvmsg(fd, drop[:], c.oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return os.NewSyscallError("recvmsg", err)
		}
		if _, err := c.got(n, oobn, len(drop)); err == io.EOF {
			c.eof = true
		}
		return nil
	}
}

// settleSpin tells the gate how a spin that ran out before ev came counts (SpinGate.Settle).
// Called by the reader after each event it decodes.
func (c *fdConn) settleSpin(ev *checkers.Event) {
	c.gate.Settle(ev.Kind == checkers.KindProgress, time.Duration(ev.ShimUS)*time.Microsecond, c.spin)
}

// maxSpinSkip is the most reads in a row that a SpinGate makes block at once; spinFailsToBackOff
// is how many spins in a row must run out before it backs off.
const (
	maxSpinSkip        = 64
	spinFailsToBackOff = 3
)

// SpinGate backs a spinning reader off while its spins come to nothing: from the
// spinFailsToBackOff-th spin in a row that ran out before the data came, each one doubles the
// number of reads after it that block at once (up to maxSpinSkip); a spin that gets the data
// halves it. On a busy machine the other side is often not running when the reader spins, and
// a spin that holds a processor the other side needs makes the wait longer
// (docs/checker-benchmark.md, "Spinning that backs off"); so spins that keep failing soon stop,
// and an occasional one finds out when they pay again. One slow answer (a long line, the first
// lines after a fork) is not a busy machine, hence the spins in a row. The shim's Channel
// backs off the same way, and hydra bench checker's raw client uses this type to read as the
// driver does. A gate belongs to one reader; the zero value is ready.
type SpinGate struct {
	skip, backoff, fails int
	ranOut               bool // the latest spin ran out; the next event settles it (Settle)
}

// Spin reports whether this read may spin.
func (g *SpinGate) Spin() bool {
	if g.skip > 0 {
		g.skip--
		return false
	}
	return true
}

// RanOut records that a spin ran out before the data came: the reader blocks, and Settle,
// with the event that then comes, decides whether it counts as failed.
func (g *SpinGate) RanOut() { g.ranOut = true }

// Settle counts a spin that ran out (RanOut) before the event that came: as failed only when
// the event is a progress event (progress) on which the shim worked (shimWork, its shim_us)
// for less than the spin lasted (spin). When the shim's own work on the chunk took longer
// (the first lines after a fork, a template instantiation), the spin could not have caught it
// and says nothing about a busy machine; other events (a checkpoint after its fork, an error)
// are not counted either. Without a spin that ran out it does nothing.
func (g *SpinGate) Settle(progress bool, shimWork, spin time.Duration) {
	if !g.ranOut {
		return
	}
	g.ranOut = false
	if progress && shimWork < spin {
		g.Spun(false)
	}
}

// Spun records how a spin ended: got says whether the data came before it ran out.
func (g *SpinGate) Spun(got bool) {
	if got {
		g.fails = 0
		g.backoff /= 2
		return
	}
	if g.fails++; g.fails >= spinFailsToBackOff {
		g.backoff = min(2*g.backoff+1, maxSpinSkip)
		g.skip = g.backoff
	}
}

// Write writes all of p.
func (c *fdConn) Write(p []byte) (int, error) { return c.writev(p) }

// writev writes all the buffers, in one system call when the socket takes them at once.
func (c *fdConn) writev(bufs ...[]byte) (int, error) {
	fd, ok := c.acquire()
	if !ok {
		return 0, net.ErrClosed
	}
	defer c.release()
	if c.ring != nil {
		return c.writeRing(fd, bufs)
	}
	total := 0
	for len(bufs) > 0 {
		n, err := unix.Writev(fd, bufs)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return total, os.NewSyscallError("writev", err)
		}
		total += n
		for len(bufs) > 0 && n >= len(bufs[0]) {
			n -= len(bufs[0])
			bufs = bufs[1:]
		}
		if n > 0 {
			bufs[0] = bufs[0][n:]
		}
	}
	return total, nil
}

// writeRing is writev for a channel with a ring: the buffers go into the ring, and the shim
// gets a wake-up byte on the socket if it said it would sleep. While the ring is full (the shim
// is far behind, on a large text) it looks again every millisecond, until the shim hangs up.
func (c *fdConn) writeRing(fd int, bufs [][]byte) (int, error) {
	total := 0
	for _, b := range bufs {
		for len(b) > 0 {
			n, wake, err := c.ring.write(b)
			if err != nil {
				return total, err
			}
			if wake {
				if err := wakeUp(fd); err != nil {
					return total, err
				}
			}
			b, total = b[n:], total+n
			if n > 0 {
				continue
			}
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
			if _, err := unix.Poll(pfd, 1); err != nil && err != unix.EINTR {
				return total, os.NewSyscallError("poll", err)
			}
			if pfd[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR) != 0 {
				return total, os.NewSyscallError("write", unix.EPIPE)
			}
		}
	}
	return total, nil
}

// wakeUp sends the byte that wakes a reader sleeping on the other end of a ring's socket.
func wakeUp(fd int) error {
	for {
		_, err := unix.Write(fd, []byte{'w'})
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return os.NewSyscallError("write", err)
		}
		return nil
	}
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
//
// With a ring, an event's descriptors are sent on the socket before its line goes into the
// ring, so they are on their way when the line is read: take blocks for them. It is called by
// the reader (the goroutine that calls Read), between reads.
func (c *fdConn) take(n int) ([]int, error) {
	if c.ring != nil {
		if err := c.awaitFds(n); err != nil {
			return nil, err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.fds) < n {
		return nil, fmt.Errorf("checker protocol error: want %d descriptors with the event, got %d", n, len(c.fds))
	}
	out := append([]int(nil), c.fds[:n]...)
	c.fds = c.fds[n:]
	return out, nil
}

// awaitFds reads the socket of a channel with a ring until n descriptors have come or it hangs up.
func (c *fdConn) awaitFds(n int) error {
	fd, ok := c.acquire()
	if !ok {
		return net.ErrClosed
	}
	defer c.release()
	for !c.eof {
		c.mu.Lock()
		have := len(c.fds)
		c.mu.Unlock()
		if have >= n {
			return nil
		}
		if err := c.recvSocket(fd); err != nil {
			return err
		}
	}
	return nil
}

// Close shuts the socket down, which ends a read blocked on it and tells the shim that we are
// gone, and closes every descriptor received and not taken (a checkpoint whose control socket
// is closed unread ends itself). The socket's descriptor is closed once no call uses it.
func (c *fdConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, fd := range c.fds {
		_ = unix.Close(fd)
	}
	c.fds = nil
	if c.closed {
		return nil
	}
	c.closed = true
	_ = unix.Shutdown(c.fd, unix.SHUT_RDWR)
	if c.uses == 0 {
		c.closeFD()
	}
	return nil
}

// socketPair returns both ends of a new UNIX stream socket pair: ours as a connection, theirs
// as a file to hand over.
func socketPair(name string, spin time.Duration) (*fdConn, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	return newFdConn(fds[0], spin), os.NewFile(uintptr(fds[1]), name+"-shim"), nil
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

// waitExit waits up to timeout for the process to exit (its pidfd becomes readable then) and
// reports whether it did. A closed pidFD reports true: there is nothing left to wait for.
func (p *pidFD) waitExit(timeout time.Duration) bool {
	if p == nil {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fd < 0 {
		return true
	}
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		fds := []unix.PollFd{{Fd: int32(p.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if err == unix.EINTR {
			continue
		}
		return err == nil && n > 0
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
