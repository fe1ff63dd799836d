package compiledb

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Every spelling of an option that writes a file, loads code or runs a program is dropped, with
// its value, and nothing of it reaches the kept flags.
func TestSanitizeDropsEverySpellingOfWritersAndLoaders(t *testing.T) {
	cases := []struct {
		args []string
		why  string
	}{
		{[]string{"-o", "out.o"}, WhyOwn},
		{[]string{"-oout.o"}, WhyOwn},
		{[]string{"-c"}, WhyOwn},
		{[]string{"-MD"}, WhyOutput},
		{[]string{"-MMD"}, WhyOutput},
		{[]string{"-MF", "a.d"}, WhyOutput},
		{[]string{"-MFa.d"}, WhyOutput},
		{[]string{"-MT", "echo pwned #"}, WhyOutput},
		{[]string{"-MTx"}, WhyOutput},
		{[]string{"-MQ", "x"}, WhyOutput},
		{[]string{"-MJ", "db.json"}, WhyOutput},
		{[]string{"-MJdb.json"}, WhyOutput},
		{[]string{"-Wp,-MD,dep.d"}, WhyOutput},
		{[]string{"-Wp,-MMD,dep.d"}, WhyOutput},
		{[]string{"--serialize-diagnostics", "d.dia"}, WhyOutput},
		{[]string{"--serialize-diagnostics=d.dia"}, WhyOutput},
		{[]string{"-fmodules-cache-path=/tmp/mc"}, WhyOutput},
		{[]string{"-fcrash-diagnostics-dir=/tmp/crash"}, WhyOutput},
		{[]string{"-ftime-trace"}, WhyOutput},
		{[]string{"-ftime-trace=t.json"}, WhyOutput},
		{[]string{"-save-temps"}, WhyOutput},
		{[]string{"--save-temps=obj"}, WhyOutput},
		{[]string{"-fproc-stat-report=r.csv"}, WhyOutput},
		{[]string{"-fsave-optimization-record"}, WhyOutput},
		{[]string{"-fstack-usage"}, WhyOutput},
		{[]string{"-Xclang", "-dependency-file"}, WhyLoad},
		{[]string{"-Xclang", "-header-include-file"}, WhyLoad},
		{[]string{"-Xclang", "-dependency-dot"}, WhyLoad},
		{[]string{"-Xclang", "-load"}, WhyLoad},
		{[]string{"-Xclang", "-plugin"}, WhyLoad},
		{[]string{"-Xclang", "-stats-file=s"}, WhyLoad},
		{[]string{"-fplugin=./evil.so"}, WhyLoad},
		{[]string{"-fplugin-arg-evil-x"}, WhyLoad},
		{[]string{"-fpass-plugin=./evil.so"}, WhyLoad},
		{[]string{"-mllvm", "-info-output-file=x"}, WhyLoad},
		{[]string{"--config", "evil.cfg"}, WhyLoad},
		{[]string{"--config=evil.cfg"}, WhyLoad},
		{[]string{"-B", "./bin"}, WhyLoad},
		{[]string{"-B./bin"}, WhyLoad},
		{[]string{"-fprofile-instr-use=p.profdata"}, WhyLoad},
		{[]string{"-fprofile-generate"}, WhyLoad},
		{[]string{"-include-pch", "x.pch"}, WhyLoad},
		{[]string{"-fmodule-file=x.pcm"}, WhyLoad},
		{[]string{"-fmodules"}, WhyLoad},
		{[]string{"-fsanitize-ignorelist=i.txt"}, WhyLoad},
		{[]string{"-Xpreprocessor", "-MD"}, WhyLoad},
		{[]string{"-fno-integrated-cc1"}, WhyLoad},
		{[]string{"-cc1"}, WhyLoad},
		{[]string{"-###"}, WhyOutput},
		{[]string{"-print-search-dirs"}, WhyOutput},
		{[]string{"-Wl,-rpath,/x"}, WhyLink},
		{[]string{"-lm"}, WhyLink},
		{[]string{"-totally-new-option"}, WhyUnknown},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			args := append([]string{"-DKEEP=1"}, c.args...)
			args = append(args, "-Iinc")
			kept, dropped := Sanitize(args, "/proj", "/proj")
			if want := []string{"-DKEEP=1", "-I/proj/inc"}; !reflect.DeepEqual(kept, want) {
				t.Errorf("kept %q, want %q", kept, want)
			}
			if len(dropped) != 1 || dropped[0].Arg != strings.Join(c.args, " ") || dropped[0].Why != c.why {
				t.Errorf("dropped %+v, want %q (%s)", dropped, strings.Join(c.args, " "), c.why)
			}
		})
	}
}

// What changes how code is parsed is kept, include paths made absolute in every spelling.
func TestSanitizeKeepsWhatChangesParsing(t *testing.T) {
	args := []string{
		"-DA", "-D", "B=2", "-UC", "-Iinc", "-I", "inc2", "-iquote", "q", "-isystem", "/usr/x",
		"-idirafter", "after", "-include", "pre.h", "-imacros", "m.h", "--sysroot=sys", "-isysroot", "sdk",
		"-std=c89", "--std", "c++17", "-ansi", "-x", "c", "-Wall", "-Werror", "-Wno-unused", "-w", "-pedantic",
		"-pedantic-errors", "-fno-exceptions", "-fms-extensions", "-m64", "-march=native", "--target=x86_64-linux-gnu",
		"-O2", "-g", "-pthread", "-undef", "-nostdinc", "-trigraphs", "-resource-dir", "rd",
	}
	kept, dropped := Sanitize(args, "/p", "/p")
	want := []string{
		"-DA", "-D", "B=2", "-UC", "-I/p/inc", "-I", "/p/inc2", "-iquote", "/p/q", "-isystem", "/usr/x",
		"-idirafter", "/p/after", "-include", "/p/pre.h", "-imacros", "/p/m.h", "--sysroot=/p/sys", "-isysroot", "/p/sdk",
		"-std=c89", "--std", "c++17", "-ansi", "-x", "c", "-Wall", "-Werror", "-Wno-unused", "-w", "-pedantic",
		"-pedantic-errors", "-fno-exceptions", "-fms-extensions", "-m64", "-march=native", "--target=x86_64-linux-gnu",
		"-O2", "-g", "-pthread", "-undef", "-nostdinc", "-trigraphs", "-resource-dir", "/p/rd",
	}
	if !reflect.DeepEqual(kept, want) {
		t.Errorf("kept\n %q\nwant\n %q", kept, want)
	}
	if len(dropped) != 0 {
		t.Errorf("dropped %+v", dropped)
	}
}

// A response file is read only inside the project, and what it holds is sanitized too.
func TestSanitizeResponseFiles(t *testing.T) {
	proj := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(proj, "flags.rsp"), []byte("-DIN=1 -MJ db.json \"-Iinc dir\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "x.rsp"), []byte("-DOUT=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "x.rsp"), filepath.Join(proj, "link.rsp")); err != nil {
		t.Fatal(err)
	}
	kept, dropped := Sanitize([]string{"@flags.rsp", "@" + filepath.Join(outside, "x.rsp"), "@link.rsp"}, proj, proj)
	if want := []string{"-DIN=1", "-I" + filepath.Join(proj, "inc dir")}; !reflect.DeepEqual(kept, want) {
		t.Errorf("kept %q, want %q", kept, want)
	}
	var whys []string
	for _, d := range dropped {
		whys = append(whys, d.Arg+": "+d.Why)
	}
	want := []string{"-MJ db.json: " + WhyOutput, "@" + filepath.Join(outside, "x.rsp") + ": " + WhyRespOut, "@link.rsp: " + WhyRespOut}
	if !reflect.DeepEqual(whys, want) {
		t.Errorf("dropped %q, want %q", whys, want)
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

// The database is found as clangd finds it, and the file's own entry (or its nearest
// neighbour of the same language) gives the flags; the compiler it names is never looked at.
func TestFindWalksUpAndPicksTheEntry(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "build", CommandsName), `[
	 {"directory": "`+root+`/build", "file": "../src/a.c", "command": "/nonexistent/gcc -DA -std=c89 -I../include -o a.o -c ../src/a.c"},
	 {"directory": "`+root+`/build", "file": "../src/b.cpp", "arguments": ["g++", "-DB", "-MD", "-MF", "b.d", "-c", "../src/b.cpp"]}
	]`)
	var visited []string
	f, err := Find(filepath.Join(root, "src", "a.c"), "", func(d string) { visited = append(visited, d) })
	if err != nil {
		t.Fatal(err)
	}
	if f.Source != filepath.Join(root, "build", CommandsName) {
		t.Errorf("source %q", f.Source)
	}
	if want := []string{"-DA", "-std=c89", "-I" + filepath.Join(root, "include")}; !reflect.DeepEqual(f.Args, want) {
		t.Errorf("a.c: %q, want %q", f.Args, want)
	}
	if len(visited) < 2 || visited[0] != filepath.Join(root, "src") {
		t.Errorf("visited %q: want the file's directory first", visited)
	}
	// A new C++ file takes the C++ entry; a new C file the C one.
	if f, _ := Find(filepath.Join(root, "src", "new.cc"), "", nil); !reflect.DeepEqual(f.Args, []string{"-DB"}) {
		t.Errorf("new.cc: %q, want the C++ entry's flags", f.Args)
	}
	if r := f.Report(); r != "" {
		t.Errorf("report %q: -c and -o are in every command, not worth telling", r)
	}
	// An explicit directory is the only place looked.
	other := t.TempDir()
	writeFile(t, filepath.Join(other, FlagsName), "-DOTHER\n-Iinc\n")
	if f, err := Find(filepath.Join(root, "src", "a.c"), other, nil); err != nil || !reflect.DeepEqual(f.Args, []string{"-DOTHER", "-I" + filepath.Join(other, "inc")}) {
		t.Errorf("explicit dir: %q, %v", f.Args, err)
	}
	if _, err := Find(filepath.Join(root, "src", "a.c"), t.TempDir(), nil); err == nil {
		t.Error("an explicit directory without a database is not an error")
	}
	// A malformed database is a problem, and the search goes on.
	writeFile(t, filepath.Join(root, "src", CommandsName), "{not json")
	f, err = Find(filepath.Join(root, "src", "a.c"), "", nil)
	if err != nil || f.Source != filepath.Join(root, "build", CommandsName) || len(f.Problems) != 1 {
		t.Errorf("after a malformed database: %+v, %v", f, err)
	}
}

func TestSplitCommand(t *testing.T) {
	got := SplitCommand(`cc -DMSG="hello world" -I'a b' x\ y.c`)
	want := []string{"cc", "-DMSG=hello world", "-Ia b", "x y.c"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("SplitCommand = %q, want %q", got, want)
	}
}
