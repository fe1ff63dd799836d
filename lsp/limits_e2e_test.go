package lsp_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/lsp"
)

// vmHWM reads a process's peak resident memory in KiB from /proc/PID/status.
func vmHWM(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatalf("VmHWM line %q: %v", line, err)
			}
			return kb
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// A header line with no newline for hundreds of megabytes is read and dropped, not buffered:
// the server answers with a parse error, its peak memory does not grow by the header's size,
// and it keeps serving.
func TestOversizedHeaderIsSkippedWithoutBuffering(t *testing.T) {
	cmd := exec.Command(hydraBin, "lsp")
	cmd.Env = append(os.Environ(), "HYDRA_CLANG_SHIM="+shimBin)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	logs := &lineLog{t: t}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); logs.stop() }()
	r := bufio.NewReader(stdout)
	send := func(body string) {
		t.Helper()
		if _, err := fmt.Fprintf(stdin, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
			t.Fatal(err)
		}
	}
	response := func(what string) map[string]any {
		t.Helper()
		m, err := readMessage(r)
		for err == nil && m["method"] != nil { // skip the server's notifications
			m, err = readMessage(r)
		}
		if err != nil {
			t.Fatalf("%s: no response: %v", what, err)
		}
		return m
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"capabilities":{}}}`)
	response("initialize")
	before := vmHWM(t, cmd.Process.Pid)

	const headerMB = 256
	if _, err := io.WriteString(stdin, "X-Junk: "); err != nil {
		t.Fatal(err)
	}
	junk := bytes.Repeat([]byte("a"), 1<<20)
	for range headerMB {
		if _, err := stdin.Write(junk); err != nil {
			t.Fatalf("the server stopped reading the long header: %v", err)
		}
	}
	body := `{"jsonrpc":"2.0","id":2,"method":"shutdown"}`
	if _, err := fmt.Fprintf(stdin, "\r\nContent-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		t.Fatal(err)
	}
	m := response("oversized header")
	e, _ := m["error"].(map[string]any)
	if e == nil || e["code"] != float64(-32700) || !strings.Contains(fmt.Sprint(e["message"]), "header line over the limit") {
		t.Fatalf("response %v, want a parse error naming the header limit", m)
	}
	if m["id"] != nil {
		t.Fatalf("response %v answers the skipped message's id", m)
	}
	after := vmHWM(t, cmd.Process.Pid)
	if grew := (after - before) / 1024; grew > headerMB/4 {
		t.Fatalf("peak memory grew by %d MiB (%d → %d KiB) over a %d MiB header: it was buffered", grew, before, after, headerMB)
	}

	// Still serving: the next message is answered.
	send(`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`)
	if m := response("shutdown"); fmt.Sprint(m["id"]) != "3" || m["error"] != nil {
		t.Fatalf("shutdown after the oversized header: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"exit"}`)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit status after shutdown+exit: %v", err)
	}
}

// shimChildren counts the live (not zombie) checker processes whose parent is pid: the
// sessions the server started itself (a dormant checkpoint is forked by a session's process,
// not by the server).
func shimChildren(pid int) int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(stat, ')')
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 || f[0] == "Z" || f[1] != strconv.Itoa(pid) {
			continue
		}
		if exe, _ := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); filepath.Base(exe) == filepath.Base(shimBin) {
			n++
		}
	}
	return n
}

// heavyPreamble is a preamble that takes the checker a while, made distinct by n.
func heavyPreamble(n int) string {
	return fmt.Sprintf("#include <map>\n#include <string>\n#include <vector>\n#include <algorithm>\n#define DOC_%d 1\n", n)
}

// Opening many documents with distinct preambles builds their checkpoints at most two at a
// time, and a build still queued when its document closes never starts.
func TestWarmBuildsRunTwoAtATime(t *testing.T) {
	dir := t.TempDir()
	const docs = 10
	uri := func(i int) string { return "file://" + filepath.Join(dir, fmt.Sprintf("d%d.cpp", i)) }
	built := func(c *client) int { return strings.Count(c.stderr.String(), "checkpointed in") }

	t.Run("at most two builds at once", func(t *testing.T) {
		c := startServer(t, clientOptions{})
		pid := c.cmd.Process.Pid
		for i := range docs {
			c.open(uri(i), "cpp", heavyPreamble(i)+"int x;\n")
		}
		peak := 0
		deadline := time.Now().Add(5 * time.Minute)
		for built(c) < docs {
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d preambles checkpointed in 5 minutes\n%s", built(c), docs, c.stderr.String())
			}
			peak = max(peak, shimChildren(pid))
			time.Sleep(10 * time.Millisecond)
		}
		t.Logf("%d preambles checkpointed; at most %d checker sessions of the server's at once", docs, peak)
		if peak == 0 {
			t.Fatal("never saw a checker session: the count does not measure what it should")
		}
		if peak > 2 {
			t.Fatalf("%d checker sessions at once while %d documents warmed up, want at most 2", peak, docs)
		}
	})

	t.Run("queued builds are cancelled when their documents close", func(t *testing.T) {
		c := startServer(t, clientOptions{})
		pid := c.cmd.Process.Pid
		for i := range docs {
			c.open(uri(i), "cpp", heavyPreamble(100+i)+"int x;\n")
		}
		c.waitFor("the first warm build", time.Minute, func() bool { return shimChildren(pid) > 0 })
		for i := range docs {
			if err := c.conn.Notify(context.Background(), "textDocument/didClose",
				lsp.DidCloseTextDocumentParams{TextDocument: lsp.TextDocumentIdentifier{URI: uri(i)}}); err != nil {
				t.Fatal(err)
			}
		}
		// Let the builds that had started finish, and any queued one that was not cancelled start.
		quiet := time.Now()
		for time.Since(quiet) < 3*time.Second {
			if shimChildren(pid) > 0 {
				quiet = time.Now()
			}
			time.Sleep(20 * time.Millisecond)
		}
		n := built(c)
		t.Logf("%d of %d preambles checkpointed after their documents closed during the first build", n, docs)
		if n > docs/2 {
			t.Fatalf("%d of %d queued builds ran after their documents closed", n, docs)
		}
	})
}

// slowHeader is a header whose one constexpr call runs n loop iterations when it is parsed.
func slowHeader(n int) string {
	return fmt.Sprintf(`constexpr unsigned long long spin(unsigned long long n) {
  unsigned long long s = 0;
  for (unsigned long long i = 0; i < n; ++i) s += i ^ (s >> 3);
  return s;
}
constexpr unsigned long long slow_value = spin(%d);
`, n)
}

// The checkTimeout setting is the checker's per-chunk limit in the language server: a preamble
// that takes longer fails its warm build with a timeout error, and with no limit (0) the same
// kind of preamble, short enough to finish, is checkpointed.
func TestCheckTimeoutSetting(t *testing.T) {
	dir := t.TempDir()
	for name, n := range map[string]int{"slow.h": 200_000_000, "quick.h": 100_000} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(slowHeader(n)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	flags := []string{"-fconstexpr-steps=2000000000"}
	t.Run("a short limit ends a slow chunk", func(t *testing.T) {
		c := startServer(t, clientOptions{initOptions: map[string]any{"checkTimeout": 1, "clangFlags": flags}})
		c.open("file://"+filepath.Join(dir, "a.cpp"), "cpp", "#include \"slow.h\"\nint x;\n")
		waitLog(t, c, "checker timed out: no answer for 1s", 2*time.Minute)
	})
	t.Run("0 means no limit", func(t *testing.T) {
		c := startServer(t, clientOptions{initOptions: map[string]any{"checkTimeout": 0, "clangFlags": flags}})
		c.open("file://"+filepath.Join(dir, "b.cpp"), "cpp", "#include \"quick.h\"\nint x;\n")
		waitLog(t, c, "checkpointed in", 2*time.Minute)
	})
	t.Run("a bad value is refused with a clear message", func(t *testing.T) {
		c := startServer(t, clientOptions{initOptions: map[string]any{"checkTimeout": -1}})
		waitLog(t, c, "hydra.checkTimeout -1: want seconds from 0 (no limit)", time.Minute)
	})
}
