package clang

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hydra-lsp/hydra/checkers"
)

// fileTree is the layout of the file-access tests, under one temporary directory:
//
//	proj/          the checked file's directory (h.h; alias.h -> h.h; esc.h -> ../outside/secret.h;
//	               outlink -> ../outside; src/; include/r.h)
//	outside/       secret.h: readable, but neither the project nor named by a flag
//	incdir/        inc.h and forced.h, reachable only through -I/-isystem/-include
type fileTree struct {
	base, proj, outside, incdir, secret string
}

func newFileTree(t *testing.T) fileTree {
	t.Helper()
	base := t.TempDir()
	ft := fileTree{
		base:    base,
		proj:    filepath.Join(base, "proj"),
		outside: filepath.Join(base, "outside"),
		incdir:  filepath.Join(base, "incdir"),
	}
	ft.secret = filepath.Join(ft.outside, "secret.h")
	files := map[string]string{
		// If the checker ever read it, the verdict would be a syntax error inside it, not
		// "file not found".
		ft.secret:                                "int secret = ;\n",
		filepath.Join(ft.proj, "h.h"):            "int fromh = 1;\n",
		filepath.Join(ft.proj, "include", "r.h"): "int fromr = 2;\n",
		filepath.Join(ft.proj, "src", "keep"):    "",
		filepath.Join(ft.incdir, "inc.h"):        "int frominc = 3;\n",
		filepath.Join(ft.incdir, "forced.h"):     "int forced = 4;\n",
	}
	for p, text := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		filepath.Join(ft.proj, "alias.h"): "h.h",
		filepath.Join(ft.proj, "esc.h"):   ft.secret,
		filepath.Join(ft.proj, "outlink"): ft.outside,
	}
	for link, target := range links {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	return ft
}

// Generated code cannot make the checker read files outside the project and the include
// paths: such includes end as Clang's fatal "file not found", although the files exist and a
// whole-file clang run reads them.
func TestIncludesOutsideTheRootsAreRefused(t *testing.T) {
	ft := newFileTree(t)
	c := newChecker(t, Options{})
	up := strings.Repeat("../", strings.Count(ft.proj, "/")+2) // far above the file system root
	cases := []struct {
		name, include string
	}{
		{"absolute path", `"` + ft.secret + `"`},
		{"absolute system file", `"/etc/passwd"`},
		{"absolute path in angle brackets", `</etc/passwd>`},
		{"dot-dot escape", `"../outside/secret.h"`},
		{"deep dot-dot escape to /etc", `"` + up + `etc/passwd"`},
		{"dot-dot escape through a system directory", `<../../../etc/passwd>`},
		{"symlinked file pointing outside", `"esc.h"`},
		{"symlinked directory pointing outside", `"outlink/secret.h"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text := "#include " + tc.include + "\nint main() { return 0; }\n"
			file := filepath.Join(ft.proj, "m.cpp")
			evs := run(t, c, checkers.SessionOptions{Filename: file}, text)
			v, first := sessionVerdict(t, evs)
			if v.OK || first == nil {
				t.Fatalf("include %s accepted: %+v", tc.include, evs)
			}
			if first.Cat != checkers.CatFatal || !strings.Contains(first.Diag, "file not found") {
				t.Fatalf("include %s: %s error %q (meta %v), want a fatal \"file not found\"", tc.include, first.Cat, first.Diag, first.Meta)
			}
			if id := first.Meta["diag_id"]; id != "err_pp_file_not_found" {
				t.Fatalf("include %s: diag_id %v, want err_pp_file_not_found", tc.include, id)
			}
			// The refusal is the checker's rule: plain clang finds the file and reads it.
			if w := wholeFile(t, ft.proj, "m.cpp", nil, text); strings.Contains(w.Diag, "file not found") {
				t.Fatalf("whole-file clang cannot find %s either (%v): the test proves nothing", tc.include, w)
			}
		})
	}
}

// __has_include cannot probe for files outside the roots either, while it sees those inside.
func TestHasIncludeSeesOnlyTheRoots(t *testing.T) {
	ft := newFileTree(t)
	c := newChecker(t, Options{})
	cases := []struct {
		name    string
		visible bool
	}{
		{ft.secret, false},
		{"/etc/passwd", false},
		{"esc.h", false},
		{"h.h", true},
		{"<vector>", true},
	}
	for _, tc := range cases {
		arg := tc.name
		if !strings.HasPrefix(arg, "<") {
			arg = `"` + arg + `"`
		}
		// One chunk: a conditional block cannot span chunks.
		text := "#if __has_include(" + arg + ")\n#error visible\n#endif\nint x;\n"
		s, err := c.Start(context.Background(), checkers.SessionOptions{Filename: filepath.Join(ft.proj, "m.cpp")})
		if err != nil {
			t.Fatal(err)
		}
		submitAll(t, s, []string{text})
		v, _ := sessionVerdict(t, collect(t, s))
		s.Close()
		if got := !v.OK && strings.Contains(v.Diag, "visible"); got != tc.visible {
			t.Errorf("__has_include(%s): %v, want visible=%v", arg, v, tc.visible)
		}
	}
}

// Files in the project, in directories the flags name and in the system include paths are
// read as usual.
func TestIncludesInsideTheRootsWork(t *testing.T) {
	ft := newFileTree(t)
	c := newChecker(t, Options{})
	cases := []struct {
		name, file, text, root string
		flags                  []string
		relative               bool // checked as a name relative to the working directory, its own
	}{
		{"quoted include next to the file", "proj/m.cpp",
			"#include \"h.h\"\nint main() { return fromh; }\n", "", nil, false},
		{"quoted include next to a file named relative to the working directory", "proj/m.cpp",
			"#include \"h.h\"\nint main() { return fromh; }\n", "", nil, true},
		{"symlink inside the project", "proj/m.cpp",
			"#include \"alias.h\"\nint main() { return fromh; }\n", "", nil, false},
		{"-I directory", "proj/m.cpp",
			"#include <inc.h>\nint main() { return frominc; }\n", "", []string{"-I" + ft.incdir}, false},
		{"-I directory as a separate argument", "proj/m.cpp",
			"#include \"inc.h\"\nint main() { return frominc; }\n", "", []string{"-I", ft.incdir}, false},
		{"-isystem directory", "proj/m.cpp",
			"#include <inc.h>\nint main() { return frominc; }\n", "", []string{"-isystem", ft.incdir}, false},
		{"-include file", "proj/m.cpp",
			"int main() { return forced; }\n", "", []string{"-include", filepath.Join(ft.incdir, "forced.h")}, false},
		{"project root above the file's directory", "proj/src/m.cpp",
			"#include \"../include/r.h\"\nint main() { return fromr; }\n", ft.proj, nil, false},
		{"system headers", "proj/m.cpp",
			"#include <vector>\n#include <stdio.h>\n#include <bits/stdc++.h>\nint main() { std::vector<int> v; printf(\"%zu\", v.size()); }\n", "", nil, false},
		{"system headers in C", "proj/m.c",
			"#include <stdio.h>\n#include <stdlib.h>\nint main(void) { printf(\"hi\"); return EXIT_SUCCESS; }\n", "", nil, false},
		{"main file that does not exist on disk", "proj/not_on_disk.cpp",
			"#include \"h.h\"\n#include <vector>\nint main() { return fromh; }\n", "", nil, false},
		{"main file in a directory that does not exist", "no/such/dir/x.cpp",
			"#include <vector>\nint main() { std::vector<int> v; return int(v.size()); }\n", "", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := checkers.SessionOptions{Filename: filepath.Join(ft.base, tc.file), Flags: tc.flags, Root: tc.root}
			if tc.relative {
				t.Chdir(filepath.Dir(opts.Filename)) // the shim starts in the test's directory
				opts.Filename = filepath.Base(opts.Filename)
			}
			if v, _ := sessionVerdict(t, run(t, c, opts, tc.text)); !v.OK {
				t.Fatalf("rejected: %v", v)
			}
		})
	}
}

// Without a project root only the checked file's own directory is the project: the same
// include that works under Root is refused.
func TestRootWidensTheProject(t *testing.T) {
	ft := newFileTree(t)
	c := newChecker(t, Options{})
	text := "#include \"../include/r.h\"\nint main() { return fromr; }\n"
	file := filepath.Join(ft.proj, "src", "m.cpp")
	v, first := sessionVerdict(t, run(t, c, checkers.SessionOptions{Filename: file}, text))
	if v.OK || first.Cat != checkers.CatFatal || !strings.Contains(first.Diag, "file not found") {
		t.Fatalf("without Root: %v, want a fatal \"file not found\"", v)
	}
	if v, _ := sessionVerdict(t, run(t, c, checkers.SessionOptions{Filename: file, Root: ft.proj}, text)); !v.OK {
		t.Fatalf("with Root %s: %v", ft.proj, v)
	}
	// The root is part of a checkpoint's identity: a prefix checked under one root is not
	// resumed under another.
	if resolve(checkers.SessionOptions{Filename: file}).key == resolve(checkers.SessionOptions{Filename: file, Root: ft.proj}).key {
		t.Fatal("sessions with different roots share a checkpoint key")
	}
}

// #embed (C23, and C++ as an extension) reads files like #include does, through the same guard:
// outside the roots it is "file not found" and __has_embed is false, although plain clang embeds
// the files; inside the roots it works.
func TestEmbedSeesOnlyTheRoots(t *testing.T) {
	ft := newFileTree(t)
	c := newChecker(t, Options{})
	for _, path := range []string{ft.secret, "/etc/passwd", "../outside/secret.h", "esc.h"} {
		t.Run(path, func(t *testing.T) {
			text := "const unsigned char d[] = {\n#embed \"" + path + "\"\n};\n"
			evs := run(t, c, checkers.SessionOptions{Filename: filepath.Join(ft.proj, "e.c"), Flags: []string{"-std=c23"}}, text)
			v, first := sessionVerdict(t, evs)
			if v.OK || first == nil || !strings.Contains(first.Diag, "file not found") {
				t.Fatalf("#embed %q: %v, want \"file not found\"", path, v)
			}
			if w := wholeFile(t, ft.proj, "e.c", []string{"-std=c23"}, text); !w.OK {
				t.Fatalf("whole-file clang cannot embed %q either (%v): the test proves nothing", path, w)
			}
			probe := "#if __has_embed(\"" + path + "\")\n#error seen\n#endif\nint x;\n"
			s, err := c.Start(context.Background(), checkers.SessionOptions{Filename: filepath.Join(ft.proj, "p.c"), Flags: []string{"-std=c23"}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			submitAll(t, s, []string{probe}) // one chunk: the conditional is not cut
			if v, _ := sessionVerdict(t, collect(t, s)); !v.OK {
				t.Fatalf("__has_embed(%q) saw the file: %v", path, v)
			}
		})
	}
}

// A system include directory's headers may be symlinks to files outside every root (Debian 13's
// /usr/include/x86_64-linux-gnu/asm/*.h point into /usr/lib/linux/uapi/): they are read as Clang
// reads them, by the path spelled under the -isystem directory. Nothing else widens: ".." out of
// the directory, a symlink to /proc or /dev, and a symlink out of a -isystem directory inside the
// project stay "file not found", although whole-file clang reads each.
func TestSystemHeadersThroughSymlinks(t *testing.T) {
	base := t.TempDir()
	proj, sys := filepath.Join(base, "proj"), filepath.Join(base, "sys")
	vendor := filepath.Join(proj, "vendor")
	secret := filepath.Join(base, "outside", "secret.h")
	for p, text := range map[string]string{
		secret: "int secret = ;\n", // a syntax error if it were ever read
		filepath.Join(base, "uapi", "asm", "hydra_errno.h"): "int fromuapi = 5;\n",
		filepath.Join(proj, "keep"):                         "",
		filepath.Join(vendor, "keep"):                       "",
		filepath.Join(sys, "asm", "keep"):                   "",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		filepath.Join(sys, "asm", "hydra_errno.h"): "../../uapi/asm/hydra_errno.h", // relative, as Debian's
		filepath.Join(sys, "environ.h"):            "/proc/self/environ",
		filepath.Join(sys, "stdin.h"):              "/dev/stdin",
		filepath.Join(sys, "esc.h"):                secret, // the system's own: allowed, see below
		filepath.Join(vendor, "esc.h"):             secret,
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	c := newChecker(t, Options{})
	file := filepath.Join(proj, "m.cpp")
	isys := []string{"-isystem", sys}

	ok := "#include <asm/hydra_errno.h>\nint main() { return fromuapi; }\n"
	if v, _ := sessionVerdict(t, run(t, c, checkers.SessionOptions{Filename: file, Flags: isys}, ok)); !v.OK {
		t.Fatalf("<asm/hydra_errno.h> through a symlink in a -isystem directory: %v", v)
	}
	// The same header named by a -I directory (the user's, not a system one) is judged by its
	// real path, outside every root.
	if v, first := sessionVerdict(t, run(t, c, checkers.SessionOptions{Filename: file, Flags: []string{"-I" + sys}}, ok)); v.OK || first == nil || !strings.Contains(first.Diag, "file not found") {
		t.Fatalf("<asm/hydra_errno.h> through -I: %v, want \"file not found\"", v)
	}
	// A system directory's symlink to a regular file is the system's: read, syntax error and all.
	if v, _ := sessionVerdict(t, run(t, c, checkers.SessionOptions{Filename: file, Flags: isys}, "#include <esc.h>\nint main() { return 0; }\n")); v.OK || strings.Contains(v.Diag, "file not found") {
		t.Fatalf("<esc.h> in the -isystem directory: %v, want its syntax error", v)
	}

	cases := []struct {
		name, include string
		flags         []string
	}{
		{"dot-dot out of a system directory", "<asm/../../outside/secret.h>", isys},
		{"system symlink into /proc", "<environ.h>", isys},
		{"system symlink to /dev/stdin", "<stdin.h>", isys},
		{"-isystem directory inside the project", "<esc.h>", []string{"-isystem", vendor}},
		{"absolute path into /proc", "</proc/self/environ>", isys},
		{"absolute path to /etc/passwd", "</etc/passwd>", isys},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text := "#include " + tc.include + "\nint main() { return 0; }\n"
			v, first := sessionVerdict(t, run(t, c, checkers.SessionOptions{Filename: file, Flags: tc.flags}, text))
			if v.OK || first == nil || first.Cat != checkers.CatFatal || !strings.Contains(first.Diag, "file not found") {
				t.Fatalf("include %s: %v, want a fatal \"file not found\"", tc.include, v)
			}
			if tc.include == "<stdin.h>" {
				return // whole-file clang would read its own standard input
			}
			if w := wholeFile(t, proj, "m.cpp", tc.flags, text); strings.Contains(w.Diag, "file not found") {
				t.Fatalf("whole-file clang cannot find %s either (%v): the test proves nothing", tc.include, w)
			}
		})
	}
}
