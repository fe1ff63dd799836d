package main

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The release archive (make dist, scripts/dist.sh) builds, holds what INSTALL promises, and its
// unpacked hydra check works without the LLVM installation: the script checks that its shim and
// hydra load no shared library, runs checkers/clang's malloc and folding-set tests against the
// static shim, and runs `hydra check` from the unpacked archive on a correct and a wrong C++ file
// that include <vector> and on a correct and a wrong TypeScript file (the archive's own tsc), and
// its `hydra doctor`, with PATH and LD_LIBRARY_PATH stripped of the LLVM directories and, as
// root, /usr/lib/llvm-19 hidden in a private mount namespace. As root, the archive also runs on a
// fresh Debian 11 root (scripts/debian11-archive.sh). The script's own checks fail it;
// this test asserts their outcome and the archive's contents.
func TestReleaseArchive(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the static shim and hydra (minutes); the full suite runs it")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command(filepath.Join(root, "scripts", "dist.sh"))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "DIST_DIR="+dir, "VERSION=test")
	out, err := cmd.CombinedOutput()
	t.Logf("scripts/dist.sh:\n%s", out)
	if err != nil {
		t.Fatalf("scripts/dist.sh: %v", err)
	}
	for _, want := range []string{"ok.cpp: accepted", "bad.cpp: rejected", "ok.ts: accepted", "bad.ts: rejected",
		"--- PASS: TestBucketHeadsBesideTheTable"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("scripts/dist.sh's output lacks %q", want)
		}
	}

	name := "hydra-test-linux-" + runtime.GOARCH
	files := archiveFiles(t, filepath.Join(dir, name+".tar.gz"))
	ts := "third_party/typescript/node_modules/@typescript/typescript-" + map[string]string{"amd64": "linux-x64", "arm64": "linux-arm64"}[runtime.GOARCH]
	for _, want := range []string{"bin/hydra", "bin/hydra-clang-shim", "lib/clang/19/include/stddef.h",
		"INSTALL", "LICENSE", "VERSION", "editors/nvim/lua/hydra/init.lua", "editors/emacs/hydra.el",
		ts + "/lib/tsc", ts + "/lib/lib.d.ts", ts + "/LICENSE", ts + "/NOTICE.txt"} {
		mode, ok := files[name+"/"+want]
		if !ok {
			t.Errorf("the archive lacks %s", want)
		} else if (strings.HasPrefix(want, "bin/") || strings.HasSuffix(want, "/tsc")) && mode&0o111 == 0 {
			t.Errorf("the archive's %s is not executable (mode %o)", want, mode)
		}
	}
	// The archive on a fresh Debian 11 root (glibc 2.31) with only g++: check, generate with the
	// scripted stand-in, doctor (scripts/debian11-archive.sh; root for debootstrap and chroot).
	t.Run("debian11", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("scripts/debian11-archive.sh needs root (debootstrap, chroot)")
		}
		cmd := exec.Command(filepath.Join(root, "scripts", "debian11-archive.sh"), filepath.Join(dir, name+".tar.gz"))
		cmd.Dir = root
		// The root is built once (debootstrap, minutes) and kept in the user's cache, not in the
		// test's own cache directory, which goes with each run.
		cmd.Env = append(os.Environ(), "HYDRA_CACHE_DIR="+filepath.Join(userCacheHome, "hydra-lsp"))
		out, err := cmd.CombinedOutput()
		t.Logf("scripts/debian11-archive.sh:\n%s", out)
		if err != nil {
			t.Fatalf("scripts/debian11-archive.sh: %v", err)
		}
		for _, want := range []string{"GLIBC 2.31", "ok - hydra check accepts a program that includes <vector>",
			"ok - hydra generate with the scripted stand-in", "ok - hydra doctor", "PASS"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("scripts/debian11-archive.sh's output lacks %q", want)
			}
		}
	})

	_, vsix := files[name+"/editors/hydra-lsp.vsix"]
	_, src := files[name+"/editors/vscode/package.json"]
	if !vsix && !src {
		t.Error("the archive holds neither the VS Code extension's VSIX nor its source")
	}
}

// archiveFiles returns the regular files in a .tar.gz with their modes.
func archiveFiles(t *testing.T, path string) map[string]int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	files := map[string]int64{}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if h.Typeflag == tar.TypeReg {
			files[h.Name] = h.Mode
		}
	}
}
