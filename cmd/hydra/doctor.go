package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/clang"
	"github.com/hydra-lsp/hydra/checkers/lang"
	"github.com/hydra-lsp/hydra/engine/model"
)

func init() {
	commands["doctor"] = command{
		summary: "check this installation: the checker, system headers, clangd, the model server, the cache",
		run:     func(args []string) int { return doctor(args, os.Stdout, os.Stderr) },
	}
}

// finding is one line of hydra doctor: what was looked at, what was found, and when it is not
// right, what to do about it.
type finding struct {
	what, found, fix string
	ok, needed       bool // needed: a failure makes doctor exit 1 (the checker and its headers)
}

// doctor is hydra doctor with its output streams, for tests.
func doctor(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	modelURL := fs.String("model-url", "", "the model server to try (default $HYDRA_MODEL_URL)")
	timeout := fs.Duration("timeout", 20*time.Second, "how long each check may take")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: hydra doctor [--model-url URL]")
		fmt.Fprintln(stderr, "\nChecks this installation and prints one line per part, each with its fix when it is not")
		fmt.Fprintln(stderr, "right. Exit status 0 when the checker works, 1 when it does not.\n\nflags:")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *modelURL == "" {
		*modelURL = os.Getenv("HYDRA_MODEL_URL")
	}
	var found []finding
	found = append(found, finding{what: "version", found: "hydra " + buildVersion(), ok: true})
	found = append(found, checkerFindings(*timeout)...)
	found = append(found, clangdFinding(), typeScriptFinding(), modelFinding(*modelURL, *timeout), cacheFinding())
	code := 0
	for _, f := range found {
		mark := "ok  "
		if !f.ok {
			mark = "FAIL"
			if !f.needed {
				mark = "--  "
			}
		}
		fmt.Fprintf(stdout, "%s %-14s %s\n", mark, f.what, f.found)
		if !f.ok && f.fix != "" {
			fmt.Fprintf(stdout, "     %-14s fix: %s\n", "", f.fix)
		}
		if !f.ok && f.needed {
			code = 1
		}
	}
	return code
}

// clangVersionProbe makes Clang itself say its version: a failed static assertion whose message
// is __clang_version__.
const clangVersionProbe = "static_assert(0, __clang_version__);\n"

// headerProbe includes a C++ and a C standard header, as nearly every program does.
const headerProbe = "#include <vector>\n#include <string>\n#include <stdio.h>\nint main() { std::vector<std::string> v; return (int)v.size(); }\n"

// checkerFindings starts the real checker twice: once to learn Clang's version, once on a file
// that includes the standard library's headers.
func checkerFindings(timeout time.Duration) []finding {
	shim, err := clang.FindShim()
	if err != nil {
		return []finding{{what: "checker", found: err.Error(), needed: true,
			fix: "run `make build`, or put hydra-clang-shim next to hydra, or set $" + clang.ShimEnv}}
	}
	ch, err := clang.New(clang.Options{ShimPath: shim})
	if err != nil {
		return []finding{{what: "checker", found: err.Error(), needed: true}}
	}
	defer ch.Close()
	dir, err := os.MkdirTemp("", "hydra-doctor-")
	if err != nil {
		return []finding{{what: "checker", found: fmt.Sprintf("temporary directory: %v", err), needed: true}}
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "doctor.cpp")

	start := time.Now()
	_, diag, err := probe(ch, file, clangVersionProbe, timeout)
	took := time.Since(start)
	if err != nil {
		return []finding{{what: "checker", found: fmt.Sprintf("%s: %v", shim, err), needed: true,
			fix: "the message above is the checker's own; see INSTALL or README (Set-up)"}}
	}
	ver := "unknown Clang version"
	if m := regexp.MustCompile(`static assertion failed: (.*)`).FindStringSubmatch(diag); m != nil {
		ver = "Clang " + strings.TrimSpace(m[1])
	}
	out := []finding{{what: "checker", ok: true, needed: true,
		found: fmt.Sprintf("%s (%s; a session started and answered in %d ms)", shim, ver, took.Milliseconds())}}

	ok, diag, err := probe(ch, file, headerProbe, timeout)
	switch {
	case err != nil:
		out = append(out, finding{what: "system headers", found: err.Error(), needed: true})
	case !ok:
		out = append(out, finding{what: "system headers", found: "<vector>, <string> and <stdio.h> do not compile: " + diag,
			needed: true, fix: "install a C and C++ standard library's headers (Debian/Ubuntu: apt-get install g++, or libstdc++-dev and libc6-dev)"})
	default:
		out = append(out, finding{what: "system headers", found: "<vector>, <string> and <stdio.h> compile", ok: true, needed: true})
	}
	return out
}

// probe checks text as file in one session and returns the verdict and the first error's message.
func probe(ch checkers.Checker, file, text string, timeout time.Duration) (bool, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	sess, err := ch.Start(ctx, checkers.SessionOptions{Flags: []string{"-xc++", "-std=c++17"}, Filename: file, Root: filepath.Dir(file)})
	if err != nil {
		return false, "", err
	}
	defer sess.Close()
	if err := sess.Submit(text, checkers.SubmitOptions{}); err != nil {
		return false, "", fmt.Errorf("submit: %w", err)
	}
	if err := sess.EOS(); err != nil {
		return false, "", fmt.Errorf("end of input: %w", err)
	}
	first := ""
	for {
		select {
		case <-ctx.Done():
			return false, "", fmt.Errorf("no verdict within %s", timeout)
		case ev, open := <-sess.Events():
			if !open {
				return false, "", errors.New("the session ended without a verdict")
			}
			switch ev.Kind {
			case checkers.KindChkpt:
				if cp := ch.Adopt(ev.ID); cp != nil {
					cp.Release()
				}
			case checkers.KindCrash:
				return false, "", errors.New(ev.Diag)
			case checkers.KindError:
				if first == "" {
					first = ev.Diag
				}
			case checkers.KindDone:
				return ev.OK && first == "", first, nil
			}
		}
	}
}

// clangdFinding looks for the clangd that `hydra lsp` would run behind it (lang.C's language
// server).
func clangdFinding() finding {
	p, _, err := lang.C.LanguageServer()
	if err != nil {
		return finding{what: "clangd", found: err.Error() + " (optional: only for the clangd setting)",
			fix: "apt-get install clangd-19, or set clangdPath"}
	}
	out, err := exec.Command(p, "--version").Output()
	if err != nil {
		return finding{what: "clangd", found: fmt.Sprintf("%s: --version: %v", p, err),
			fix: "reinstall clangd, or set the editor's clangdPath"}
	}
	v := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	return finding{what: "clangd", found: fmt.Sprintf("%s (%s)", p, v), ok: true}
}

// typeScriptFinding looks for TypeScript 7's compiler: the TypeScript checker runs it, and
// `hydra lsp` runs it as TypeScript's language server behind itself (tsc --lsp --stdio).
func typeScriptFinding() finding {
	p, _, err := lang.TypeScript.LanguageServer()
	if err != nil {
		return finding{what: "typescript", found: err.Error() + " (optional: only for TypeScript files)",
			fix: "scripts/install-deps.sh installs it, or set $HYDRA_TSC"}
	}
	out, err := exec.Command(p, "--version").Output()
	if err != nil {
		return finding{what: "typescript", found: fmt.Sprintf("%s: --version: %v", p, err),
			fix: "reinstall it with scripts/install-deps.sh, or set $HYDRA_TSC"}
	}
	return finding{what: "typescript", found: fmt.Sprintf("%s (%s; checker and language server)", p, strings.TrimSpace(string(out))), ok: true}
}

// modelFinding asks the model server what it serves.
func modelFinding(url string, timeout time.Duration) finding {
	if url == "" {
		return finding{what: "model server", found: "none named (optional for hydra check)",
			fix: "set HYDRA_MODEL_URL, give --model-url, or set the editor's modelUrl"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	info, err := model.ListModels(ctx, url)
	if err != nil {
		return finding{what: "model server", found: err.Error(), fix: "start the server, or correct the URL (an OpenAI-compatible base such as http://localhost:8000/v1)"}
	}
	kind := string(info.Kind)
	if kind == "" {
		kind = "an OpenAI-compatible server"
	}
	names := make([]string, 0, len(info.Models))
	for _, m := range info.Models {
		names = append(names, m.ID)
	}
	if len(names) == 0 {
		return finding{what: "model server", found: fmt.Sprintf("%s at %s serves no model", kind, url), fix: "load a model on the server"}
	}
	return finding{what: "model server", found: fmt.Sprintf("%s at %s serves %s", kind, url, strings.Join(names, ", ")), ok: true}
}

// cacheFinding checks that Hydra's cache directory (trace pictures, TokPol's beliefs) can be
// written.
func cacheFinding() finding {
	base, err := os.UserCacheDir()
	if err != nil {
		return finding{what: "cache", found: err.Error(), fix: "set $XDG_CACHE_HOME or $HOME"}
	}
	dir := filepath.Join(base, "hydra")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return finding{what: "cache", found: err.Error(), fix: "make " + dir + " writable, or set $XDG_CACHE_HOME"}
	}
	f, err := os.CreateTemp(dir, ".doctor-")
	if err != nil {
		return finding{what: "cache", found: err.Error(), fix: "make " + dir + " writable, or set $XDG_CACHE_HOME"}
	}
	f.Close()
	os.Remove(f.Name())
	return finding{what: "cache", found: dir + " (writable)", ok: true}
}
