package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"

	"github.com/hydra-lsp/hydra/checkers/wholefile"
	"github.com/hydra-lsp/hydra/cmd/hydra/internal/sandbox"
	"github.com/hydra-lsp/hydra/internal/textops"
)

// Verifier checks a generated program on its own, independently of the search that produced
// it: static correctness by parsing it with clang (never running it), functional correctness —
// only when Execute is set — by compiling it with its tests and running the binary, both inside
// the bubblewrap sandbox of cmd/hydra/internal/sandbox (no network, no host files but /usr, a
// private /tmp, its own PID namespace killed as a whole, CPU-time, memory, file-size, process
// and wall-clock limits). Generated code is never run any other way.
type Verifier struct {
	// Clang is the C compiler driver; Clang++ the C++ one. Defaults: clang-19 and clang++-19.
	Clang, ClangXX string
	// Execute allows the functional check, which runs generated code (`hydra bench --run-tests`).
	// Off, RunTests runs nothing and fails.
	Execute bool
	// Sandbox runs the compiler and the tests; nil means bubblewrap from $PATH.
	Sandbox *sandbox.Sandbox
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

// Static reports whether program compiles (whole-file clang -fsyntax-only with the task's
// flags, checkers/wholefile), and clang's messages when it does not.
func (v *Verifier) Static(ctx context.Context, t Task, program string) (bool, string) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var flags []string
	if t.Filename != "" {
		// Quoted includes resolve next to the file, as the checker does it.
		flags = append(flags, "-iquote", filepath.Dir(t.Filename))
	}
	w, err := wholefile.Check(ctx, program, wholefile.Options{Clang: v.compiler(t.Lang), Name: t.sourceName(),
		Flags: append(flags, t.Flags...)})
	if err != nil {
		return false, err.Error()
	}
	return w.OK, w.Output
}

// sourceName is the base name the program is compiled under: the task's, else prog.c / prog.cpp.
func (t Task) sourceName() string {
	if t.Filename != "" {
		return filepath.Base(t.Filename)
	}
	if t.Lang == "c" {
		return "prog.c"
	}
	return "prog.cpp"
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

// NotExecuted is RunTests' reason when Execute is off.
const NotExecuted = "not run: the functional check runs generated code and needs --run-tests"

// RunTests is Functional with the reason of a failure.
func (v *Verifier) RunTests(ctx context.Context, t Task, program string) (bool, string) {
	if !v.Execute {
		return false, NotExecuted
	}
	sb := v.Sandbox
	if sb == nil {
		sb = &sandbox.Sandbox{}
	}
	compiler, err := exec.LookPath(v.compiler(t.Lang))
	if err != nil {
		return false, fmt.Sprintf("compile: %v", err)
	}
	dir, err := os.MkdirTemp("", "hydra-bench-run-")
	if err != nil {
		return false, fmt.Sprintf("sandbox: %v", err)
	}
	defer os.RemoveAll(dir)
	src := "prog.cpp"
	if t.Lang == "c" {
		src = "prog.c"
	}
	if err := os.WriteFile(filepath.Join(dir, src), []byte(t.Program(program)), 0o644); err != nil {
		return false, fmt.Sprintf("sandbox: %v", err)
	}
	var flags []string
	for i := 0; i < len(t.Flags); i++ { // keep -std, drop -x (the extension says it)
		if t.Flags[i] == "-x" {
			i++
			continue
		}
		flags = append(flags, t.Flags[i])
	}
	// The compiler runs in the sandbox too: the program may #include any file it names.
	args := append(append([]string{compiler, "-O1", "-w", "-o", "/box/prog"}, flags...), "/box/"+src, "-lm")
	res, err := sb.Run(ctx, sandbox.Spec{Dir: dir, Writable: true, Argv: args,
		Limits: sandbox.Limits{CPUSeconds: 120, MemoryMB: 4096, FileMB: 256, Procs: 64, Wall: 2 * time.Minute}})
	if err != nil {
		return false, "sandbox: " + err.Error()
	}
	if !res.OK() {
		return false, "compile: " + textops.FirstLine(res.Output)
	}
	res, err = sb.Run(ctx, sandbox.Spec{Dir: dir, Argv: []string{"/box/prog"},
		Limits: sandbox.Limits{CPUSeconds: v.CPUSeconds, MemoryMB: v.MemoryMB, Wall: v.Wall}})
	if err != nil {
		return false, "sandbox: " + err.Error()
	}
	if !res.OK() {
		return false, "run: " + res.String() + ": " + textops.FirstLine(res.Output)
	}
	return true, ""
}
