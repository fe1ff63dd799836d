// Package wholefile runs `clang -fsyntax-only` on a whole file and parses its errors: the
// reference verdict that the incremental checker is compared with (the agreement test, the
// simulated model's fault planner, the shim's own tests). Call Check.
package wholefile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Diag is one error clang printed.
type Diag struct {
	File string // the file clang names (the checked file or a header it includes)
	Line int
	Col  int
	Msg  string // the message, with clang's " [-W…]" suffix unless -fno-diagnostics-show-option is passed
}

// Verdict is clang's verdict on a whole file.
type Verdict struct {
	OK     bool
	Errors []Diag // every "error:" and "fatal error:" line, in clang's order (empty when OK)
	Output string // clang's whole output
}

// First returns the first error, in whatever file.
func (v Verdict) First() (Diag, bool) {
	if len(v.Errors) == 0 {
		return Diag{}, false
	}
	return v.Errors[0], true
}

// FirstIn returns the first error whose file has the base name name (errors in headers are
// skipped).
func (v Verdict) FirstIn(name string) (Diag, bool) {
	for _, d := range v.Errors {
		if filepath.Base(d.File) == filepath.Base(name) {
			return d, true
		}
	}
	return Diag{}, false
}

// Options says how to run clang.
type Options struct {
	// Clang is the driver to run (default: Clang()).
	Clang string
	// Dir is where the file is written and clang runs, so that quoted includes resolve there.
	// Empty: a fresh temporary directory, removed afterwards.
	Dir string
	// Name is the file's base name; its extension picks the language unless Flags has -x.
	Name string
	// Flags go before the file, after -fsyntax-only -fno-color-diagnostics -fno-caret-diagnostics.
	Flags []string
}

// Clang returns the clang-19 driver: clang-19 on $PATH, else /usr/lib/llvm-19/bin/clang.
func Clang() (string, error) {
	if p, err := exec.LookPath("clang-19"); err == nil {
		return p, nil
	}
	const p = "/usr/lib/llvm-19/bin/clang"
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("clang-19 not found on $PATH nor at %s (run `make deps`)", p)
	}
	return p, nil
}

// errorLine matches "file:line:col: error: message" and "…: fatal error: …".
var errorLine = regexp.MustCompile(`^(.*?):(\d+):(\d+): (?:fatal )?error: (.*)$`)

// Check writes text to Options.Dir/Options.Name and runs clang -fsyntax-only on it. Exit status 0
// is OK; status 1 is a rejection, whose errors are parsed (a rejection without an error line is
// an error); anything else (clang crashed, could not run, ctx ended) is an error.
func Check(ctx context.Context, text string, o Options) (Verdict, error) {
	if o.Name == "" {
		return Verdict{}, errors.New("whole-file clang: no file name")
	}
	clang := o.Clang
	if clang == "" {
		var err error
		if clang, err = Clang(); err != nil {
			return Verdict{}, fmt.Errorf("whole-file clang: %w", err)
		}
	}
	dir := o.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "hydra-wholefile-")
		if err != nil {
			return Verdict{}, fmt.Errorf("whole-file clang: %w", err)
		}
		defer os.RemoveAll(d)
		dir = d
	}
	path := filepath.Join(dir, filepath.Base(o.Name))
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return Verdict{}, fmt.Errorf("whole-file clang: %w", err)
	}
	args := append([]string{"-fsyntax-only", "-fno-color-diagnostics", "-fno-caret-diagnostics"}, o.Flags...)
	cmd := exec.CommandContext(ctx, clang, append(args, path)...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	v := Verdict{OK: err == nil, Output: out.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return v, nil
	case ctx.Err() != nil:
		return Verdict{}, fmt.Errorf("whole-file clang on %s: %w", o.Name, ctx.Err())
	case !errors.As(err, &exit) || exit.ExitCode() != 1:
		return Verdict{}, fmt.Errorf("whole-file clang on %s: %w\n%s", o.Name, err, firstLines(v.Output, 5))
	}
	v.Errors = ParseErrors(v.Output).Errors
	if len(v.Errors) == 0 {
		return Verdict{}, fmt.Errorf("whole-file clang on %s failed without an error line:\n%s", o.Name, firstLines(v.Output, 5))
	}
	return v, nil
}

// ParseErrors reads clang's output (without carets or colours) and returns its errors, in order,
// as a rejection; OK is false whatever it finds.
func ParseErrors(output string) Verdict {
	v := Verdict{Output: output}
	for _, l := range strings.Split(output, "\n") {
		m := errorLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		line, _ := strconv.Atoi(m[2])
		col, _ := strconv.Atoi(m[3])
		v.Errors = append(v.Errors, Diag{File: m[1], Line: line, Col: col, Msg: m[4]})
	}
	return v
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(strings.TrimSpace(s), "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
