package clang

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hydra-lsp/hydra/checkers"
)

// A read blocked on the channel ends when the session closes it, and the descriptor is closed
// only after that read has let go of it (never under a read still blocked on its number).
func TestFdConnCloseEndsABlockedRead(t *testing.T) {
	for _, spin := range []time.Duration{0, time.Millisecond} {
		t.Run(spin.String(), func(t *testing.T) {
			mine, theirs, err := socketPair("test", spin)
			if err != nil {
				t.Fatal(err)
			}
			defer theirs.Close()
			read := make(chan error, 1)
			go func() {
				_, err := mine.Read(make([]byte, 16))
				read <- err
			}()
			// Wait until the reader holds the descriptor (it blocks in recvmsg right after).
			for deadline := time.Now().Add(hangGuard); ; {
				mine.mu.Lock()
				uses := mine.uses
				mine.mu.Unlock()
				if uses == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the reader never started")
				}
				time.Sleep(time.Millisecond)
			}
			if err := mine.Close(); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-read:
				if !errors.Is(err, io.EOF) {
					t.Errorf("blocked read after Close: %v, want io.EOF", err)
				}
			case <-time.After(hangGuard):
				t.Fatal("Close did not end the blocked read")
			}
			mine.mu.Lock()
			fd, uses := mine.fd, mine.uses
			mine.mu.Unlock()
			if fd != -1 || uses != 0 {
				t.Errorf("after the read returned: fd %d, uses %d; want the descriptor closed", fd, uses)
			}
			if _, err := mine.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
				t.Errorf("Read after Close: %v, want net.ErrClosed", err)
			}
			if _, err := mine.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
				t.Errorf("Write after Close: %v, want net.ErrClosed", err)
			}
		})
	}
}

// writev delivers every byte of every buffer, in order, also when the socket takes them in
// several pieces (more than its buffer holds), and a spinning Read still gets data that comes
// after its spin has run out.
func TestFdConnWritevAndSpinningRead(t *testing.T) {
	mine, theirs, err := socketPair("test", 100*time.Microsecond)
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close()
	peer, err := net.FileConn(theirs)
	theirs.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()

	bufs := [][]byte{[]byte("head\n"), bytes.Repeat([]byte("a"), 3<<20), nil, []byte("tail")}
	var want []byte
	for _, b := range bufs {
		want = append(want, b...)
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(peer, int64(len(want))))
		got <- b
	}()
	n, err := mine.writev(bufs...)
	if err != nil || n != len(want) {
		t.Fatalf("writev = %d, %v; want %d, nil", n, err, len(want))
	}
	select {
	case b := <-got:
		if !bytes.Equal(b, want) {
			t.Fatalf("peer read %d bytes, not the %d written in order", len(b), len(want))
		}
	case <-time.After(hangGuard):
		t.Fatal("peer never read everything")
	}

	go func() {
		time.Sleep(20 * time.Millisecond) // well past the 100 µs spin: Read blocks by then
		_, _ = peer.Write([]byte("late"))
	}()
	buf := make([]byte, 16)
	n, err = io.ReadAtLeast(mine, buf, 4)
	if err != nil || string(buf[:n]) != "late" {
		t.Fatalf("spinning Read = %q, %v; want \"late\"", buf[:n], err)
	}
}

// Close while a call uses the descriptor shuts the socket down but leaves the descriptor open
// until that call lets go: its number cannot be given to another file under the call.
func TestFdConnClosesTheDescriptorAfterItsLastUse(t *testing.T) {
	mine, theirs, err := socketPair("test", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer theirs.Close()
	fd, ok := mine.acquire() // a call in progress
	if !ok {
		t.Fatal("acquire on an open connection failed")
	}
	if err := mine.Close(); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		t.Fatalf("descriptor %d closed under a call still using it (fstat: %v)", fd, err)
	}
	if _, ok := mine.acquire(); ok {
		t.Error("acquire after Close succeeded")
	}
	mine.release()
	mine.mu.Lock()
	left := mine.fd
	mine.mu.Unlock()
	if left != -1 {
		t.Errorf("descriptor %d still open after its last use", left)
	}
}

// A spinning reader backs off only when its spins keep running out: one slow answer leaves it
// spinning, three in a row make the next read block at once, each further one doubles the
// reads that block (up to maxSpinSkip), and a spin that gets its data halves them again.
func TestSpinGateBacksOffWhileSpinsFail(t *testing.T) {
	var g SpinGate
	// blocking counts the reads that block at once before the gate lets one spin again.
	blocking := func() int {
		n := 0
		for !g.Spin() {
			n++
			if n > maxSpinSkip {
				t.Fatalf("the gate kept blocking past maxSpinSkip (%d)", maxSpinSkip)
			}
		}
		return n
	}
	fail := func(want int) {
		t.Helper()
		g.Spun(false)
		if got := blocking(); got != want {
			t.Fatalf("after a failed spin (%d in a row) %d reads blocked at once, want %d", g.fails, got, want)
		}
	}
	if blocking() != 0 {
		t.Fatal("a new gate does not let the first read spin")
	}
	fail(0)
	fail(0)
	fail(1)
	fail(3)
	fail(7)
	g.Spun(true)
	if got := blocking(); got != 0 || g.backoff != 3 {
		t.Fatalf("after a spin that got its data: %d reads blocked, back-off %d; want 0 and 3", got, g.backoff)
	}
	fail(0) // the fails in a row start over
	fail(0)
	fail(7)
	for range 10 {
		g.Spun(false)
	}
	if got := blocking(); got != maxSpinSkip {
		t.Fatalf("after many failed spins %d reads blocked at once, want maxSpinSkip (%d)", got, maxSpinSkip)
	}
}

// A spin that ran out counts as failed only when the shim answered with a progress event on
// which it worked for less than the spin lasted: a slow line or a checkpoint's fork outlasts
// any spin and says nothing about a busy machine.
func TestSettleSpinCountsOnlyQuickAnswers(t *testing.T) {
	c := newFdConn(-1, 50*time.Microsecond)
	for _, tc := range []struct {
		ev    checkers.Event
		fails int
	}{
		{checkers.Event{Kind: checkers.KindProgress, ShimUS: 400}, 0},
		{checkers.Event{Kind: checkers.KindChkpt}, 0},
		{checkers.Event{Kind: checkers.KindProgress, ShimUS: 10}, 1},
		{checkers.Event{Kind: checkers.KindProgress, ShimUS: 49}, 2},
	} {
		c.gate.RanOut()
		c.settleSpin(&tc.ev)
		if c.gate.ranOut || c.gate.fails != tc.fails {
			t.Fatalf("after a spin that ran out and %+v: %d failed spins counted (still unsettled: %v), want %d", tc.ev, c.gate.fails, c.gate.ranOut, tc.fails)
		}
	}
	c.settleSpin(&checkers.Event{Kind: checkers.KindProgress, ShimUS: 1})
	if c.gate.fails != 2 {
		t.Fatalf("an event after a read that did not run out was counted: %d failed spins", c.gate.fails)
	}
}
