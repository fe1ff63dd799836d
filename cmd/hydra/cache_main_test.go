package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// hydraBin is the hydra binary TestMain built for the tests that run the real command.
var hydraBin string

// userCacheHome is the user's own cache directory, from before TestMain replaced
// XDG_CACHE_HOME: where what is costly to build and safe to share is kept between runs (the
// Debian 11 root of scripts/debian11-archive.sh).
var userCacheHome = func() string {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache")
}()

// TestMain builds the hydra binary once, then gives the tests (and every hydra process they
// start) a cache directory of their own: TokPol's learned state and the pictures of searches live
// under the user's cache directory, and a test run must not change what the user's Hydra has
// learned. The build comes first, so that it uses the user's Go build cache (whose default
// location is under XDG_CACHE_HOME too: built after the change, every run compiled the whole
// module from nothing, more than a minute on two cores).
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hydra-test-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "test cache directory:", err)
		os.Exit(1)
	}
	hydraBin = filepath.Join(dir, "hydra")
	if out, err := exec.Command("go", "build", "-o", hydraBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	// The go commands the tests run (dist.sh's build and its go test, go run in the docs' snippets)
	// keep the user's Go build cache: its default location is under XDG_CACHE_HOME too, and
	// with an empty one each compiled the module and its dependencies from nothing.
	if os.Getenv("GOCACHE") == "" {
		if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil && len(strings.TrimSpace(string(out))) > 0 {
			os.Setenv("GOCACHE", strings.TrimSpace(string(out)))
		}
	}
	if err := os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache")); err != nil {
		fmt.Fprintln(os.Stderr, "test cache directory:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
