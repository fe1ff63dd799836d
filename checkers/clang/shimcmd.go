package clang

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
)

// ClangMajor is the major version of the Clang the shim is built with. A release archive
// (scripts/dist.sh) carries Clang's builtin headers under lib/clang/<ClangMajor>/include.
const ClangMajor = "19"

// bundled caches BundledClang's answer for each shim path.
var bundled sync.Map // shim path → string

// BundledClang returns the --clang path to give the shim at path when it lies in a release
// archive's layout (bin/hydra-clang-shim beside lib/clang/<ClangMajor>/include and INSTALL): the name of a
// clang in the shim's own directory. No such file is needed; the Clang driver derives the
// resource directory, where its builtin headers are, from the name (<dir>/../lib/clang/<major>),
// and the shim's file guard admits the directory above it. It returns "" otherwise, and the
// shim uses the clang it was built against (HYDRA_CLANG_PATH in shim/Makefile).
func BundledClang(path string) string {
	if v, ok := bundled.Load(path); ok {
		return v.(string)
	}
	clang := ""
	if abs, err := filepath.Abs(path); err == nil {
		dir := filepath.Dir(abs)
		// The archive's INSTALL beside bin/ tells it from a system layout such as /usr/bin beside
		// /usr/lib/clang/19, where the shim keeps the clang it was built against.
		_, errInstall := os.Stat(filepath.Join(dir, "..", "INSTALL"))
		if st, err := os.Stat(filepath.Join(dir, "..", "lib", "clang", ClangMajor, "include")); err == nil && st.IsDir() && errInstall == nil {
			clang = filepath.Join(dir, "clang")
		}
	}
	bundled.Store(path, clang)
	return clang
}

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
// A shim in a release archive's layout is told where its Clang's headers are (BundledClang).
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
	if clang := BundledClang(path); clang != "" {
		args = append(args, "--clang", clang)
	}
	args = append(append(args, "--"), p.Flags...)
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.ExtraFiles = extra
	return cmd
}
