package typescript

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
)

// newChecker returns a Checker on the installed compiler, closed when the test ends.
func newChecker(t *testing.T) *Checker {
	t.Helper()
	ck, err := New(Options{})
	if err != nil {
		t.Fatalf("%v (scripts/install-deps.sh installs TypeScript %s)", err, Version)
	}
	t.Cleanup(func() { ck.Close() })
	return ck
}

// collect reads a session's events until its channel closes (or a minute passes).
func collect(t *testing.T, s checkers.Session) []checkers.Event {
	t.Helper()
	var evs []checkers.Event
	// A hang is a minute without an event: a long file streamed line by line on a loaded
	// machine takes longer than that in all.
	timer := time.NewTimer(time.Minute)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-s.Events():
			if !ok {
				return evs
			}
			evs = append(evs, ev)
			timer.Reset(time.Minute)
		case <-timer.C:
			t.Fatalf("session hangs (no event for a minute); events so far: %+v", evs)
		}
	}
}

// submitAll submits each of texts with its options (in a goroutine), then EOS, and returns the
// session's events.
func submitAll(t *testing.T, s checkers.Session, texts []string, opts []checkers.SubmitOptions) []checkers.Event {
	t.Helper()
	go func() {
		for i, text := range texts {
			if err := s.Submit(text, opts[i]); err != nil {
				return
			}
		}
		s.EOS()
	}()
	return collect(t, s)
}

// streamLines submits text line by line (a checkpoint after every line when cp), then EOS, and
// returns the session's events.
func streamLines(t *testing.T, ck *Checker, s checkers.Session, text string, cp bool) []checkers.Event {
	t.Helper()
	var texts []string
	var opts []checkers.SubmitOptions
	for _, line := range strings.SplitAfter(text, "\n") {
		if line != "" {
			texts, opts = append(texts, line), append(opts, checkers.SubmitOptions{Checkpoint: cp})
		}
	}
	evs := submitAll(t, s, texts, opts)
	for _, ev := range evs {
		if ev.Kind == checkers.KindChkpt {
			if c := ck.Adopt(ev.ID); c != nil {
				c.Release()
			}
		}
	}
	return evs
}

// checkText checks text as file name in a fresh temporary directory (so that no tsconfig.json
// above it applies) and returns the events.
func checkText(t *testing.T, ck *Checker, dir, name, text string) []checkers.Event {
	t.Helper()
	file := filepath.Join(dir, name)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ck.Start(context.Background(), checkers.SessionOptions{Filename: file})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return streamLines(t, ck, s, text, false)
}

// firstError returns the error event earliest in the text (nil if none) and the done verdict.
// An error decided only at the end of input (a name never declared) comes after the errors
// found while streaming, but may lie before them, as tsc's first error does.
func firstError(evs []checkers.Event) (*checkers.Event, bool) {
	var first *checkers.Event
	ok := false
	for i := range evs {
		switch evs[i].Kind {
		case checkers.KindError:
			if first == nil || evs[i].Off < first.Off {
				first = &evs[i]
			}
		case checkers.KindDone:
			ok = evs[i].OK
		}
	}
	return first, ok
}
