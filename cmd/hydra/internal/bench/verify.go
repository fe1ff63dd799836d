package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/hydra-lsp/hydra/checkers/lang"
	"github.com/hydra-lsp/hydra/checkers/typescript"
	"github.com/hydra-lsp/hydra/cmd/hydra/internal/sandbox"
	"github.com/hydra-lsp/hydra/internal/textops"
	"github.com/hydra-lsp/hydra/sim"
)

// Verifier checks a generated program on its own, independently of the search that produced
// it: static correctness by parsing it with its language's compiler (lang.Language.CheckFile:
// clang, or tsc for TypeScript; never running it), functional correctness — only when Execute is
// set — by compiling it with its tests and running the result (the binary; for TypeScript,
// node on tsc's JavaScript), both inside
// the bubblewrap sandbox of cmd/hydra/internal/sandbox (no network, no host files but /usr, a
// private /tmp, its own PID namespace killed as a whole, CPU-time, memory, file-size, process
// and wall-clock limits). Generated code is never run any other way.
type Verifier struct {
	// Clang is the C compiler driver; Clang++ the C++ one. Defaults: clang-19 and clang++-19.
	Clang, ClangXX string
	// TSC is TypeScript's compiler (default: the pinned one, typescript.FindCompiler); Node
	// runs its output (default: node on $PATH), and must live under /usr, which the sandbox shows.
	TSC, Node string
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
// flags, or tsc --noEmit with Hydra's defaults: the language's CheckFile), and the compiler's
// messages when it does not.
func (v *Verifier) Static(ctx context.Context, t Task, program string) (bool, string) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	l := lang.ForFile(t.sourceName())
	o := lang.FileOptions{Name: t.sourceName(), Compiler: v.TSC}
	if l.UsesFlags {
		if t.Filename != "" {
			// Quoted includes resolve next to the file, as the checker does it.
			o.Flags = append(o.Flags, "-iquote", filepath.Dir(t.Filename))
		}
		o.Compiler, o.Flags = v.compiler(t.Lang), append(o.Flags, t.Flags...)
	}
	w, err := l.CheckFile(ctx, program, o)
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
	switch t.Lang {
	case "c":
		return "prog.c"
	case sim.LangTypeScript:
		return "prog.ts"
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
	b, err := v.build(t)
	if err != nil {
		return false, "compile: " + err.Error()
	}
	dir, err := os.MkdirTemp("", "hydra-bench-run-")
	if err != nil {
		return false, fmt.Sprintf("sandbox: %v", err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, b.src), []byte(t.Program(program)), 0o644); err != nil {
		return false, fmt.Sprintf("sandbox: %v", err)
	}
	res, err := sb.Run(ctx, sandbox.Spec{Dir: dir, Writable: true, Argv: b.compile, ReadOnly: b.readOnly,
		Limits: sandbox.Limits{CPUSeconds: 120, MemoryMB: 4096, FileMB: 256, Procs: 64, Wall: 2 * time.Minute}})
	if err != nil {
		return false, "sandbox: " + err.Error()
	}
	if !res.OK() {
		return false, "compile: " + textops.FirstLine(res.Output)
	}
	res, err = sb.Run(ctx, sandbox.Spec{Dir: dir, Argv: b.run,
		Limits: sandbox.Limits{CPUSeconds: v.CPUSeconds, MemoryMB: v.MemoryMB, Wall: v.Wall}})
	if err != nil {
		return false, "sandbox: " + err.Error()
	}
	if !res.OK() {
		return false, "run: " + res.String() + ": " + textops.FirstLine(res.Output)
	}
	return true, ""
}

// build is how the functional check compiles and runs a task's program in the sandbox, where
// the program's directory is /box.
type build struct {
	src      string   // the file the program is written to
	compile  []string // the compiler's command line, run with /box writable
	run      []string // the command that runs the tests
	readOnly []string // host paths the compiler needs (sandbox.Spec.ReadOnly)
}

// build returns the commands for t's language: clang (-O1, the task's -std) and the binary for
// C and C++; for TypeScript tsc, which emits JavaScript into /box/out (the same tsc as the
// checker's, its lib directory shown read-only), and node on it.
func (v *Verifier) build(t Task) (build, error) {
	if t.Lang == sim.LangTypeScript {
		tsc, err := typescript.FindCompiler(v.TSC)
		if err != nil {
			return build{}, err
		}
		if tsc, err = filepath.Abs(tsc); err != nil {
			return build{}, err
		}
		node := v.Node
		if node == "" {
			if node, err = exec.LookPath("node"); err != nil {
				return build{}, fmt.Errorf("node, which runs the TypeScript tests (scripts/install-deps.sh installs Debian's): %w", err)
			}
		}
		resolved, err := filepath.EvalSymlinks(node)
		if err != nil || !strings.HasPrefix(resolved, "/usr/") {
			return build{}, fmt.Errorf("node %s: the sandbox shows only /usr, so the tests need a node installed there (Debian's nodejs)", node)
		}
		node = resolved
		return build{src: "prog.ts", readOnly: []string{filepath.Dir(tsc)},
			compile: []string{tsc, "--pretty", "false", "--outDir", "/box/out", "/box/prog.ts"},
			run:     []string{node, "/box/out/prog.js"}}, nil
	}
	compiler, err := exec.LookPath(v.compiler(t.Lang))
	if err != nil {
		return build{}, err
	}
	src := "prog.cpp"
	if t.Lang == "c" {
		src = "prog.c"
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
	return build{src: src, compile: args, run: []string{"/box/prog"}}, nil
}
