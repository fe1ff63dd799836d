package typescript

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
)

// next returns the session's next event, failing the test after a minute.
func next(t *testing.T, s checkers.Session) checkers.Event {
	t.Helper()
	select {
	case ev, ok := <-s.Events():
		if !ok {
			t.Fatal("event channel closed early")
		}
		return ev
	case <-time.After(time.Minute):
		t.Fatal("no event within a minute")
	}
	return checkers.Event{}
}

// startIn starts a session for name in a fresh directory (no tsconfig.json above it).
func startIn(t *testing.T, ck *Checker, name string) checkers.Session {
	t.Helper()
	s, err := ck.Start(context.Background(), checkers.SessionOptions{Filename: filepath.Join(t.TempDir(), name)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if ev := next(t, s); ev.Kind != checkers.KindInit {
		t.Fatalf("first event %+v, want init", ev)
	}
	return s
}

// TestUnfinishedIsNotAnError: text that more text can still make right gets progress, not an
// error; at the end of input the same text is rejected as tsc rejects it.
func TestUnfinishedIsNotAnError(t *testing.T) {
	ck := newChecker(t)
	for _, prefix := range []string{
		"let a = [1];\nlet x = a.",
		"let z = (1 +",
		"class C { m(",
		"const s = `abc ${",
		"let n = 1; /* a comment",
		"function f(): number {\n  const a = 1;\n",
		"function f(): number {\n  if (Math.random() > 0.5) {\n    return 1;\n  }\n",
		"const o: { a: number; b: string } = {\n  a: 1,\n",
		"class P {\n  x: number;\n",
		"function g(): void\n",
		"function h(a: string): void;\n",
		"const y = later();\n",
		"let t = 1;\nt = t +\n",
	} {
		s := startIn(t, ck, "u.ts")
		if err := s.Submit(prefix, checkers.SubmitOptions{}); err != nil {
			t.Fatal(err)
		}
		if ev := next(t, s); ev.Kind != checkers.KindProgress || ev.Off != len(prefix) {
			t.Errorf("%q: got %+v, want progress to %d", prefix, ev, len(prefix))
			continue
		}
		s.EOS()
		ev := next(t, s)
		if ev.Kind != checkers.KindError {
			t.Errorf("%q at the end of input: got %+v, want an error", prefix, ev)
		}
	}
}

// TestWrongIsAnErrorBeforeTheEnd: an error that no more text can take back is reported as soon
// as its chunk is checked, at its own line, before the end of input.
func TestWrongIsAnErrorBeforeTheEnd(t *testing.T) {
	ck := newChecker(t)
	for _, c := range []struct {
		chunks []string
		line   int
		cat    string
	}{
		{[]string{"let a: string = 1;\n", "let b = (\n"}, 1, checkers.CatTypeMismatch},
		{[]string{"let x = 1 +;\n", "let y = 2;\n"}, 1, checkers.CatSyntax},
		{[]string{"function f() {\n", "  const s: string = 1;\n", "}\n"}, 2, checkers.CatTypeMismatch},
		{[]string{"function f(): number {\n", "  return 1;\n", "}\n", "f(1, 2);\n"}, 4, checkers.CatArgCount},
		{[]string{"const m = new Map<string, number>();\n", "m.sett('a', 1);\n"}, 2, checkers.CatNoMember},
		{[]string{"let q = 1;\n", "let q = 2;\n"}, 1, checkers.CatRedefinition},
	} {
		s := startIn(t, ck, "w.ts")
		for _, ch := range c.chunks {
			if err := s.Submit(ch, checkers.SubmitOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		var got *checkers.Event
		for got == nil {
			ev := next(t, s)
			if ev.Kind == checkers.KindError {
				got = &ev
			}
			if ev.Kind == checkers.KindProgress && ev.Off == len(strings.Join(c.chunks, "")) {
				break
			}
		}
		if got == nil || got.Line != c.line || got.Cat != c.cat {
			t.Errorf("%q: got %+v, want an error at line %d (%s) before EOS", c.chunks, got, c.line, c.cat)
		}
	}
}

// TestResumeAfterError: the checker resumes from the checkpoint before a wrong line, and the
// resumed session, given a right line instead, accepts the program; offsets continue from the
// checkpoint and the checkpoint can be resumed again.
func TestResumeAfterError(t *testing.T) {
	ck := newChecker(t)
	lines := []string{"function sq(x: number): number {\n", "  return x * x;\n", "}\n"}
	s := startIn(t, ck, "r.ts")
	for _, l := range lines {
		if err := s.Submit(l, checkers.SubmitOptions{Checkpoint: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Submit("const s: string = sq(2);\n", checkers.SubmitOptions{Checkpoint: true}); err != nil {
		t.Fatal(err)
	}
	var cp checkers.Checkpoint
	for cp == nil || cp.Off() != len(strings.Join(lines, "")) {
		ev := next(t, s)
		switch ev.Kind {
		case checkers.KindChkpt:
			c := ck.Adopt(ev.ID)
			if c == nil {
				t.Fatalf("checkpoint %d gone", ev.ID)
			}
			if cp != nil {
				cp.Release()
			}
			cp = c
		case checkers.KindError:
			t.Fatalf("error before the wrong line: %+v", ev)
		}
	}
	if ev := next(t, s); ev.Kind != checkers.KindError || ev.Line != 4 {
		t.Fatalf("got %+v, want the error at line 4", ev)
	}
	s.Close()
	defer cp.Release()
	for _, rest := range []string{"const n: number = sq(2);\n", "console.log(sq(3));\n"} {
		r, err := ck.Resume(context.Background(), cp)
		if err != nil {
			t.Fatal(err)
		}
		if ev := next(t, r); ev.Kind != checkers.KindInit || ev.Off != cp.Off() || ev.Parent != cp.ID() {
			t.Fatalf("resumed init %+v, want off %d parent %d", ev, cp.Off(), cp.ID())
		}
		r.Submit(rest, checkers.SubmitOptions{})
		r.EOS()
		if ev := next(t, r); ev.Kind != checkers.KindProgress || ev.Off != cp.Off()+len(rest) {
			t.Fatalf("resumed progress %+v, want off %d", ev, cp.Off()+len(rest))
		}
		if ev := next(t, r); ev.Kind != checkers.KindDone || !ev.OK {
			t.Fatalf("resumed session: %+v, want done ok", ev)
		}
		if r.Text() != cp.Text()+rest {
			t.Fatalf("resumed text %q", r.Text())
		}
		r.Close()
	}
}

// TestProjectConfig: a tsconfig.json found above the file applies, as tsc -p applies it: with
// strict off, an implicit any is accepted; a file it leaves out gets Hydra's defaults; a
// tsconfig.json tsc rejects is a fatal error.
func TestProjectConfig(t *testing.T) {
	ck := newChecker(t)
	dir := t.TempDir()
	text := "function f(x) { return x; }\nf(1);\n"
	write := func(name, s string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("tsconfig.json", `{"compilerOptions": {"strict": false, "noEmit": true}, "include": ["src"]}`)
	write("src/a.ts", text)
	s, _ := ck.Start(context.Background(), checkers.SessionOptions{Filename: filepath.Join(dir, "src/a.ts")})
	if first, ok := firstError(streamLines(t, ck, s, text, false)); !ok || first != nil {
		t.Errorf("strict off: got error %+v, want accepted", first)
	}
	s.Close()
	// A new file that is not on disk yet, where the project's include takes it in, is checked
	// under the project's options, as `tsc -p` would check it once saved: the compiler's
	// directory listing (getAccessibleEntries) has it.
	// Both declare g in the global scope (scripts): the second is accepted only if the first,
	// ended, has left the project again.
	other := "function g(x) { return x; }\ng(1);\n"
	for _, name := range []string{"src/unsaved.ts", "src/new/deeper.ts"} {
		s, _ := ck.Start(context.Background(), checkers.SessionOptions{Filename: filepath.Join(dir, name)})
		if first, ok := firstError(streamLines(t, ck, s, other, false)); !ok || first != nil {
			t.Errorf("%s, new and matched by the project's include: got error %+v, want accepted (strict off)", name, first)
		}
		s.Close()
	}
	// A file the project leaves out (outside its include) is checked under Hydra's defaults,
	// as a file without a tsconfig.json is, and the compiler lives on; so is a new file there.
	write("tools/gen.ts", text)
	for _, name := range []string{"tools/gen.ts", "tools/unsaved.ts"} {
		s, _ := ck.Start(context.Background(), checkers.SessionOptions{Filename: filepath.Join(dir, name)})
		first, ok := firstError(streamLines(t, ck, s, text, false))
		if ok || first == nil || first.Line != 1 || first.Cat == checkers.CatFatal {
			t.Errorf("%s, which the project leaves out: got %+v ok=%v, want the implicit any at line 1 (strict defaults)", name, first, ok)
		}
		s.Close()
	}
	// The project's own file after those, declaring g too: the new files, ended, are gone.
	s, _ = ck.Start(context.Background(), checkers.SessionOptions{Filename: filepath.Join(dir, "src/a.ts")})
	if first, ok := firstError(streamLines(t, ck, s, text+other, false)); !ok || first != nil {
		t.Errorf("the project's own file after those: got error %+v, want accepted", first)
	}
	s.Close()
	// The same text without a tsconfig.json: TypeScript 7's defaults (strict) reject it.
	if first, ok := firstError(checkText(t, ck, t.TempDir(), "a.ts", text)); ok || first == nil || first.Line != 1 {
		t.Errorf("defaults: got %+v ok=%v, want the implicit any at line 1", first, ok)
	}
	dir2 := t.TempDir()
	dir = dir2
	write("tsconfig.json", `{"compilerOptions": {"target": "nonsense"}}`)
	write("b.ts", "let v = 1;\n")
	s2, _ := ck.Start(context.Background(), checkers.SessionOptions{Filename: filepath.Join(dir2, "b.ts")})
	first, ok := firstError(streamLines(t, ck, s2, "let v = 1;\n", false))
	if ok || first == nil || first.Cat != checkers.CatFatal {
		t.Errorf("bad tsconfig: got %+v ok=%v, want a fatal error", first, ok)
	}
}

// TestNoOrphans: the compiler process ends with Checker.Close, and with the Go process that
// started it when that one is killed.
func TestNoOrphans(t *testing.T) {
	if os.Getenv("HYDRA_TS_ORPHAN_CHILD") != "" {
		ck, err := New(Options{})
		if err != nil {
			os.Exit(3)
		}
		startIn(t, ck, "o.ts")
		os.Stdout.WriteString(strconv.Itoa(ck.PID()) + "\n")
		time.Sleep(time.Hour)
	}
	gone := func(pid int) bool {
		for i := 0; i < 600; i++ {
			if err := syscall.Kill(pid, 0); err != nil {
				return true
			}
			time.Sleep(100 * time.Millisecond)
		}
		return false
	}
	ck := newChecker(t)
	startIn(t, ck, "o.ts")
	pid := ck.PID()
	if pid == 0 {
		t.Fatal("no compiler process")
	}
	ck.Close()
	if !gone(pid) {
		t.Errorf("compiler %d outlived Checker.Close", pid)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestNoOrphans$")
	cmd.Env = append(os.Environ(), "HYDRA_TS_ORPHAN_CHILD=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := out.Read(buf)
	child, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil || child == 0 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child said %q", buf[:n])
	}
	cmd.Process.Kill()
	cmd.Wait()
	if !gone(child) {
		syscall.Kill(child, syscall.SIGKILL)
		t.Errorf("compiler %d outlived the killed Go process", child)
	}
}

// TestLateErrorBeforeEarlierOne: a declaration without a body is an error only at the end of
// input (its body could still come on a later line), so it comes after an error found while
// streaming that lies after it in the text; both are reported.
func TestLateErrorBeforeEarlierOne(t *testing.T) {
	ck := newChecker(t)
	text := "function later(): number\nconst o: { x: number } = { x: 1, y: 2 };\n"
	evs := checkText(t, ck, t.TempDir(), "l.ts", text)
	var lines []int
	for _, ev := range evs {
		if ev.Kind == checkers.KindError {
			lines = append(lines, ev.Line)
		}
	}
	if len(lines) != 2 || lines[0] != 2 || lines[1] != 1 {
		t.Fatalf("error lines %v, want [2 1] (the object literal's while streaming, the missing body at the end)", lines)
	}
	if first, ok := firstError(evs); ok || first.Line != 1 {
		t.Fatalf("first error %+v ok=%v, want line 1", first, ok)
	}
}

// TestEveryErrorAtTheEnd: at the end of input every error tsc reports is reported, each once:
// the semantic ones when there is no syntax error (the first found while streaming, the others
// after it), the syntax ones otherwise.
func TestEveryErrorAtTheEnd(t *testing.T) {
	ck := newChecker(t)
	dir := t.TempDir()
	for _, c := range []struct {
		text  string
		lines []int
	}{
		{"function f(): number {\n}\nconst bad: string = 1;\nconst worse: number = \"two\";\nnever();\n", []int{1, 3, 4, 5}},
		{"let a = (1;\nlet b = 2 +;\nconst s: string = 1;\n", []int{1, 2}},
	} {
		var lines []int
		for _, ev := range checkText(t, ck, dir, "e.ts", c.text) {
			if ev.Kind == checkers.KindError {
				lines = append(lines, ev.Line)
			}
		}
		slices.Sort(lines)
		if !slices.Equal(lines, c.lines) {
			t.Errorf("%q: errors at lines %v, want %v (tsc's)", c.text, lines, c.lines)
		}
	}
}

// TestDecidedByTheUnitBeingWritten: an error that the declaration still being written decides
// is not reported while it is written: overloads before an implementation whose body is not
// all there yet (2394), and members of an interface that comes after its use (2339 while its
// body is open), and what follows a use of a function declared further down (a callback's
// parameter typed by it, 7006). Streamed line by line, each text is accepted, as tsc accepts it;
// the same texts with the implementation, the interface or the function wrong are rejected at
// the line tsc names.
func TestDecidedByTheUnitBeingWritten(t *testing.T) {
	ck := newChecker(t)
	exe, err := FindCompiler("")
	if err != nil {
		t.Fatal(err)
	}
	overloads := "export function pairs(a: string): string[];\nexport function pairs(a: number): string[];\n" +
		"export function pairs(a: any) {\n  const s = String(a);\n  return s.split('');\n}\n"
	later := "export function size(s: State): number {\n  const { buffer, done } = s;\n  return done ? 0 : buffer.length;\n}\n\n" +
		"interface State {\n  buffer: string[];\n  done: boolean;\n}\n"
	callback := "export const doubled = apply([1, 2], (x) => x * 2);\n\n" +
		"function apply(xs: number[], f: (x: number) => number): number[] {\n  return xs.map(f);\n}\n"
	for _, c := range []struct {
		name, text string
	}{
		{"overloads.ts", overloads},
		{"later.ts", later},
		{"callback.ts", callback},
		// A function named like Node's global, declared further down: "Cannot find name
		// 'process'. Do you need to install type definitions for node?" (2580) until then.
		{"process.ts", "export function run() {\n  return process(1);\n}\n\nfunction process(n: number): number {\n  return n + 1;\n}\n"},
		{"callback-wrong.ts", strings.Replace(callback, "f: (x: number) => number", "f: number", 1)},
		{"overloads-wrong.ts", strings.Replace(overloads, "return s.split('');", "return 1;", 1)},
		{"later-wrong.ts", strings.Replace(later, "  done: boolean;\n", "", 1)},
	} {
		dir := t.TempDir()
		first, ok := firstError(checkText(t, ck, dir, c.name, c.text))
		line, _ := tscFirstError(t, exe, dir, c.name)
		switch {
		case line == 0 && (!ok || first != nil):
			t.Errorf("%s: rejected (%+v); tsc accepts it", c.name, first)
		case line != 0 && (ok || first == nil || first.Line != line):
			t.Errorf("%s: got %+v ok=%v; tsc's first error is at line %d", c.name, first, ok, line)
		case strings.HasSuffix(c.name, "-wrong.ts") && line == 0:
			t.Errorf("%s: tsc accepts the test's wrong text", c.name)
		}
	}
}
