package clang

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
)

// Bad input gets a verdict (the one whole-file clang gives), never a hang or a crash of the
// caller, and the bytes reach Clang unchanged.
func TestBadInputGetsAVerdict(t *testing.T) {
	dir := t.TempDir()
	c := newChecker(t, Options{})
	rng := rand.New(rand.NewPCG(1, 2))
	binary := make([]byte, 8<<10)
	for i := range binary {
		binary[i] = byte(rng.UintN(256))
	}
	var big strings.Builder
	big.WriteString("int big[] = {")
	for big.Len() < 5<<20 {
		big.WriteString("1234567,")
	}
	big.WriteString("0};\nint main() { return big[0] - 1234567; }\n")

	cases := []struct {
		name string
		text string
		// sameDiag: compare the message too (off for binary input, where Clang quotes the bytes
		// and JSON must replace invalid UTF-8).
		sameDiag bool
	}{
		{"binary data", string(binary), false},
		{"NUL bytes in code", "int main() {\x00 return 0; }\n", true},
		{"invalid UTF-8 in a string literal", "const char *s = \"\xff\xfe\xc3\";\nint main() { return 0; }\n", true},
		{"invalid UTF-8 in code", "int \xff\xfe = 1;\nint main() { return 0; }\n", false},
		{"a 5 MB line", big.String(), true},
		{"unterminated comment at end of input", "int main() { return 0; }\n/* the model stopped here\n", true},
		{"unterminated string at end of input", "const char *s = \"abc\n", true},
		{"empty input", "", true},
		{"no final newline", "int main() { return 0; }", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := filepath.Join(dir, "bad.cpp")
			want := wholeFile(t, dir, "bad.cpp", nil, tc.text)
			s, err := c.StartSession(context.Background(), checkers.SessionOptions{Filename: name})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			submitAll(t, s, lines(tc.text))
			got, first := sessionVerdict(t, collect(t, s))
			if got.OK != want.OK || got.Line != want.Line || (tc.sameDiag && got.Diag != want.Diag) {
				t.Fatalf("session: %v; whole-file clang: %v", got, want)
			}
			if first != nil && (first.Diag == "" || first.Cat == "") {
				t.Fatalf("error without message or category: %+v", first)
			}
			if s.Text() != tc.text {
				t.Fatalf("session text differs from the input (%d vs %d bytes)", len(s.Text()), len(tc.text))
			}
		})
	}
}

// A shim that dies mid-session (killed, or crashing) ends the session with a clear crash event;
// the caller goes on, and further submits fail cleanly.
func TestShimDeathMidSession(t *testing.T) {
	c := newChecker(t, Options{})
	for _, tc := range []struct {
		name   string
		sig    syscall.Signal
		resume bool
		want   string
	}{
		{"root session killed", syscall.SIGKILL, false, "died without finishing: signal: killed"},
		{"root session segfault", syscall.SIGSEGV, false, "checker crashed: signal 11"},
		{"resumed session killed", syscall.SIGKILL, true, "ended without finishing"},
		{"resumed session segfault", syscall.SIGSEGV, true, "checker crashed: signal 11"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s *Session
			var err error
			if tc.resume {
				cp := takeCheckpoint(t, c, checkers.SessionOptions{Filename: "die.cpp"}, "int before = 1;\n")
				defer cp.Release()
				s, err = c.ResumeSession(context.Background(), cp)
			} else {
				s, err = c.StartSession(context.Background(), checkers.SessionOptions{Filename: "die.cpp"})
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Submit("int x = 1;\n", checkers.SubmitOptions{}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, s, checkers.KindProgress)
			if err := syscall.Kill(s.PID(), tc.sig); err != nil {
				t.Fatal(err)
			}
			ev := waitFor(t, s, checkers.KindCrash)
			if !strings.Contains(ev.Diag, tc.want) {
				t.Fatalf("crash diag %q, want it to say %q", ev.Diag, tc.want)
			}
			if _, ok := <-s.Events(); ok {
				t.Fatal("events after the crash event")
			}
			// Submits after the death fail without blocking or panicking.
			deadline := time.Now().Add(hangGuard)
			for time.Now().Before(deadline) {
				err = s.Submit("int y;\n", checkers.SubmitOptions{})
				if err != nil {
					break
				}
			}
			if !errors.Is(err, checkers.ErrClosed) {
				t.Fatalf("Submit after crash: %v, want ErrClosed", err)
			}
		})
	}
	// The checker still works afterwards.
	if v, _ := sessionVerdict(t, run(t, c, checkers.SessionOptions{Filename: "after.cpp"}, "int main() { return 0; }\n")); !v.OK {
		t.Fatalf("after crashes: %v", v)
	}
}
