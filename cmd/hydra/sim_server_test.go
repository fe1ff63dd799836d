package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/engine/model"
	"github.com/hydra-lsp/hydra/sim"
)

// startSimServer runs `hydra sim-server ARGS…` and returns the URL from its first stdout line.
// The process is stopped with SIGTERM at cleanup, and must exit by itself.
func startSimServer(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"sim-server"}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("sim-server exit: %v", err)
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Error("sim-server did not exit on SIGTERM")
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	go func() { io.Copy(io.Discard, out); done <- cmd.Wait() }()
	if err != nil {
		t.Fatalf("reading the URL line: %v", err)
	}
	return strings.TrimSpace(line)
}

// readCompletion reads a streamed completion to its end and returns its text; a stream error
// fails the test.
func readCompletion(t *testing.T, s model.Stream) string {
	t.Helper()
	var sb strings.Builder
	for {
		tok, err := s.Next(context.Background())
		if err == io.EOF {
			return sb.String()
		}
		if err != nil {
			t.Fatal(err)
		}
		sb.WriteString(tok.Text)
	}
}

func TestSimServerScriptMode(t *testing.T) {
	bin := hydraBin
	script := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(script, []byte(`{"rules": [
		{"prompt_suffix": "int add(int a, int b) {\n", "text": "  return a + b;\n}\n", "chunk": 3},
		{"status": 400, "message": "no such task"}
	]}`), 0o644)
	url := startSimServer(t, bin, "--script", script, "--addr", "127.0.0.1:0")
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/v1") {
		t.Fatalf("first stdout line %q is not an API base URL", url)
	}
	c, err := model.NewClient(url)
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Complete(context.Background(), model.Request{Prompt: "int add(int a, int b) {\n"})
	if err != nil {
		t.Fatal(err)
	}
	if got := readCompletion(t, s); got != "  return a + b;\n}\n" {
		t.Errorf("completion %q", got)
	}
	if _, err := c.Complete(context.Background(), model.Request{Prompt: "other"}); err == nil || !strings.Contains(err.Error(), "no such task") {
		t.Errorf("unmatched prompt: err = %v, want the scripted 400", err)
	}
}

func TestSimServerRejectsBadScript(t *testing.T) {
	bin := hydraBin
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"rules": [{"txet": "typo"}]}`), 0o644)
	for _, args := range [][]string{
		{"--script", filepath.Join(dir, "missing.json")},
		{"--script", bad},
		{"--addr", "not-an-address", "--script", bad},
		{"extra-arg"},
		{"--tasks", "1", "--sim", "logprob-auc=2"},
		{"--tasks", "1", "--sim", "speed=1"},
	} {
		cmd := exec.Command(bin, append([]string{"sim-server"}, args...)...)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
			t.Errorf("%v: err = %v, want exit status 2\n%s", args, err, out)
		}
		if !strings.Contains(string(out), "hydra sim-server") {
			t.Errorf("%v: output %q does not say what failed", args, out)
		}
	}
}

func TestSimServerSimulatedMode(t *testing.T) {
	dir, err := sim.DataDir()
	if err != nil {
		t.Fatalf("the task data (../shared/data) is needed: %v", err)
	}
	tasks, err := sim.LoadTasks(dir)
	if err != nil {
		t.Fatal(err)
	}
	bin := hydraBin
	url := startSimServer(t, bin, "--tasks", "4", "--seed", "9", "--error-rate", "0", "--time-scale", "0")
	c, err := model.NewClient(url)
	if err != nil {
		t.Fatal(err)
	}
	names, err := c.Models(context.Background())
	if err != nil || len(names) != 1 || names[0] != sim.ModelName {
		t.Errorf("models = %v, %v; want [%s]", names, err, sim.ModelName)
	}
	task := sim.Select(tasks, 4, 9)[0]
	s, err := c.Complete(context.Background(), model.Request{Prompt: task.Prompt})
	if err != nil {
		t.Fatal(err)
	}
	if got := readCompletion(t, s); got != task.Solution {
		t.Errorf("the simulated model wrote %q, want the task's solution", got)
	}
	if u := s.Usage(); u.PromptTokens == 0 || u.CompletionTokens == 0 {
		t.Errorf("usage %+v", u)
	}
	if _, err := c.Complete(context.Background(), model.Request{Prompt: sim.Select(tasks, 40, 9)[39].Prompt}); err == nil {
		t.Error("a task outside --tasks 4 was served")
	}
}
