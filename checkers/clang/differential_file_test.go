package clang

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/checkers/agreement"
	"github.com/hydra-lsp/hydra/checkers/wholefile"
)

// fileCase is a differential case whose text reads the checked file itself from disk
// (`#include __FILE__`, `#embed __FILE__`, __TIMESTAMP__): both sides check the same file, which
// is on disk with the text (and, when mtime is set, that modification time).
type fileCase struct {
	name  string
	file  string
	flags []string
	text  func(path string) string // the text, given the file's path (to measure or date itself)
	mtime time.Time                // zero: as written
}

// fileCases are the shapes in which checked text reads its own file. The shim's main buffer is
// no file and the chunks name the file on disk (shim/stream.cpp, enterChunk), so each reads the
// disk as whole-file clang does. The includes and __TIMESTAMP__ fail with the checked file
// remapped to the shim's one-line main buffer (as before): the include read that line, the
// chunks' virtual file had no modification time (1970). #embed reads through FileManager,
// which remapping never touched; it stays here as the include's sibling.
var fileCases = []fileCase{
	{name: "#include __FILE__ without a guard nests too deeply", file: "t.c",
		text: func(string) string { return "int a;\n#include __FILE__\n" }},
	{name: "#include __FILE__ behind a guard reads the #else", file: "t.c",
		text: func(string) string {
			return "#ifndef ONCE\n#define ONCE\nint a;\n#include __FILE__\n#else\nint b = ;\n#endif\n"
		}},
	{name: "#embed __FILE__ has the file's size", file: "t.c", flags: []string{"-std=c23"},
		text: func(string) string {
			// The text states its own length: five digits wide, so the length does not depend on them.
			f := "const char d[] = {\n#embed __FILE__\n};\n_Static_assert(sizeof(d) == %05d, \"size\");\nint z;\n"
			return fmt.Sprintf(f, len(fmt.Sprintf(f, 0)))
		}},
	{name: "a file whose name holds a newline", file: "new\nline.c", flags: []string{"-std=c11"},
		text: func(path string) string {
			return "_Static_assert(sizeof(__FILE__) == sizeof(\"" + strings.ReplaceAll(path, "\n", "\\n") + "\"), \"name\");\nint a = ;\n"
		}},
	{name: "__TIMESTAMP__ is the file's modification time", file: "t.cpp", flags: []string{"-std=c++17"},
		mtime: time.Date(2001, 2, 3, 4, 5, 6, 0, time.Local),
		text: func(string) string {
			// asctime's form, in local time, as Clang writes it (std::put_time "%a %b %e %T %Y").
			want := time.Date(2001, 2, 3, 4, 5, 6, 0, time.Local).Format("Mon Jan _2 15:04:05 2006")
			return "constexpr bool same(const char *a, const char *b) {\n" +
				"  return *a == *b && (*a == 0 || same(a + 1, b + 1));\n}\n" +
				"int x;\nstatic_assert(same(__TIMESTAMP__, \"" + want + "\"), \"timestamp\");\n"
		}},
}

// TestTheCheckedFileReadFromDisk runs fileCases through whole-file clang-19 -fsyntax-only and the
// chunked checker, on one file on disk, and compares verdict and first error line.
func TestTheCheckedFileReadFromDisk(t *testing.T) {
	clangBin := clangDriver(t)
	ch := newChecker(t, Options{Timeout: time.Minute})
	for _, c := range fileCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, c.file)
			text := c.text(path)
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			if !c.mtime.IsZero() {
				if err := os.Chtimes(path, c.mtime, c.mtime); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			whole := wholeOnDisk(ctx, t, clangBin, dir, c.file, c.flags)
			chunked, err := agreement.Incremental(ctx, ch, text, path, c.flags)
			if err != nil {
				t.Fatalf("chunked checker failed: %v (whole-file clang: %v)", err, whole)
			}
			if !sameVerdict(whole, chunked) {
				t.Errorf("chunked checker: %v; whole-file clang: %v; text %q", chunked, whole, text)
			}
		})
	}
}

// wholeOnDisk runs clang -fsyntax-only on the file name in dir as it is (wholefile.Check would
// write it anew, with a new modification time), by its full path as the checker gets it, and
// returns its first error.
func wholeOnDisk(ctx context.Context, t *testing.T, clangBin, dir, name string, flags []string) agreement.Verdict {
	t.Helper()
	args := append(append([]string{"-fsyntax-only"}, agreement.PresentationFlags...), flags...)
	cmd := exec.CommandContext(ctx, clangBin, append(args, filepath.Join(dir, name))...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err == nil {
		return agreement.Verdict{OK: true}
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("whole-file clang: %v\n%s", err, out)
	}
	d, ok := wholefile.ParseErrors(string(out)).First()
	if !ok {
		t.Fatalf("whole-file clang rejected without an error line:\n%s", out)
	}
	return agreement.Verdict{Line: d.Line, Col: d.Col, Msg: d.Msg, File: d.File}
}
