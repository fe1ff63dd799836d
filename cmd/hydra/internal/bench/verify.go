package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Verifier checks a generated program on its own, independently of the search that produced
// it: static correctness by compiling it with clang, functional correctness by compiling it
// with its tests and running the binary in a sandbox (a fresh temporary directory, an empty
// environment, and CPU-time, memory, file-size and wall-clock limits). Generated code is never
// run any other way.
type Verifier struct {
	// Clang is the C compiler driver; Clang++ the C++ one. Defaults: clang-19 and clang++-19.
	Clang, ClangXX string
	// CPUSeconds, MemoryMB and Wall limit a test run. Defaults: 10 s, 1024 MB, 30 s.
	CPUSeconds int
	MemoryMB   int
	Wall       time.Duration
}

func (v *Verifier) compiler(lang string) string {
	if lang == "c" {
		if v.Clang != "" {
			return v.Clang
		}
		return "clang-19"
	}
	if v.ClangXX != "" {
		return v.ClangXX
	}
	return "clang++-19"
}

// Static reports whether program compiles (clang -fsyntax-only with the task's flags), and
// clang's messages when it does not.
func (v *Verifier) Static(ctx context.Context, t Task, program string) (bool, string) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	args := []string{"-fsyntax-only", "-fno-color-diagnostics"}
	if t.Filename != "" {
		// Quoted includes resolve next to the file, as the checker does it.
		args = append(args, "-iquote", filepath.Dir(t.Filename))
	}
	args = append(append(args, t.Flags...), "-")
	cmd := exec.CommandContext(ctx, v.compiler(t.Lang), args...)
	cmd.Stdin = strings.NewReader(program)
	out, err := cmd.CombinedOutput()
	return err == nil, string(out)
}

// mainRE finds a definition of main in generated text.
var mainRE = regexp.MustCompile(`\bint\s+main\s*\(`)

// Program is the text compiled for the functional check: the generated program, followed by
// the task's tests unless the program already has a main.
func (t Task) Program(program string) string {
	if t.Test == "" || mainRE.MatchString(program) {
		return program
	}
	return program + "\n" + t.Test
}

// Functional reports whether program passes the task's tests: it compiles program (with the
// tests appended when it has no main) and runs the binary in the sandbox; exit status 0 passes.
func (v *Verifier) Functional(ctx context.Context, t Task, program string) bool {
	ok, _ := v.RunTests(ctx, t, program)
	return ok
}

// RunTests is Functional with the reason of a failure.
func (v *Verifier) RunTests(ctx context.Context, t Task, program string) (bool, string) {
	dir, err := os.MkdirTemp("", "hydra-bench-run-")
	if err != nil {
		return false, fmt.Sprintf("sandbox: %v", err)
	}
	defer os.RemoveAll(dir)
	ext := ".cpp"
	if t.Lang == "c" {
		ext = ".c"
	}
	src := filepath.Join(dir, "prog"+ext)
	if err := os.WriteFile(src, []byte(t.Program(program)), 0o600); err != nil {
		return false, fmt.Sprintf("sandbox: %v", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var flags []string
	for i := 0; i < len(t.Flags); i++ { // keep -std, drop -x (the extension says it)
		if t.Flags[i] == "-x" {
			i++
			continue
		}
		flags = append(flags, t.Flags[i])
	}
	args := append(append([]string{"-O1", "-w", "-o", filepath.Join(dir, "prog")}, flags...), src, "-lm")
	if out, err := exec.CommandContext(cctx, v.compiler(t.Lang), args...).CombinedOutput(); err != nil {
		return false, "compile: " + firstLine(string(out))
	}
	cpu, mem, wall := v.CPUSeconds, v.MemoryMB, v.Wall
	if cpu <= 0 {
		cpu = 10
	}
	if mem <= 0 {
		mem = 1024
	}
	if wall <= 0 {
		wall = 30 * time.Second
	}
	rctx, rcancel := context.WithTimeout(ctx, wall)
	defer rcancel()
	// ulimit: -t CPU seconds, -v address space in KiB, -f file size in 512-byte blocks, -u processes.
	script := fmt.Sprintf("ulimit -t %d && ulimit -v %d && ulimit -f 20480 || exit 97; exec ./prog", cpu, mem*1024)
	cmd := exec.CommandContext(rctx, "/bin/sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "TMPDIR=" + dir}
	cmd.Stdin = nil
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		return false, "run: " + err.Error() + ": " + firstLine(out.String())
	}
	return true, ""
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
