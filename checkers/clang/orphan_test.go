package clang

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
)

// orphanChildEnv makes the test binary act as the doomed owner process of
// TestNoOrphansAfterKill9 instead of running tests.
const orphanChildEnv = "HYDRA_CLANG_ORPHAN_CHILD"

func init() {
	if os.Getenv(orphanChildEnv) != "" {
		orphanChild()
	}
}

// orphanChild starts every kind of shim process (an active root session, a dormant checkpoint,
// a session resumed from it, a nested checkpoint of that session, a root session blocked
// mid-input), prints their pids and waits to be killed.
func orphanChild() {
	fail := func(err error) {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	c, err := New(Options{})
	if err != nil {
		fail(err)
	}
	ctx := context.Background()
	opts := checkers.SessionOptions{Filename: "orphan.cpp"}
	await := func(s checkers.Session, kind string) checkers.Event {
		for ev := range s.Events() {
			if ev.Kind == kind {
				return ev
			}
		}
		fail(fmt.Errorf("session %d ended before %s", s.ID(), kind))
		return checkers.Event{}
	}
	a, err := c.Start(ctx, opts)
	if err != nil {
		fail(err)
	}
	if err := a.Submit("int x = 1;\n", checkers.SubmitOptions{Checkpoint: true}); err != nil {
		fail(err)
	}
	cp := c.AdoptCheckpoint(await(a, checkers.KindChkpt).ID)
	b, err := c.Resume(ctx, cp)
	if err != nil {
		fail(err)
	}
	bInit := await(b, checkers.KindInit)
	if err := b.Submit("int y = 2;\n", checkers.SubmitOptions{Checkpoint: true}); err != nil {
		fail(err)
	}
	nested := await(b, checkers.KindChkpt)
	d, err := c.Start(ctx, opts)
	if err != nil {
		fail(err)
	}
	if err := d.Submit("int z = 3;\n", checkers.SubmitOptions{}); err != nil {
		fail(err)
	}
	await(d, checkers.KindProgress)
	// A root session and a resumed one, each in the middle of parsing a 5 MB chunk.
	e, err := c.Start(ctx, opts)
	if err != nil {
		fail(err)
	}
	f, err := c.Resume(ctx, cp)
	if err != nil {
		fail(err)
	}
	fInit := await(f, checkers.KindInit)
	big := slowChunk(5 << 20)
	for _, s := range []checkers.Session{e, f} {
		if err := s.Submit(big, checkers.SubmitOptions{}); err != nil {
			fail(err)
		}
	}
	fmt.Println("PIDS", a.(*Session).PID(), cp.PID(), bInit.PID, nested.PID, d.(*Session).PID(),
		e.(*Session).PID(), fInit.PID)
	time.Sleep(time.Hour)
	os.Exit(0)
}

// slowChunk returns about size bytes of C++ whose parse takes far longer than any test waits:
// each line asks the constant evaluator for a 200,000-step loop.
func slowChunk(size int) string {
	var b strings.Builder
	b.WriteString("constexpr long spin(long n) { long s = 0; for (long i = 0; i < 200000; ++i) s += i ^ n; return s; }\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "constexpr long v%d = spin(%d);\n", i, i)
	}
	return b.String()
}

// After kill -9 of the Go process that owns them, every shim process ends: active sessions,
// dormant checkpoints, resumed sessions and their nested checkpoints, and root and resumed
// sessions in the middle of parsing a 5 MB chunk (which would take hours to finish).
// The deadline is generous (a liveness check, not a speed one); the time taken is logged.
func TestNoOrphansAfterKill9(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), orphanChildEnv+"=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lineCh := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "PIDS") || strings.HasPrefix(sc.Text(), "ERROR") {
				lineCh <- sc.Text()
				return
			}
		}
		lineCh <- "ERROR child ended without printing its pids"
	}()
	var line string
	select {
	case line = <-lineCh:
	case <-time.After(hangGuard):
		t.Fatal("child printed no pids")
	}
	fields := strings.Fields(line)
	if fields[0] != "PIDS" || len(fields) != 8 {
		t.Fatalf("child: %s", line)
	}
	var pids []int
	for _, f := range fields[1:] {
		p, err := strconv.Atoi(f)
		if err != nil || p <= 0 {
			t.Fatalf("bad pid %q in %q", f, line)
		}
		if !procAlive(p) {
			t.Fatalf("process %d not alive before the kill", p)
		}
		pids = append(pids, p)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed := time.Now()
	alive := waitGone(pids, 30*time.Second)
	t.Logf("all %d shim processes gone %v after the kill", len(pids), time.Since(killed).Round(time.Millisecond))
	if len(alive) > 0 {
		for _, p := range alive {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		t.Fatalf("orphaned shim processes still alive after kill -9 of their owner: %v (of %v)", alive, pids)
	}
}

// The watchdog thread of a session ends it in the middle of a long parse as soon as its lifeline
// hangs up or its channel is closed, with no help from a parent-death signal: the shim is
// started here by hand, without one, and never reads its channel again during the parse.
func TestWatchdogEndsALongParse(t *testing.T) {
	for _, cut := range []string{"lifeline", "channel"} {
		t.Run(cut, func(t *testing.T) {
			mine, theirs, err := socketPair("test-channel", 0)
			if err != nil {
				t.Fatal(err)
			}
			defer mine.Close()
			lr, lw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer lw.Close()
			cmd := ShimProcess{
				Channel: theirs, Lifeline: lr, Session: 1, File: t.TempDir() + "/slow.cpp",
				Flags: []string{"-x", "c++"},
			}.Command(context.Background(), os.Getenv(ShimEnv))
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			theirs.Close()
			lr.Close()
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			defer cmd.Process.Kill()
			text := slowChunk(64 << 10)
			if _, err := fmt.Fprintf(mine, "{\"op\":\"submit\",\"len\":%d}\n%s", len(text), text); err != nil {
				t.Fatal(err)
			}
			// Parsing now (init is the only event before the chunk's progress, hours away).
			r := bufio.NewReader(mine)
			if l, err := r.ReadString('\n'); err != nil || !strings.Contains(l, `"init"`) {
				t.Fatalf("first event %q, %v", l, err)
			}
			time.Sleep(300 * time.Millisecond)
			select {
			case err := <-exited:
				t.Fatalf("shim ended before the cut: %v", err)
			default:
			}
			if cut == "lifeline" {
				lw.Close()
			} else {
				mine.Close()
			}
			select {
			case <-exited:
			case <-time.After(hangGuard):
				t.Fatalf("shim still parsing %v after its %s was cut", hangGuard, cut)
			}
			if cut == "lifeline" {
				if rest, _ := io.ReadAll(r); strings.Contains(string(rest), "progress") {
					t.Fatalf("the chunk finished parsing (%q): the test proves nothing", rest)
				}
			}
		})
	}
}
