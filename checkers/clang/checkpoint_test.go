package clang

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
)

// takeCheckpoint runs a session over prefix (one chunk per line) asking for a checkpoint at its
// end, and returns the adopted checkpoint; the session itself is closed.
func takeCheckpoint(t *testing.T, c *Checker, opts checkers.SessionOptions, prefix string) *Checkpoint {
	t.Helper()
	s, err := c.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ls := lines(prefix)
	for i, l := range ls {
		if err := s.Submit(l, checkers.SubmitOptions{Cat: checkers.BoundaryLine, Checkpoint: i == len(ls)-1}); err != nil {
			t.Fatal(err)
		}
	}
	ev := waitFor(t, s, checkers.KindChkpt)
	if ev.Off != len(prefix) {
		t.Fatalf("chkpt at %d, want %d", ev.Off, len(prefix))
	}
	cp := c.AdoptCheckpoint(ev.ID)
	if cp == nil {
		t.Fatalf("Adopt(%d) = nil", ev.ID)
	}
	if cp.Text() != prefix || cp.Off() != len(prefix) {
		t.Fatalf("checkpoint holds %d bytes %q, want the prefix", cp.Off(), cp.Text())
	}
	return cp
}

// A checkpoint resumed with different continuations reports, each time, what whole-file clang
// reports for prefix+continuation: same verdict, same first error line and message.
func TestResumedCheckpointMatchesWholeFileClang(t *testing.T) {
	dir := t.TempDir()
	c := newChecker(t, Options{})
	const prefix = `#include <vector>
#include <string>
struct Point { int x, y; };
static int twice(int v) { return 2 * v; }
`
	conts := []struct {
		name string
		text string
		ok   bool
	}{
		{"accepted", "int main() {\n  std::vector<Point> ps{{1, 2}};\n  return twice(ps[0].x);\n}\n", true},
		{"undeclared identifier", "int main() {\n  int a = 1;\n  return a + b;\n}\n", false},
		{"no member", "int main() {\n  Point p{1, 2};\n  return p.z;\n}\n", false},
		{"wrong argument count", "int main() {\n  return twice(1, 2);\n}\n", false},
		{"missing semicolon", "int main() {\n  int a = 1\n  return a;\n}\n", false},
		{"type mismatch", "int main() {\n  std::string s = 42;\n  return 0;\n}\n", false},
		{"error in inline member reported at the class end", "struct S {\n  int f() { return missing; }\n  int g() { return 1; }\n};\nint main() { return S().g(); }\n", false},
		{"unterminated block comment at end of input", "int main() { return 0; }\n/* never closed\n", false},
	}
	opts := checkers.SessionOptions{Filename: filepath.Join(dir, "prog.cpp"), Flags: []string{"-std=c++17"}}
	cp := takeCheckpoint(t, c, opts, prefix)
	for _, cs := range conts {
		t.Run(cs.name, func(t *testing.T) {
			want := wholeFile(t, dir, "prog.cpp", opts.Flags, prefix+cs.text)
			if want.OK != cs.ok {
				t.Fatalf("test case broken: whole-file clang says %v", want)
			}
			// Twice from the same checkpoint: the first resume must not disturb the second.
			for round := 0; round < 2; round++ {
				s, err := c.Resume(context.Background(), cp)
				if err != nil {
					t.Fatal(err)
				}
				submitAll(t, s, lines(cs.text))
				evs := collect(t, s)
				if evs[0].Kind != checkers.KindInit || evs[0].Parent != cp.ID() || evs[0].Off != len(prefix) {
					t.Fatalf("first event %+v, want init from checkpoint %d at %d", evs[0], cp.ID(), len(prefix))
				}
				got, first := sessionVerdict(t, evs)
				if got.OK != want.OK || got.Line != want.Line || got.Diag != want.Diag {
					t.Fatalf("round %d: resumed session says %v, whole-file clang says %v", round, got, want)
				}
				if first != nil {
					// The offset must be inside the reported line of the whole text.
					full := prefix + cs.text
					if first.Off < 0 || first.Off > len(full) {
						t.Fatalf("error offset %d outside the text", first.Off)
					}
					if line := 1 + strings.Count(full[:first.Off], "\n"); line != got.Line {
						t.Fatalf("error offset %d is on line %d, event says line %d", first.Off, line, got.Line)
					}
				}
			}
		})
	}
}

// Checkpoints of the same prefix are shared and reference-counted; the last release ends the
// dormant process, and a freed checkpoint cannot be resumed.
func TestCheckpointSharingRefcountAndFree(t *testing.T) {
	c := newChecker(t, Options{})
	opts := checkers.SessionOptions{Filename: "dedup.cpp"}
	const prefix = "#include <cstdio>\nint counter = 0;\n"

	a := takeCheckpoint(t, c, opts, prefix)
	if a.Refs() != 1 {
		t.Fatalf("new checkpoint has %d refs, want 1", a.Refs())
	}
	if !procAlive(a.PID()) {
		t.Fatalf("dormant process %d not alive", a.PID())
	}
	// A second session reaching the same prefix gets the same checkpoint, not a new process.
	b := takeCheckpoint(t, c, opts, prefix)
	if b != a {
		t.Fatalf("same prefix gave checkpoint %d (pid %d), want shared %d (pid %d)", b.ID(), b.PID(), a.ID(), a.PID())
	}
	if a.Refs() != 2 {
		t.Fatalf("shared checkpoint has %d refs, want 2", a.Refs())
	}
	// Different flags: a different checkpoint.
	other := takeCheckpoint(t, c, checkers.SessionOptions{Filename: "dedup.cpp", Flags: []string{"-DX=1"}}, prefix)
	if other == a {
		t.Fatal("different flags shared a checkpoint")
	}
	// Nearest finds the longest checkpointed prefix of a longer text.
	n := c.NearestCheckpoint(opts, prefix+"int main() { return counter; }\n")
	if n != a {
		t.Fatalf("Nearest = %v, want checkpoint %d", n, a.ID())
	}
	if a.Refs() != 3 {
		t.Fatalf("after Nearest %d refs, want 3", a.Refs())
	}
	if c.NearestCheckpoint(opts, "int unrelated;\n") != nil {
		t.Fatal("Nearest found a checkpoint for an unrelated text")
	}
	pid := a.PID()
	a.Release()
	a.Release()
	if !procAlive(pid) || a.Refs() != 1 {
		t.Fatalf("after 2 of 3 releases: alive=%v refs=%d, want alive with 1 ref", procAlive(pid), a.Refs())
	}
	// Still resumable while referenced.
	s, err := c.Resume(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	submitAll(t, s, []string{"int main() { return counter; }\n"})
	if v, _ := sessionVerdict(t, collect(t, s)); !v.OK {
		t.Fatalf("resume of shared checkpoint: %v", v)
	}
	a.Release()
	if alive := waitGone([]int{pid}, 20*time.Second); len(alive) > 0 {
		t.Fatalf("freed checkpoint process %d still alive", pid)
	}
	a.Release() // extra releases are harmless
	if _, err := c.Resume(context.Background(), a); err == nil {
		t.Fatal("resuming a freed checkpoint succeeded")
	}
	if c.AdoptCheckpoint(a.ID()) != nil {
		t.Fatal("freed checkpoint still adoptable")
	}
	// Close ends the remaining one.
	opid := other.PID()
	c.Close()
	if alive := waitGone([]int{opid}, 20*time.Second); len(alive) > 0 {
		t.Fatalf("checkpoint process %d alive after Checker.Close", opid)
	}
}

// Checkpoints taken along a session at every few lines each resume to the right state: the
// continuation after any of them gives the verdict of the whole text.
func TestCheckpointsAlongASession(t *testing.T) {
	dir := t.TempDir()
	c := newChecker(t, Options{})
	name := filepath.Join(dir, "along.c")
	text := "#include <stdio.h>\n#define SQ(x) ((x) * (x))\nstatic int a = 3;\nint f(int v) {\n  return SQ(v) + a;\n}\nint main(void) {\n  printf(\"%d\\n\", f(__LINE__));\n  return 0;\n}\n"
	ls := lines(text)
	s, err := c.Start(context.Background(), checkers.SessionOptions{Filename: name})
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range ls {
		if err := s.Submit(l, checkers.SubmitOptions{Cat: checkers.BoundaryLine, Checkpoint: i%3 == 0}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.EOS(); err != nil {
		t.Fatal(err)
	}
	var cps []*Checkpoint
	evs := collect(t, s)
	for _, ev := range evs {
		if ev.Kind == checkers.KindChkpt {
			cps = append(cps, c.AdoptCheckpoint(ev.ID))
		}
	}
	if v, _ := sessionVerdict(t, evs); !v.OK {
		t.Fatalf("whole session: %v", v)
	}
	if len(cps) != 4 {
		t.Fatalf("got %d checkpoints, want 4", len(cps))
	}
	// Breaking the text after each checkpoint: an error on a later line, with the line right
	// (__LINE__ and #line bookkeeping survive the resume).
	for _, cp := range cps {
		rest := text[cp.Off():]
		broken := strings.Replace(rest, "return 0;", "return zero;", 1)
		want := wholeFile(t, dir, "along.c", nil, cp.Text()+broken)
		r, err := c.Resume(context.Background(), cp)
		if err != nil {
			t.Fatal(err)
		}
		submitAll(t, r, lines(broken))
		got, _ := sessionVerdict(t, collect(t, r))
		if got.OK != want.OK || got.Line != want.Line || got.Diag != want.Diag {
			t.Fatalf("resumed at %d: %v, whole-file clang: %v", cp.Off(), got, want)
		}
		cp.Release()
	}
}

// Two sessions that reach the same prefix at the same time both get a checkpoint from their
// shim; the driver keeps one, frees the other's process and hands both the same checkpoint.
func TestConcurrentCheckpointsOfOnePrefixAreMerged(t *testing.T) {
	c := newChecker(t, Options{})
	opts := checkers.SessionOptions{Filename: "race.cpp"}
	const prefix = "#include <vector>\n#include <map>\n"
	var ss []checkers.Session
	for i := 0; i < 2; i++ {
		s, err := c.Start(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ss = append(ss, s)
	}
	// Both ask before either checkpoint exists (parsing the headers takes a while).
	for _, s := range ss {
		if err := s.Submit(prefix, checkers.SubmitOptions{Checkpoint: true}); err != nil {
			t.Fatal(err)
		}
	}
	a, b := waitFor(t, ss[0], checkers.KindChkpt), waitFor(t, ss[1], checkers.KindChkpt)
	if a.ID != b.ID || a.PID != b.PID {
		t.Fatalf("chkpt events %+v and %+v name different checkpoints", a, b)
	}
	var dup int
	for _, ev := range []checkers.Event{a, b} {
		if p, ok := ev.Meta["freed_duplicate_pid"].(int); ok {
			dup = p
		}
	}
	if dup == 0 {
		t.Fatalf("neither event reports a merged duplicate: %+v %+v (did one session see the other's checkpoint at submit time?)", a, b)
	}
	if alive := waitGone([]int{dup}, 20*time.Second); len(alive) > 0 {
		t.Fatalf("duplicate checkpoint process %d still alive", dup)
	}
	cp := c.AdoptCheckpoint(a.ID)
	if c.AdoptCheckpoint(b.ID) != cp || cp.Refs() != 2 {
		t.Fatalf("merged checkpoint has %d refs, want 2 (one per event)", cp.Refs())
	}
	cp.Release()
	cp.Release()
	if alive := waitGone([]int{cp.PID()}, 20*time.Second); len(alive) > 0 {
		t.Fatalf("merged checkpoint process %d alive after its last release", cp.PID())
	}
}

// A session closed before its consumer read a chkpt event must not leave that checkpoint
// behind: the event carried a reference that nobody will take (Session.Events), so Close
// releases it and the checkpoint's process ends, long before the checker closes. The event
// waits either in the Events channel or, once 64 unread events fill that, in the session's queue.
func TestCloseReleasesUnreadCheckpoints(t *testing.T) {
	c := newChecker(t, Options{})
	for _, tc := range []struct {
		what   string
		before int // chunks submitted (and never read) before the checkpointed one
	}{{"in the channel", 0}, {"queued behind a full channel", 70}} {
		// A file of its own for each case: the same prefix would share the other case's checkpoint.
		name := strings.ReplaceAll(tc.what, " ", "-") + ".c"
		s, err := c.StartSession(t.Context(), checkers.SessionOptions{Filename: name, Flags: []string{"-xc", "-std=c11"}})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < tc.before; i++ {
			if err := s.Submit(fmt.Sprintf("int v%d;\n", i), checkers.SubmitOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Submit("int a;\n", checkers.SubmitOptions{Checkpoint: true}); err != nil {
			t.Fatal(err)
		}
		// Wait until the checker has registered the checkpoint (its event is then waiting for
		// the consumer, who never reads it).
		var pid int
		for deadline := time.Now().Add(hangGuard); pid == 0; time.Sleep(10 * time.Millisecond) {
			c.mu.Lock()
			for _, cp := range c.cps {
				if cp.session == s.ID() && cp.refs > 0 {
					pid = cp.pid
				}
			}
			c.mu.Unlock()
			if pid == 0 && time.Now().After(deadline) {
				t.Fatalf("%s: no checkpoint registered after %v", tc.what, hangGuard)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if left := waitGone([]int{pid}, hangGuard); len(left) > 0 {
			t.Errorf("%s: the checkpoint of a closed session whose chkpt event was never read still lives (pid %d)", tc.what, pid)
		}
		c.mu.Lock()
		for _, cp := range c.cps {
			if cp.session == s.ID() && cp.refs > 0 {
				t.Errorf("%s: checkpoint %d still holds %d references", tc.what, cp.id, cp.refs)
			}
		}
		c.mu.Unlock()
	}
}
