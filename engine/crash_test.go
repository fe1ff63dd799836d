package engine

import (
	"context"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/clang"
	"github.com/hydra-lsp/hydra/engine/model/modeltest"
)

// crashMarker in a submitted chunk makes segvChecker crash the real shim process checking it.
const crashMarker = "CRASH_THE_CHECKER"

// segvChecker wraps the real Clang checker; when a chunk containing crashMarker is submitted, it
// sends SIGSEGV to the shim process of that session, which dies through its real crash path
// (its handler reports "checker crashed: signal 11" on the channel). No text is known to crash
// the shim any more, so the crash is brought from outside; everything after it is real.
type segvChecker struct{ checkers.Checker }

// segvSession passes events through, noting how far progress has gone and whether the session
// crashed, so that the crash comes where a real one would: after everything before the chunk
// passed, before the chunk itself was reported checked.
type segvSession struct {
	checkers.Session
	events   chan checkers.Event
	progress atomic.Int64
	crashed  atomic.Bool
}

func wrapSegv(s checkers.Session) *segvSession {
	w := &segvSession{Session: s, events: make(chan checkers.Event, 1024)}
	w.progress.Store(-1)
	go func() {
		defer close(w.events)
		for ev := range s.Events() {
			if ev.Kind == checkers.KindProgress || ev.Kind == checkers.KindInit {
				w.progress.Store(int64(ev.Off))
			}
			if ev.Kind == checkers.KindCrash {
				w.crashed.Store(true)
			}
			w.events <- ev
		}
	}()
	return w
}

func (c segvChecker) Start(ctx context.Context, opts checkers.SessionOptions) (checkers.Session, error) {
	s, err := c.Checker.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	return wrapSegv(s), nil
}

func (c segvChecker) Resume(ctx context.Context, cp checkers.Checkpoint) (checkers.Session, error) {
	s, err := c.Checker.Resume(ctx, cp)
	if err != nil {
		return nil, err
	}
	return wrapSegv(s), nil
}

func (s *segvSession) Events() <-chan checkers.Event { return s.events }

func (s *segvSession) Submit(text string, opts checkers.SubmitOptions) error {
	if !strings.Contains(text, crashMarker) {
		return s.Session.Submit(text, opts)
	}
	// Crash the shim after everything before this chunk passed and before the chunk's own
	// progress can be reported: killed any later, a fast shim may already have checked the
	// chunk, and the crash would (rightly) be put on the line after it.
	start := int64(len(s.Text()))
	cs := s.Session.(*clang.Session)
	deadline := time.Now().Add(time.Minute)
	for (cs.PID() == 0 || s.progress.Load() < start) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if pid := cs.PID(); pid > 0 {
		_ = syscall.Kill(pid, syscall.SIGSEGV)
	}
	for !s.crashed.Load() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	return s.Session.Submit(text, opts)
}

// A checker crash reaches the policy as an error node with feedback naming the line ("checker
// crashed at line N"), and the repair the feedback asks for is accepted: no silent retry of the
// same text.
func TestCheckerCrashIsFeedback(t *testing.T) {
	bad := "  int sum = 0;\n  for (int x : v) sum += x; // " + crashMarker + "\n  return sum;\n}\n"
	fix := "  for (int x : v) sum += x;\n  return sum;\n}\n" // from just before the crash line
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
		rule("checker crashed at line", fix),
		rule("", bad),
	}})
	res, err := Search(context.Background(), segvChecker{newChecker(t)}, newClient(t, srv.URL), Request{
		Prefix: sumPrefix, Filename: "sum.cc", Flags: []string{"-std=c++17"}, Model: "m",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Text != "  int sum = 0;\n"+fix {
		t.Fatalf("ok=%v reason=%s text=%q, want the repair accepted", res.OK, res.Reason, res.Text)
	}
	crashLine := strings.Count(sumPrefix, "\n") + 2
	var errNode *TraceNode
	for i, n := range res.Trace.Nodes {
		if n.Kind == "error" {
			errNode = &res.Trace.Nodes[i]
		}
	}
	if errNode == nil || errNode.Cat != CatCheckerCrash || errNode.Line != crashLine ||
		!strings.Contains(errNode.Diag, "checker crashed at line") || !strings.Contains(errNode.Diag, "signal 11") {
		t.Fatalf("error node %+v, want a %s error at line %d naming the signal", errNode, CatCheckerCrash, crashLine)
	}
	calls := srv.Calls()
	if len(calls) != 2 {
		t.Fatalf("%d model calls, want the attempt and one repair", len(calls))
	}
	if _, fb := StripFeedback(calls[1].Prompt); !strings.Contains(fb, "checker crashed at line") {
		t.Fatalf("repair feedback %q does not tell the model about the crash", fb)
	}
}
