package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// fencedBlocks returns the text of every fenced code block of doc with the given info string.
func fencedBlocks(doc, lang string) []string {
	re := regexp.MustCompile("(?ms)^```" + regexp.QuoteMeta(lang) + "\n(.*?)^```\n")
	var out []string
	for _, m := range re.FindAllStringSubmatch(doc, -1) {
		out = append(out, m[1])
	}
	return out
}

// docs/try-without-a-gpu.md's example runs as written: its sh block, in an empty directory with
// hydra on PATH, exits 0 and prints the doc's c block (the accepted program).
func TestTryWithoutAGPUDocRunsAsWritten(t *testing.T) {
	doc, err := os.ReadFile("../../docs/try-without-a-gpu.md")
	if err != nil {
		t.Fatal(err)
	}
	sh, want := fencedBlocks(string(doc), "sh"), fencedBlocks(string(doc), "c")
	if len(sh) != 1 || len(want) != 1 {
		t.Fatalf("the doc has %d sh and %d c blocks, want one of each", len(sh), len(want))
	}
	shim, err := filepath.Abs("../../bin/hydra-clang-shim")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command("bash", "-c", sh[0])
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(hydraBin)+":"+os.Getenv("PATH"),
		"HYDRA_CLANG_SHIM="+shim, "HYDRA_MODEL_URL=", "HYDRA_MODEL=", "HYDRA_API_KEY=")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(3 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("the doc's example hangs\nstderr:\n%s", stderr.String())
	}
	if err != nil {
		t.Fatalf("the doc's example: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if stdout.String() != want[0] {
		t.Fatalf("the doc's example printed\n%s\nwant the doc's c block\n%s\nstderr:\n%s", stdout.String(), want[0], stderr.String())
	}
	if !strings.Contains(stderr.String(), "hydra: attempt 1: line 6: use of undeclared identifier 'j'") ||
		!strings.Contains(stderr.String(), "hydra: accepted after 2 attempt(s)") {
		t.Fatalf("stderr does not tell the story the doc shows:\n%s", stderr.String())
	}
}
