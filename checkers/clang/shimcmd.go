package clang

import (
	"context"
	"os"
	"os/exec"
	"strconv"
)

// ShimProcess is what one shim process is started with: the descriptors it inherits and the
// options of its command line (main in shim/main.cpp). The driver's sessions, the raw client of
// hydra bench checker (checkers/benchmark/raw.go) and the tests that start a shim directly all
// build their command from it, so the descriptor numbers and option names live in one place.
type ShimProcess struct {
	Channel  *os.File // the shim's end of the session's socket (--channel-fd)
	Lifeline *os.File // the read end of the owner's lifeline pipe (--lifeline-fd); nil: none
	Ring     *os.File // the channel's shared-memory ring (--ring-fd); nil: the socket alone
	Session  int64    // the session's number in its events (--session)
	File     string   // the checked file's name (--file)
	Root     string   // the project root beside the file's directory (--root); "": none
	Flags    []string // the compiler's flags (after --)
}

// Command returns the command that starts the shim binary at path as p says, its descriptors
// passed as ExtraFiles (3, then 4 and 5 as present). The process is killed when ctx is done
// (exec.CommandContext); a session's process, which outlives the call that starts it, is given
// context.Background(). The caller sets the environment and starts it, then closes p's files.
func (p ShimProcess) Command(ctx context.Context, path string) *exec.Cmd {
	extra := []*os.File{p.Channel}
	args := []string{"--channel-fd", "3"}
	for _, f := range []struct {
		file *os.File
		flag string
	}{{p.Lifeline, "--lifeline-fd"}, {p.Ring, "--ring-fd"}} {
		if f.file != nil {
			args = append(args, f.flag, strconv.Itoa(3+len(extra)))
			extra = append(extra, f.file)
		}
	}
	args = append(args, "--session", strconv.FormatInt(p.Session, 10), "--file", p.File)
	if p.Root != "" {
		args = append(args, "--root", p.Root)
	}
	args = append(append(args, "--"), p.Flags...)
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.ExtraFiles = extra
	return cmd
}
