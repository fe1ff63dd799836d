package clang

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"time"
)

// startFailure explains a shim that died before it could say anything: exit status 127 (or 126)
// is what the dynamic loader or the kernel's exec gives when the binary cannot start at all, a
// shared library missing ("libclang-cpp.so.19.1: cannot open shared object file"), a loader or
// C library too old ("GLIBC_2.34 not found"), a binary for another machine. The session's own
// standard error went to Options.Stderr (or nowhere), so the binary is started once more, with no
// arguments and nothing to read, and what it prints is returned, after ": ", for the error that
// the user reads. Other exits return "".
func (c *Checker) startFailure(exitErr error) string {
	var ee *exec.ExitError
	if !errors.As(exitErr, &ee) {
		return ""
	}
	if code := ee.ExitCode(); code != 127 && code != 126 {
		return ""
	}
	return ": " + loaderMessage(c.shim)
}

// loaderMessage runs path with no arguments and returns the first lines it prints, or a note
// that it printed nothing.
func loaderMessage(path string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path)
	cmd.Stdin = nil
	cmd.Env = shimEnv(os.Environ())
	out, err := cmd.CombinedOutput()
	msg := strings.TrimSpace(string(out))
	if msg == "" {
		if err != nil {
			return path + ": " + err.Error()
		}
		return path + " printed nothing"
	}
	lines := strings.SplitN(msg, "\n", 4)
	if len(lines) > 3 {
		lines = lines[:3]
	}
	return strings.Join(lines, "; ")
}
