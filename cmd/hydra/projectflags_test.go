package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cProject is a C89 project built with -Werror whose database names a compiler that does not
// exist (never run) and an include directory; the file under check uses a // comment, which
// -std=c89 -pedantic -Werror rejects, as the project's own build would.
func cProject(t *testing.T) (root, file string) {
	t.Helper()
	root = t.TempDir()
	writeTestFile(t, filepath.Join(root, "include", "lib.h"), "int lib(int);\n")
	file = filepath.Join(root, "src", "use.c")
	writeTestFile(t, file, "#include \"lib.h\"\nint use(void) {\n  return lib(1); // a C99 comment\n}\n")
	writeTestFile(t, filepath.Join(root, "build", "compile_commands.json"), `[{"directory": "`+root+`/build",
	  "file": "../src/use.c", "command": "/nonexistent/gcc -std=c89 -pedantic -Werror -I../include -MD -MF use.d -o use.o -c ../src/use.c"}]`)
	return root, file
}

func writeTestFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runCheckIn parses args as hydra check does and runs it in-process.
func runCheckIn(t *testing.T, args ...string) (ok bool, out, errs string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	a, err := parseCheckArgs(args, &stderr)
	if err != nil {
		t.Fatalf("parse %q: %v\n%s", args, err, stderr.String())
	}
	ok, err = check(context.Background(), a, &stdout)
	if err != nil {
		t.Fatalf("check %q: %v", args, err)
	}
	return ok, stdout.String(), stderr.String()
}

// hydra check finds the project's compilation database from the file, as clangd does, and
// checks with its flags: the // comment is an error under -std=c89 -pedantic -Werror.
func TestCheckUsesTheProjectsCompilationDatabase(t *testing.T) {
	root, file := cProject(t)
	ok, out, errs := runCheckIn(t, "--verbose", file)
	if ok || !strings.Contains(out, "// comments are not allowed in this language") {
		t.Errorf("accepted (%v) or not for the // comment:\n%s\n%s", ok, out, errs)
	}
	if want := filepath.Join(root, "build", "compile_commands.json"); !strings.Contains(errs, "from "+want) {
		t.Errorf("--verbose does not say the flags came from %s:\n%s", want, errs)
	}
	if !strings.Contains(errs, "-MD -MF use.d") || strings.Contains(errs, "-o use.o") {
		t.Errorf("the left-out dependency options are not told (or the compile's own -o is):\n%s", errs)
	}
	for _, name := range []string{"use.d", "use.o"} {
		for _, dir := range []string{root, filepath.Join(root, "build"), filepath.Join(root, "src"), "."} {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				t.Errorf("%s was written in %s", name, dir)
			}
		}
	}
	// Flags after -- come after the database's: -Wno-comment... is not enough under -pedantic,
	// but -std=c99 after -std=c89 wins, as on clang's command line.
	if ok, out, _ := runCheckIn(t, file, "--", "-std=c99"); !ok {
		t.Errorf("with -std=c99 after the database's -std=c89, rejected:\n%s", out)
	}
}

// A file outside the project is checked with the project's flags named by
// --compile-commands-dir (its header found through the database's -I).
func TestCheckWithCompileCommandsDir(t *testing.T) {
	root, _ := cProject(t)
	outside := filepath.Join(t.TempDir(), "prompt.c")
	writeTestFile(t, outside, "#include \"lib.h\"\nint twice(void) {\n  return 2 * lib(1);\n}\n")
	ok, out, errs := runCheckIn(t, "--compile-commands-dir", filepath.Join(root, "build"), outside)
	if !ok {
		t.Errorf("rejected with the project's flags:\n%s\n%s", out, errs)
	}
	if ok, out, _ := runCheckIn(t, outside); ok || !strings.Contains(out, "'lib.h' file not found") {
		t.Errorf("without the project's flags the header is not found, yet: ok=%v\n%s", ok, out)
	}
	var stderr bytes.Buffer
	if _, err := parseCheckArgs([]string{"--compile-commands-dir", t.TempDir(), outside}, &stderr); err == nil {
		t.Error("a --compile-commands-dir without a database is not an error")
	}
}
