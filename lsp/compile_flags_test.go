package lsp

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
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
	// A file without an entry borrows its neighbour's flags, but not a standard of the other
	// language (clang's InterpolatingCompilationDatabase drops it too when the language changes).
	if got := fs.forFile(filepath.Join(sub, "new.c"), "c"); !reflect.DeepEqual(got.Flags, []string{"-xc", "-std=c17", "-I", filepath.Join(root, "src", "inc"), "-DY"}) {
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

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStandardOfTheOtherLanguageIsDropped: one compile_flags.txt serves a project's C and C++
// files; its C++ standard must not reach a C file (clang refuses the pair), and the reverse.
func TestStandardOfTheOtherLanguageIsDropped(t *testing.T) {
	for _, tc := range []struct {
		lang        string
		in          []string
		want, drops string
	}{
		{"c", []string{"-std=c++17", "-Iinc"}, "-xc -std=c17 -Iinc", "-std=c++17"},
		{"c", []string{"--std=gnu++20"}, "-xc -std=c17", "--std=gnu++20"},
		{"c", []string{"-std=gnu11", "-DX"}, "-xc -std=gnu11 -DX", ""},
		{"cpp", []string{"-std=c11", "-Wall"}, "-xc++ -std=c++17 -Wall", "-std=c11"},
		{"cpp", []string{"-std=iso9899:1999"}, "-xc++ -std=c++17", "-std=iso9899:1999"},
		{"cpp", []string{"-std=c++20"}, "-xc++ -std=c++20", ""},
		{"c", []string{"-std=cl2.0"}, "-xc -std=cl2.0", ""}, // OpenCL's: not ours to judge
		{"c", []string{"-std=c++17", "-std=c11"}, "-xc -std=c11", "-std=c++17"},
	} {
		got, dropped := withLanguage(tc.in, tc.lang)
		if strings.Join(got, " ") != tc.want || strings.Join(dropped, " ") != tc.drops {
			t.Errorf("withLanguage(%q, %s) = %q, dropped %q; want %q, dropped %q",
				tc.in, tc.lang, got, dropped, tc.want, tc.drops)
		}
	}
}
