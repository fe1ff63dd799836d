// Package childproc starts the programs Hydra runs (checker processes, the language servers
// behind `hydra lsp`, the sandbox) as children that die with it, so that none is ever orphaned.
package childproc

import (
	"fmt"
	"io"
	"os/exec"
	"syscall"
)

// Bind makes cmd, once started, die with Hydra: it gets its own process group (a terminal's ^C
// goes to Hydra, which then ends the child and what the child started, by group) and the kernel
// kills it with SIGKILL when the thread that started it dies (Pdeathsig). Other SysProcAttr
// fields a caller needs (a Credential) may be set after Bind.
func Bind(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// StartPiped binds cmd (see Bind), starts it, and returns pipes to its standard input and
// output. cmd.Stderr is left as the caller set it.
func StartPiped(cmd *exec.Cmd) (io.WriteCloser, io.ReadCloser, error) {
	Bind(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	return stdin, stdout, nil
}
