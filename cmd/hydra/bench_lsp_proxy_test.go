package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hydra-lsp/hydra/cmd/hydra/internal/proxybench"
)

// TestBenchLSPProxyRuns runs `hydra bench lsp-proxy` (the real binary, built here, with the
// real clangd-19) for a few requests and checks that each kind was answered by both servers
// with results. It judges no timing.
func TestBenchLSPProxyRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts clangd twice; run without -short")
	}
	bin := hydraBin
	cmd := exec.Command(bin, "bench", "lsp-proxy", "--requests", "3", "--json")
	// The bench runs `hydra lsp` in a temporary directory: name the repository's Clang shim.
	shim, err := filepath.Abs("../../bin/hydra-clang-shim")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), "HYDRA_CLANG_SHIM="+shim)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hydra bench lsp-proxy: %v\n%s", err, stderr.String())
	}
	var rows []proxybench.Row
	if err := json.Unmarshal(stdout.Bytes(), &rows); err != nil {
		t.Fatalf("not a JSON array: %v\n%s", err, stdout.String())
	}
	want := []string{"textDocument/hover", "textDocument/definition", "textDocument/completion"}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i, r := range rows {
		if r.Method != want[i] || r.Results < 1 || r.DirectP50 <= 0 || r.ProxyP50 <= 0 {
			t.Errorf("row %+v: want %s answered with results by both", r, want[i])
		}
	}
}
