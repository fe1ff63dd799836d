package typescript

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/hydra-lsp/hydra/checkers/wholefile"
)

// tscError matches one error line of `tsc --pretty false`: "file(line,col): error TSnnnn: message".
var tscError = regexp.MustCompile(`^(.+?)\((\d+),(\d+)\): error (TS\d+: .*)$`)

// CheckFile checks text as a whole file on its own with `tsc --noEmit --pretty false NAME`, in a
// fresh temporary directory with no tsconfig.json (TypeScript 7's defaults, the ones Hydra applies
// to a file without one: DefaultConfig). compiler is the tsc binary ("" finds it as
// Options.Compiler says), name the file's base name. The verdict's errors are tsc's, in its
// order, each message with its code ("TS2304: Cannot find name 'x'."). Exit status 0 is OK, a
// rejection with error lines is a verdict; anything else (tsc could not run, ctx ended) is an error.
// It is the reference verdict for TypeScript where wholefile.Check is C/C++'s (the simulated
// model's fault planner, `hydra bench`'s static check).
func CheckFile(ctx context.Context, compiler, name, text string) (wholefile.Verdict, error) {
	exe, err := FindCompiler(compiler)
	if err != nil {
		return wholefile.Verdict{}, fmt.Errorf("whole-file tsc: %w", err)
	}
	if name == "" {
		return wholefile.Verdict{}, errors.New("whole-file tsc: no file name")
	}
	dir, err := os.MkdirTemp("", "hydra-tsc-")
	if err != nil {
		return wholefile.Verdict{}, fmt.Errorf("whole-file tsc: %w", err)
	}
	defer os.RemoveAll(dir)
	base := filepath.Base(name)
	if err := os.WriteFile(filepath.Join(dir, base), []byte(text), 0o600); err != nil {
		return wholefile.Verdict{}, fmt.Errorf("whole-file tsc: %w", err)
	}
	cmd := exec.CommandContext(ctx, exe, "--noEmit", "--pretty", "false", base)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	v := wholefile.Verdict{OK: err == nil, Output: string(out)}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return wholefile.Verdict{}, fmt.Errorf("whole-file tsc: %w", ctx.Err())
	case err == nil:
		return v, nil
	case !errors.As(err, &exit):
		return wholefile.Verdict{}, fmt.Errorf("whole-file tsc: %w", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		m := tscError.FindStringSubmatch(strings.TrimRight(line, "\r"))
		if m == nil {
			continue
		}
		l, _ := strconv.Atoi(m[2])
		c, _ := strconv.Atoi(m[3])
		v.Errors = append(v.Errors, wholefile.Diag{File: m[1], Line: l, Col: c, Msg: m[4]})
	}
	if len(v.Errors) == 0 {
		return wholefile.Verdict{}, fmt.Errorf("whole-file tsc: %s failed without an error line: %s", exe, strings.TrimSpace(string(out)))
	}
	return v, nil
}
