package clang

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/wholefile"
)

// TestMain makes sure the shim the tests run is built from the current sources (make is a no-op
// when it is up to date), unless $HYDRA_CLANG_SHIM names one.
func TestMain(m *testing.M) {
	if os.Getenv(orphanChildEnv) != "" {
		os.Exit(m.Run())
	}
	if os.Getenv(ShimEnv) == "" {
		root, err := repoRoot()
		if err != nil {
			fmt.Fprintln(os.Stderr, "clang tests:", err)
			os.Exit(2)
		}
		out := filepath.Join(root, "bin", "hydra-clang-shim")
		mk := exec.Command("make", "-s", "-C", filepath.Join(root, "checkers", "clang", "shim"), "OUT="+out)
		mk.Stdout, mk.Stderr = os.Stderr, os.Stderr
		if err := mk.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "clang tests: building the shim failed (needs clang-19, libclang-cpp19-dev, llvm-19-dev; see README):", err)
			os.Exit(2)
		}
		os.Setenv(ShimEnv, out)
	}
	os.Exit(m.Run())
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

func newChecker(t testing.TB, opts Options) *Checker {
	t.Helper()
	c, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// hangGuard bounds how long a test waits for a session to finish: a hang is a failure, not a
// slow machine, so the bound is generous.
const hangGuard = 90 * time.Second

// collect reads events until the channel closes.
func collect(t testing.TB, s checkers.Session) []checkers.Event {
	t.Helper()
	var evs []checkers.Event
	timer := time.NewTimer(hangGuard)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-s.Events():
			if !ok {
				return evs
			}
			evs = append(evs, ev)
		case <-timer.C:
			t.Fatalf("session %d: no end after %v; events so far: %+v", s.ID(), hangGuard, evs)
		}
	}
}

// waitFor reads events until one of kind arrives (returned) or the session ends (fatal).
func waitFor(t testing.TB, s checkers.Session, kind string) checkers.Event {
	t.Helper()
	timer := time.NewTimer(hangGuard)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-s.Events():
			if !ok {
				t.Fatalf("session %d ended before a %s event", s.ID(), kind)
			}
			if ev.Kind == kind {
				return ev
			}
			if ev.Kind == checkers.KindCrash {
				t.Fatalf("session %d crashed waiting for %s: %s", s.ID(), kind, ev.Diag)
			}
		case <-timer.C:
			t.Fatalf("session %d: no %s event after %v", s.ID(), kind, hangGuard)
		}
	}
}

// lines splits text into complete lines (the last may lack its newline).
func lines(text string) []string {
	var out []string
	for len(text) > 0 {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			out = append(out, text)
			break
		}
		out = append(out, text[:i+1])
		text = text[i+1:]
	}
	return out
}

// submitAll submits each line as a chunk, then EOS.
func submitAll(t testing.TB, s checkers.Session, chunks []string) {
	t.Helper()
	for _, ch := range chunks {
		if err := s.Submit(ch, checkers.SubmitOptions{Cat: checkers.BoundaryLine}); err != nil {
			t.Fatalf("Submit: %v", err)
		}
	}
	if err := s.EOS(); err != nil {
		t.Fatalf("EOS: %v", err)
	}
}

// verdict is what a check concluded: accepted or not, and the first error.
type verdict struct {
	OK   bool
	File string // whole-file clang only: the file of the first error
	Line int
	Col  int
	Diag string
}

func (v verdict) String() string {
	if v.OK {
		return "accepted"
	}
	return fmt.Sprintf("rejected at %d:%d: %s", v.Line, v.Col, v.Diag)
}

// sessionVerdict reduces a session's events to a verdict; it fails on a crash or a missing done.
func sessionVerdict(t testing.TB, evs []checkers.Event) (verdict, *checkers.Event) {
	t.Helper()
	var v verdict
	var first *checkers.Event
	var done bool
	for i, ev := range evs {
		switch ev.Kind {
		case checkers.KindError:
			if first == nil {
				first = &evs[i]
			}
		case checkers.KindDone:
			done = true
			v.OK = ev.OK
		case checkers.KindCrash:
			t.Fatalf("session crashed: %s (events %+v)", ev.Diag, evs)
		}
	}
	if !done {
		t.Fatalf("no done event: %+v", evs)
	}
	if first != nil {
		v.Line, v.Col, v.Diag = first.Line, first.Col, first.Diag
	}
	return v, first
}

// wholeFile runs whole-file clang-19 (checkers/wholefile) on text written to dir/name with the
// flags the checker resolves, and returns its verdict: the first error, in whatever file, without
// clang's " [-W…]" option suffix.
func wholeFile(t testing.TB, dir, name string, flags []string, text string) verdict {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	resolved := resolve(checkers.SessionOptions{Flags: flags, Filename: filepath.Join(dir, name)}).flags
	w, err := wholefile.Check(ctx, text, wholefile.Options{Dir: dir, Name: name,
		Flags: append([]string{"-fno-diagnostics-show-option"}, resolved...)})
	if err != nil {
		t.Fatal(err)
	}
	v := verdict{OK: w.OK}
	if d, ok := w.First(); ok {
		v.File, v.Line, v.Col, v.Diag = d.File, d.Line, d.Col, d.Msg
	}
	return v
}

// procAlive reports whether pid is a live (not zombie) process.
func procAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return false
	}
	return s[i+2] != 'Z' && s[i+2] != 'X'
}

// waitGone waits until every pid is dead or a zombie; it returns those still alive.
func waitGone(pids []int, within time.Duration) []int {
	deadline := time.Now().Add(within)
	for {
		var alive []int
		for _, p := range pids {
			if procAlive(p) {
				alive = append(alive, p)
			}
		}
		if len(alive) == 0 || time.Now().After(deadline) {
			return alive
		}
		time.Sleep(20 * time.Millisecond)
	}
}
