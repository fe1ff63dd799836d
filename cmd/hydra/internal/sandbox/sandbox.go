// Package sandbox runs untrusted programs — generated code and the binaries built from it — in
// bubblewrap (Debian's `bubblewrap`, https://github.com/containers/bubblewrap): no network, a
// read-only /usr and nothing else of the host's files (no /etc but the dynamic linker's cache,
// no /home, /root or other temporary directories), a private size-bounded /tmp, new user, PID,
// IPC and UTS namespaces with no capabilities, and CPU-time, address-space, file-size, open-file
// and process limits set with prlimit inside. The whole sandbox is killed at its wall-clock
// limit or when its caller dies: when its first process ends, the kernel kills everything left
// in its PID namespace, so a program cannot leave a process behind.
//
// Run as root, the sandbox drops to the unprivileged user nobody (65534) before starting
// bubblewrap, because the kernel enforces the process limit for every user but root.
//
// Call Available once to learn whether bubblewrap works here, then Run.
package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hydra-lsp/hydra/internal/childproc"
	"github.com/hydra-lsp/hydra/internal/textops"
)

// Limits bound one run. Zero fields take the defaults.
type Limits struct {
	CPUSeconds int           // RLIMIT_CPU (default 10)
	MemoryMB   int           // RLIMIT_AS (default 1024)
	FileMB     int           // RLIMIT_FSIZE and the size of the private /tmp (default 16)
	Procs      int           // RLIMIT_NPROC: processes of the sandbox's user (default 32)
	Wall       time.Duration // wall-clock limit of the whole sandbox (default 30 s)
}

func (l Limits) withDefaults() Limits {
	if l.CPUSeconds <= 0 {
		l.CPUSeconds = 10
	}
	if l.MemoryMB <= 0 {
		l.MemoryMB = 1024
	}
	if l.FileMB <= 0 {
		l.FileMB = 16
	}
	if l.Procs <= 0 {
		l.Procs = 32
	}
	if l.Wall <= 0 {
		l.Wall = 30 * time.Second
	}
	return l
}

// Spec is one program to run.
type Spec struct {
	// Dir is a host directory shown inside as /box (read-only unless Writable): the program
	// and its inputs. The program runs in /tmp, a fresh private tmpfs. When the caller is root,
	// Dir's parents must let nobody through (os.MkdirTemp("", …) makes such a directory).
	Dir      string
	Writable bool
	// ReadOnly are further host paths (absolute) shown read-only at the same place inside: a
	// compiler that lives outside /usr (TypeScript's tsc, with its lib directory).
	ReadOnly []string
	// Argv is the command line; Argv[0] is a path inside the sandbox (/box/prog, /usr/bin/…).
	Argv   []string
	Limits Limits
}

// Result is how a run ended.
type Result struct {
	// ExitCode is the program's exit status; -1 when a signal ended it (Signal names it).
	ExitCode int
	Signal   string
	// TimedOut says the wall-clock limit ended the run.
	TimedOut bool
	// Output is stdout and stderr together, at most 64 KiB.
	Output string
}

// OK says the program exited with status 0.
func (r Result) OK() bool { return r.ExitCode == 0 && !r.TimedOut }

func (r Result) String() string {
	switch {
	case r.TimedOut:
		return "killed at the wall-clock limit"
	case r.Signal != "":
		return "killed by " + r.Signal
	}
	return "exit status " + strconv.Itoa(r.ExitCode)
}

// Sandbox runs programs with one bubblewrap binary.
type Sandbox struct {
	// Bwrap is the bubblewrap binary (default: bwrap on $PATH).
	Bwrap string
	// wrap, in tests, runs bubblewrap through another command (setpriv to another user).
	wrap []string
}

// nobody is the user the sandbox runs as when its caller is root.
const nobody = 65534

// outputCap bounds the output kept from a run.
const outputCap = 64 << 10

// ErrUnavailable is wrapped by Available's and Run's errors when bubblewrap is missing or
// cannot create its namespaces here.
var ErrUnavailable = errors.New("the sandbox for generated code is unavailable")

func (s *Sandbox) bwrap() (string, error) {
	name := s.Bwrap
	if name == "" {
		name = "bwrap"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%w: bubblewrap (%s) not found: install Debian's bubblewrap (scripts/install-deps.sh): %v", ErrUnavailable, name, err)
	}
	return p, nil
}

// Available runs a trivial program in the sandbox and says why it cannot, if it cannot.
func (s *Sandbox) Available(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "hydra-sandbox-probe-")
	if err != nil {
		return fmt.Errorf("sandbox probe: %w", err)
	}
	defer os.RemoveAll(dir)
	res, err := s.Run(ctx, Spec{Dir: dir, Argv: []string{"/usr/bin/true"}, Limits: Limits{Wall: 20 * time.Second}})
	if err != nil {
		return err
	}
	if !res.OK() {
		where := "here"
		if InChroot() {
			where = "in this chroot (there / is no mount point, which bubblewrap needs)"
		}
		return fmt.Errorf("%w: bubblewrap cannot start a sandbox %s (%s): %s", ErrUnavailable, where, res, textops.FirstLine(res.Output))
	}
	return nil
}

// InChroot reports whether this process runs inside a chroot whose root is no mount point: no
// mount in /proc/self/mountinfo (whose mount points are relative to the process's root) is
// mounted on "/". Bubblewrap cannot make a sandbox there (its first step, making "/" a slave
// mount, fails), so the sandbox is unavailable for a reason of the machine, not of the program.
// It is false where /proc/self/mountinfo cannot be read.
func InChroot() bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	return !rootIsMounted(string(b))
}

// rootIsMounted reports whether a mountinfo table (proc(5)) has a mount on "/".
func rootIsMounted(mountinfo string) bool {
	for _, line := range strings.Split(mountinfo, "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == "/" {
			return true
		}
	}
	return false
}

// Run runs spec in a fresh sandbox and waits for it to end. A non-zero exit, a signal or the
// wall-clock limit are results, not errors; an error means the sandbox itself failed.
func (s *Sandbox) Run(ctx context.Context, spec Spec) (Result, error) {
	bw, err := s.bwrap()
	if err != nil {
		return Result{}, err
	}
	if len(spec.Argv) == 0 {
		return Result{}, errors.New("sandbox: empty command line")
	}
	dir, err := filepath.Abs(spec.Dir)
	if err != nil {
		return Result{}, fmt.Errorf("sandbox: %w", err)
	}
	l := spec.Limits.withDefaults()
	if os.Geteuid() == 0 {
		if err := handTo(dir, spec.Writable); err != nil {
			return Result{}, fmt.Errorf("sandbox: %w", err)
		}
	}
	box := "--ro-bind"
	if spec.Writable {
		box = "--bind"
	}
	args := []string{
		"--die-with-parent", "--new-session",
		"--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--uid", strconv.Itoa(nobody), "--gid", strconv.Itoa(nobody), "--disable-userns", "--cap-drop", "ALL",
		"--hostname", "sandbox",
		"--ro-bind", "/usr", "/usr",
	}
	args = append(args, systemLinks()...)
	args = append(args,
		"--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache",
		"--dev", "/dev", "--proc", "/proc",
		"--size", strconv.Itoa(l.FileMB<<20), "--tmpfs", "/tmp")
	for _, p := range spec.ReadOnly {
		if !filepath.IsAbs(p) {
			return Result{}, fmt.Errorf("sandbox: read-only path %q is not absolute", p)
		}
		args = append(args, "--ro-bind", p, p)
	}
	args = append(args,
		box, dir, "/box",
		"--remount-ro", "/",
		"--chdir", "/tmp",
		"--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp",
		"--",
		"/usr/bin/prlimit",
		"--cpu="+strconv.Itoa(l.CPUSeconds),
		"--as="+strconv.Itoa(l.MemoryMB<<20),
		"--fsize="+strconv.Itoa(l.FileMB<<20),
		"--nproc="+strconv.Itoa(l.Procs),
		"--nofile=256", "--core=0",
		"--")
	args = append(args, spec.Argv...)

	rctx, cancel := context.WithTimeout(ctx, l.Wall)
	defer cancel()
	argv := append(append(append([]string(nil), s.wrap...), bw), args...)
	cmd := exec.CommandContext(rctx, argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.Dir = "/"
	childproc.Bind(cmd)
	if os.Geteuid() == 0 && len(s.wrap) == 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}}
	}
	// On the wall-clock limit, kill bubblewrap's process group; --die-with-parent then kills the
	// sandbox's first process, and with it every process in its PID namespace.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	out := &capped{max: outputCap}
	cmd.Stdout, cmd.Stderr = out, out
	err = cmd.Run()
	res := Result{Output: out.String()}
	var exit *exec.ExitError
	switch {
	case rctx.Err() != nil && ctx.Err() == nil:
		res.TimedOut, res.ExitCode = true, -1
		return res, nil
	case ctx.Err() != nil:
		return res, fmt.Errorf("sandbox: %w", ctx.Err())
	case err == nil:
		return res, nil
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode()
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.ExitCode, res.Signal = -1, ws.Signal().String()
		} else if res.ExitCode > 128 && res.ExitCode < 128+65 {
			// The program's own signal, as bubblewrap passes it on (128 + signal number).
			res.Signal = syscall.Signal(res.ExitCode - 128).String()
		}
		return res, nil
	}
	return res, fmt.Errorf("sandbox: run bubblewrap: %w", err)
}

// systemLinks recreates the merged-/usr links (/bin → usr/bin, …) or binds the directories
// when the host has real ones.
func systemLinks() []string {
	var args []string
	for _, d := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				args = append(args, "--symlink", target, d)
			}
		case fi.IsDir():
			args = append(args, "--ro-bind", d, d)
		}
	}
	return args
}

// handTo makes dir usable by the sandbox's user when the caller is root: readable (and
// writable when it is to be written) by nobody.
func handTo(dir string, writable bool) error {
	if writable {
		return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, nobody, nobody)
		})
	}
	return filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return os.Chmod(p, fi.Mode().Perm()|0o005)
		}
		return os.Chmod(p, fi.Mode().Perm()|0o004)
	})
}

// capped keeps the first max bytes written to it.
type capped struct {
	buf bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *capped) String() string { return c.buf.String() }
