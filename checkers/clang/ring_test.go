package clang

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
)

// A ring whose indices a broken shim has set out of range reads and writes as a protocol error,
// never as bytes from outside the ring.
func TestRingRefusesIndicesOutOfRange(t *testing.T) {
	r, f, err := newShmRing()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	defer r.unmap()
	buf := make([]byte, 16)
	if n, err := r.read(buf); n != 0 || err != nil {
		t.Fatalf("empty ring: read %d, %v; want 0, nil", n, err)
	}
	r.index(ringUpW).Store(ringUpCap + 1)
	if _, err := r.read(buf); !errors.Is(err, errRingIndex) {
		t.Errorf("read with the shim's write index %d ahead: %v, want %v", ringUpCap+1, err, errRingIndex)
	}
	r.index(ringDownR).Store(1 << 40) // the shim says it read bytes never written
	if _, _, err := r.write([]byte("x")); !errors.Is(err, errRingIndex) {
		t.Errorf("write with the shim's read index past ours: %v, want %v", err, errRingIndex)
	}
}

// ringMapped reports whether pid maps a session's ring (its memfd's name in /proc/PID/maps).
func ringMapped(t *testing.T, pid int) bool {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(b), "memfd:hydra-ring")
}

// A chunk four times the size of the ring's driver→shim half, and a text of many small chunks
// submitted without waiting, both reach Clang whole through the ring (the writer waits for
// room); a resumed session gets a ring of its own; a dormant checkpoint keeps none.
func TestRingCarriesMoreThanItHolds(t *testing.T) {
	c := newChecker(t, Options{})
	var big strings.Builder
	for i := 0; big.Len() < 4*ringDownCap; i++ {
		fmt.Fprintf(&big, "int v%d = %d;\n", i, i)
	}
	s, err := c.Start(context.Background(), checkers.SessionOptions{Flags: []string{"-xc", "-std=c11"}, Filename: "big.c"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Submit(big.String(), checkers.SubmitOptions{Cat: checkers.BoundaryStmt, Checkpoint: true}); err != nil {
		t.Fatal(err)
	}
	if ev := waitFor(t, s, checkers.KindProgress); ev.Off != big.Len() {
		t.Fatalf("progress at %d after a chunk of %d bytes", ev.Off, big.Len())
	}
	if pid := s.(*Session).PID(); !ringMapped(t, pid) {
		t.Errorf("session %d (pid %d) maps no ring", s.ID(), pid)
	}
	cp := waitFor(t, s, checkers.KindChkpt)
	// The session sends the chkpt event right after its fork, so the child may not have
	// unmapped the ring yet: look until it has, for as long as a test waits for a hang.
	for deadline := time.Now().Add(hangGuard); ringMapped(t, cp.PID); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("dormant checkpoint %d (pid %d) still maps the session's ring after %v", cp.ID, cp.PID, hangGuard)
		}
	}
	var small []string
	for i := range 3000 {
		small = append(small, fmt.Sprintf("int w%d;\n", i))
	}
	submitAll(t, s, small)
	var last checkers.Event
	for _, ev := range collect(t, s) {
		switch ev.Kind {
		case checkers.KindProgress, checkers.KindDone:
			last = ev
		case checkers.KindError, checkers.KindCrash:
			t.Fatalf("%s at %d: %s", ev.Kind, ev.Off, ev.Diag)
		}
	}
	if want := big.Len() + len(strings.Join(small, "")); last.Kind != checkers.KindDone || !last.OK {
		t.Fatalf("last event %+v, want done ok after %d bytes", last, want)
	}

	resumed, err := c.Resume(context.Background(), c.Adopt(cp.ID))
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Close()
	init := waitFor(t, resumed, checkers.KindInit)
	if !ringMapped(t, init.PID) {
		t.Errorf("resumed session (pid %d) maps no ring", init.PID)
	}
	submitAll(t, resumed, []string{"int after;\n"})
	if evs := collect(t, resumed); len(evs) == 0 || evs[len(evs)-1].Kind != checkers.KindDone || !evs[len(evs)-1].OK {
		t.Fatalf("resumed session's events %+v, want done ok", evs)
	}
}

// While the driver reads nothing, the shim fills the ring's shim→driver half (64 KB) with the
// events of 3,000 chunks and waits for room; the driver then reads every one, in order. The
// chunks are written by hand on a RawChannel, as hydra bench checker's raw client writes them.
func TestRingHoldsEventsWhileTheDriverIsBehind(t *testing.T) {
	shim, err := findShim("")
	if err != nil {
		t.Fatal(err)
	}
	ch, theirs, ring, err := NewRawChannel(DefaultSpin, false)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	if err := ch.SetReadTimeout(hangGuard); err != nil {
		t.Fatal(err)
	}
	lr, lw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer lw.Close()
	cmd := ShimProcess{
		Channel: theirs, Lifeline: lr, Ring: ring, Session: 1, File: "events.c", Flags: []string{"-xc"},
	}.Command(context.Background(), shim)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	theirs.Close()
	ring.Close()
	lr.Close()
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	const n = 3000
	var text strings.Builder
	for i := range n {
		chunk := fmt.Sprintf("int e%d;\n", i)
		text.WriteString(chunk)
		if _, err := fmt.Fprintf(ch, "{\"op\":\"submit\",\"len\":%d}\n%s", len(chunk), chunk); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
	}
	if _, err := ch.Write([]byte("{\"op\":\"eos\"}\n")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // let the shim run into the full ring
	sc := bufio.NewScanner(ch)
	progress, lastOff, bytes := 0, 0, 0
	for sc.Scan() {
		line := sc.Text()
		bytes += len(line) + 1
		if !strings.Contains(line, `"event":"progress"`) {
			if strings.Contains(line, `"event":"done"`) {
				break
			}
			continue
		}
		i := strings.Index(line, `"off":`)
		off, _ := strconv.Atoi(line[i+6 : i+6+strings.IndexAny(line[i+6:], ",}")])
		if off <= lastOff {
			t.Fatalf("progress %d at %d after %d", progress, off, lastOff)
		}
		lastOff = off
		progress++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if progress != n || lastOff != text.Len() || bytes <= ringUpCap {
		t.Fatalf("%d progress events up to %d (%d bytes of events); want %d up to %d, more than the ring's %d bytes",
			progress, lastOff, bytes, n, text.Len(), ringUpCap)
	}
}
