package clang

import (
	"bufio"
	"context"
	"fmt"
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
	fmt.Println("PIDS", a.(*Session).PID(), cp.PID(), bInit.PID, nested.PID, d.(*Session).PID())
	time.Sleep(time.Hour)
	os.Exit(0)
}

// After kill -9 of the Go process that owns them, every shim process ends: active sessions,
// dormant checkpoints, resumed sessions and their nested checkpoints.
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
	if fields[0] != "PIDS" || len(fields) != 6 {
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
	if alive := waitGone(pids, 30*time.Second); len(alive) > 0 {
		for _, p := range alive {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		t.Fatalf("orphaned shim processes still alive after kill -9 of their owner: %v (of %v)", alive, pids)
	}
}
