package checkers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProgramFindsInOrderAndNamesWhatItTried(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "tool")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p := Program{Checker: "test checker", What: "the tool", Env: "HYDRA_TEST_TOOL",
		BesideExe: "no-such-tool-*", InModule: "no/such/tool", Fix: "build it"}

	t.Setenv(p.Env, "")
	if got, err := p.Find(exe); err != nil || got != exe {
		t.Errorf("explicit executable: %q, %v", got, err)
	}
	if _, err := p.Find(plain); err == nil || !strings.Contains(err.Error(), "not an executable file") {
		t.Errorf("explicit non-executable: %v, want not an executable file", err)
	}
	t.Setenv(p.Env, exe)
	if got, err := p.Find(""); err != nil || got != exe {
		t.Errorf("from $%s: %q, %v", p.Env, got, err)
	}
	t.Setenv(p.Env, plain)
	if _, err := p.Find(""); err == nil || !strings.Contains(err.Error(), "$HYDRA_TEST_TOOL="+plain) {
		t.Errorf("non-executable $%s: %v", p.Env, err)
	}
	t.Setenv(p.Env, "")
	_, err := p.Find("")
	if err == nil || !strings.Contains(err.Error(), "the tool not found (tried ") ||
		!strings.Contains(err.Error(), filepath.Join("no", "such", "tool")) || !strings.Contains(err.Error(), "build it or set $HYDRA_TEST_TOOL") {
		t.Errorf("nothing found: %v, want every path tried and the fix", err)
	}
	// InModule is a pattern under this module's root (go.mod above the working directory).
	p.InModule = "go.*" // go.mod is a file, not executable: still not found
	if _, err := p.Find(""); err == nil {
		t.Errorf("a non-executable match was taken")
	}
}
