package lsp

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestFlagsFoundAsClangdFindsThem(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "src", "deep")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(sub, "a.cpp")
	fs := newFlagStore(t.Logf, nil)
	defer fs.close()

	if got := fs.forFile(file, "cpp"); got.Source != "" || !reflect.DeepEqual(got.Flags, []string{"-xc++", "-std=c++17"}) {
		t.Fatalf("without a database: %+v", got)
	}

	writeFile(t, filepath.Join(root, "compile_flags.txt"), "-std=c++20\n-Iinclude\n\n-DX=1\n")
	fs.mu.Lock()
	fs.cache = map[string]flagSet{}
	fs.mu.Unlock()
	got := fs.forFile(file, "cpp")
	want := []string{"-xc++", "-std=c++20", "-I" + filepath.Join(root, "include"), "-DX=1"}
	if got.Source != filepath.Join(root, "compile_flags.txt") || !reflect.DeepEqual(got.Flags, want) {
		t.Fatalf("compile_flags.txt: %+v, want %v", got, want)
	}

	// A nearer compile_commands.json (in build/) wins over the farther compile_flags.txt.
	writeFile(t, filepath.Join(root, "src", "build", "compile_commands.json"), `[
	  {"directory": "`+sub+`", "file": "a.cpp", "command": "/usr/bin/c++ -I ../inc -DY -std=gnu++14 -o a.o -c a.cpp"},
	  {"directory": "`+sub+`", "file": "b.cpp", "arguments": ["c++", "-DB", "-c", "b.cpp"]}
	]`)
	fs.mu.Lock()
	fs.cache = map[string]flagSet{}
	fs.mu.Unlock()
	got = fs.forFile(file, "cpp")
	want = []string{"-xc++", "-I", filepath.Join(root, "src", "inc"), "-DY", "-std=gnu++14"}
	if !reflect.DeepEqual(got.Flags, want) {
		t.Fatalf("compile_commands.json: %+v, want %v", got, want)
	}
	// A file without an entry borrows its neighbour's flags.
	if got := fs.forFile(filepath.Join(sub, "new.c"), "c"); !reflect.DeepEqual(got.Flags, []string{"-xc", "-I", filepath.Join(root, "src", "inc"), "-DY", "-std=gnu++14"}) {
		t.Fatalf("neighbour's flags: %+v", got)
	}
}

func TestFlagsReloadWhenTheFileChanges(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "a.c")
	changed := make(chan struct{}, 10)
	fs := newFlagStore(t.Logf, func() { changed <- struct{}{} })
	defer fs.close()
	writeFile(t, filepath.Join(root, "compile_flags.txt"), "-DONE\n")
	if got := fs.forFile(file, "c"); !reflect.DeepEqual(got.Flags, []string{"-xc", "-std=c17", "-DONE"}) {
		t.Fatalf("first read: %+v", got)
	}
	writeFile(t, filepath.Join(root, "compile_flags.txt"), "-DTWO\n")
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no reload after compile_flags.txt changed")
	}
	if got := fs.forFile(file, "c"); !reflect.DeepEqual(got.Flags, []string{"-xc", "-std=c17", "-DTWO"}) {
		t.Fatalf("after the change: %+v", got)
	}
}

func TestSplitCommand(t *testing.T) {
	got := splitCommand(`cc -DMSG="hello world" -I'a b' x\ y.c`)
	want := []string{"cc", "-DMSG=hello world", "-Ia b", "x y.c"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("splitCommand = %q, want %q", got, want)
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
