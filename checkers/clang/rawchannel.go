package clang

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// RawChannel is the driver's end of a shim's channel for a client that speaks the wire
// protocol by hand, with no Session around it (hydra bench checker's raw client, which
// measures a line without the Go driver: checkers/benchmark/raw.go). Its reads and writes are
// the driver's own: the shared-memory ring unless socketOnly, spinning for up to spin before
// blocking, with the driver's back-off (SpinGate).
type RawChannel struct {
	c *fdConn
}

// NewRawChannel returns our end of a new channel and the files to hand to a shim: its socket
// (--channel-fd) and its ring (--ring-fd; nil when socketOnly). The caller closes both files
// once the shim has them.
func NewRawChannel(spin time.Duration, socketOnly bool) (ch *RawChannel, socket, ring *os.File, err error) {
	mine, theirs, ring, err := newChannel(max(spin, 0), !socketOnly)
	if err != nil {
		return nil, nil, nil, err
	}
	// Nothing waits for what the client reads, so its reads do not yield first as the
	// driver's do (on a thread locked to one processor, a yield is a hand-off between
	// threads: measureRawOneProcessor).
	mine.noYield = true
	return &RawChannel{c: mine}, theirs, ring, nil
}

// SetReadTimeout bounds each blocking wait of a read: a shim that stops answering makes Read
// fail instead of hang.
func (r *RawChannel) SetReadTimeout(d time.Duration) error {
	fd, ok := r.c.acquire()
	if !ok {
		return os.ErrClosed
	}
	defer r.c.release()
	tv := unix.NsecToTimeval(d.Nanoseconds())
	return os.NewSyscallError("setsockopt", unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv))
}

// Read reads what the shim wrote.
func (r *RawChannel) Read(p []byte) (int, error) { return r.c.Read(p) }

// Write writes all of p for the shim.
func (r *RawChannel) Write(p []byte) (int, error) { return r.c.Write(p) }

// Settle tells the read's spin gate about the event just read, as the driver's reader does
// (SpinGate.Settle): progress is whether it was a progress event, shimWork its shim_us.
func (r *RawChannel) Settle(progress bool, shimWork time.Duration) {
	r.c.gate.Settle(progress, shimWork, r.c.spin)
}

// Close hangs the channel up and releases it.
func (r *RawChannel) Close() error { return r.c.Close() }
