package lsp_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/engine/model/modeltest"
	"github.com/hydra-lsp/hydra/lsp"
)

// hostileFlags are compile options that write files, load code or hand arguments to another
// tool, in every spelling (joined, separate, -Wp, -Xclang pairs). out is where they would write,
// lib a real shared library whose constructor writes a marker.
func hostileFlags(out, lib string) []string {
	o := func(name string) string { return filepath.Join(out, name) }
	return []string{
		"-MD", "-MF", o("a.d"), "-MT", "echo pwned #", "-MF" + o("b.d"), "-Wp,-MD," + o("c.d"),
		"-Wp,-MMD," + o("c2.d"), "--serialize-diagnostics", o("d.dia"), "-MJ", o("e.json"), "-MJ" + o("f.json"),
		"-MMD", "-fmodules", "-fmodules-cache-path=" + o("mc"), "-Xclang", "-header-include-file",
		"-Xclang", o("h.txt"), "-Xclang", "-dependency-dot", "-Xclang", o("g.dot"), "-Xclang",
		"-dependency-file", "-Xclang", o("i.d"), "-ftime-trace", "-ftime-trace=" + o("t.json"),
		"-save-temps", "-fcrash-diagnostics-dir=" + o("crash"), "-fproc-stat-report=" + o("p.csv"),
		"-fplugin=" + lib, "-fpass-plugin=" + lib, "-Xclang", "-load", "-Xclang", lib,
		"-Xclang", "-add-plugin", "-Xclang", "evil", "-mllvm", "-info-output-file=" + o("stats.txt"),
		"-o", o("a.o"),
	}
}

// hostileWorkspace makes a workspace whose compile_commands.json (or, with flagsTxt,
// compile_flags.txt) carries every hostile option and names as its compiler a script that
// writes a marker; the plugin options point at a real shared library that writes a marker when
// loaded. It returns the workspace, the source file's path and the markers' directory.
func hostileWorkspace(t *testing.T, flagsTxt bool) (ws, file, markers string) {
	t.Helper()
	top := t.TempDir()
	ws, markers = filepath.Join(top, "ws"), filepath.Join(top, "markers")
	out := filepath.Join(ws, "out")
	for _, d := range []string{ws, markers, out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, text string, mode os.FileMode) {
		if err := os.WriteFile(path, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
	libSrc := filepath.Join(top, "evil.c")
	write(libSrc, `#include <stdio.h>
__attribute__((constructor)) static void evil(void) {
  FILE *f = fopen("`+filepath.Join(markers, "plugin-loaded")+`", "w");
  if (f) fclose(f);
}
`, 0o644)
	lib := filepath.Join(ws, "evil.so")
	if out, err := exec.Command("cc", "-shared", "-fPIC", "-o", lib, libSrc).CombinedOutput(); err != nil {
		t.Fatalf("build the plugin: %v\n%s", err, out)
	}
	compiler := filepath.Join(ws, "cc.sh")
	write(compiler, "#!/bin/sh\ntouch "+filepath.Join(markers, "compiler-ran")+"\n", 0o755)
	file = filepath.Join(ws, "a.c")
	write(file, "int one(void) { return 1; }\n", 0o644)
	flags := hostileFlags(out, lib)
	if flagsTxt {
		write(filepath.Join(ws, "compile_flags.txt"), strings.Join(flags, "\n")+"\n", 0o644)
	} else {
		args := append(append([]string{compiler}, flags...), "-c", file)
		write(filepath.Join(ws, "compile_commands.json"), string(mustJSON(
			[]map[string]any{{"directory": ws, "file": file, "arguments": args}})), 0o644)
	}
	return ws, file, markers
}

// listFiles lists every file and directory under the roots.
func listFiles(t *testing.T, roots ...string) []string {
	t.Helper()
	var all []string
	for _, r := range roots {
		_ = filepath.WalkDir(r, func(p string, d fs.DirEntry, err error) error {
			if err == nil {
				all = append(all, p)
			}
			return nil
		})
	}
	sort.Strings(all)
	return all
}

// newFiles is what after has that before has not.
func newFiles(before, after []string) []string {
	had := map[string]bool{}
	for _, p := range before {
		had[p] = true
	}
	var added []string
	for _, p := range after {
		if !had[p] {
			added = append(added, p)
		}
	}
	return added
}

// A workspace's compile flags never make Hydra write a file, load a library or run a program:
// not hydra check, and not the language server on didOpen (its warm start), a code action and a
// generation. Everything the hostile options name, the working directory and the markers are
// listed before and after.
func TestHostileWorkspaceFlagsWriteNothingLoadNothingRunNothing(t *testing.T) {
	for _, variant := range []struct {
		name     string
		flagsTxt bool
	}{{"compile_commands.json", false}, {"compile_flags.txt", true}} {
		t.Run(variant.name, func(t *testing.T) {
			ws, file, markers := hostileWorkspace(t, variant.flagsTxt)
			cwd := t.TempDir() // the processes' working directory: a bare -MD would write a.d here
			before := listFiles(t, ws, markers, cwd)

			check := exec.Command(hydraBin, "check", file)
			check.Dir = cwd
			check.Env = append(os.Environ(), "HYDRA_CLANG_SHIM="+shimBin)
			outb, err := check.CombinedOutput()
			if err != nil {
				t.Fatalf("hydra check: %v\n%s", err, outb)
			}
			if !strings.Contains(string(outb), "options left out of checking") {
				t.Errorf("hydra check did not tell what it left out:\n%s", outb)
			}

			model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Text: "int two(void) { return 2; }\n"}}})
			c := startServer(t, clientOptions{initOptions: map[string]any{"modelUrl": model.URL, "maxAttempts": 1}, dir: cwd})
			uri := "file://" + file
			text := "#include <stdio.h>\nint one(void) { return 1; }\n"
			c.open(uri, "c", text)
			waitLog(t, c, "checkpointed", 2*time.Minute) // the warm start ran with these flags
			end := position(text, len(text))
			sum := runCodeAction(t, c, uri, lsp.Range{Start: end, End: end})
			if !sum.OK {
				t.Fatalf("generation with the sanitized flags: %+v", sum)
			}
			c.waitFor("a warning naming the options left out", time.Minute, func() bool {
				for _, m := range c.messages {
					if strings.Contains(m.Message, "options left out of checking") && strings.Contains(m.Message, "-fplugin=") {
						return true
					}
				}
				return false
			})
			if code := c.shutdown(); code != 0 {
				t.Errorf("server exit %d", code)
			}

			after := listFiles(t, ws, markers, cwd)
			if unexpected := newFiles(before, after); len(unexpected) > 0 {
				t.Errorf("files appeared: %q", unexpected)
			}
			for _, m := range []string{"plugin-loaded", "compiler-ran"} {
				if _, err := os.Stat(filepath.Join(markers, m)); err == nil {
					t.Errorf("marker %s was written", m)
				}
			}
		})
	}
}

// The checker's own line of defence: the same options given to hydra check after "--" (the
// user's own flags, which the Go side passes as they are) still write nothing and load nothing,
// because the shim clears every output of the invocation it builds
// (checkers/clang/shim/invocation.cpp). -save-temps is left out: the driver refuses it with two
// jobs, which says nothing of writing.
func TestCheckerClearsOutputsOfFlagsGivenAfterDashDash(t *testing.T) {
	ws, file, markers := hostileWorkspace(t, true)
	if err := os.Remove(filepath.Join(ws, "compile_flags.txt")); err != nil {
		t.Fatal(err)
	}
	var flags []string
	for _, f := range hostileFlags(filepath.Join(ws, "out"), filepath.Join(ws, "evil.so")) {
		if f != "-save-temps" {
			flags = append(flags, f)
		}
	}
	cwd := t.TempDir()
	before := listFiles(t, ws, markers, cwd)
	check := exec.Command(hydraBin, append([]string{"check", file, "--"}, flags...)...)
	check.Dir = cwd
	check.Env = append(os.Environ(), "HYDRA_CLANG_SHIM="+shimBin)
	out, err := check.CombinedOutput()
	if err != nil {
		t.Fatalf("hydra check: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "-MJ") || !strings.Contains(string(out), "left out of checking") {
		t.Errorf("the -MJ the driver would act on was not told as left out:\n%s", out)
	}
	if added := newFiles(before, listFiles(t, ws, markers, cwd)); len(added) > 0 {
		t.Errorf("files appeared: %q\n%s", added, out)
	}
}
