package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestMain gives the tests (and every hydra process they start) a cache directory of their own:
// TokPol's learned state and the pictures of searches live under the user's cache directory,
// and a test run must not change what the user's Hydra has learned.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hydra-test-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "test cache directory:", err)
		os.Exit(1)
	}
	if err := os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache")); err != nil {
		fmt.Fprintln(os.Stderr, "test cache directory:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
