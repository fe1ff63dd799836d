// Package realproject sets up real C and C++ projects for the tests that regenerate their
// functions (issue 34, "How it is tested"):
//   - googletest (C++, its test framework, a 6,795-line file, templates, a function inside
//     #if), as Debian ships its source in /usr/src/googletest (package googletest;
//     scripts/install-deps.sh test installs it and cmake); nothing of it is committed here;
//   - cJSON (C89 built with -std=c89 -pedantic -Werror and more, a 3,191-line file), pinned in
//     testdata/cjson (its upstream files at commit a29814f285cc, MIT licence, LICENSE there).
//
// Each is copied to a temporary directory and configured with CMake and GCC, so that
// compile_commands.json holds GCC's commands as on a user's machine; Cuts are real function
// bodies to regenerate, each with the realistic mistake the scripted stand-in model makes in
// its first attempt.
package realproject

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/hydra-lsp/hydra/engine"
	"github.com/hydra-lsp/hydra/engine/model/modeltest"
)

// GoogletestSrc is where Debian's googletest package puts the project's source.
const GoogletestSrc = "/usr/src/googletest"

// Project is a configured copy of a project.
type Project struct {
	// Dir is the copy's root; Build its CMake build directory (holding compile_commands.json).
	Dir, Build string
	commands   []Command
}

// Command is one entry of compile_commands.json.
type Command struct {
	Directory string `json:"directory"`
	Command   string `json:"command"`
	File      string `json:"file"`
}

// Googletest copies googletest and configures it with GCC, samples on (so that test files that
// use the framework are in the database). It fails t, naming the package to install, when
// cmake, GCC or the source is missing.
func Googletest(t testing.TB) *Project {
	t.Helper()
	if _, err := os.Stat(filepath.Join(GoogletestSrc, "CMakeLists.txt")); err != nil {
		t.Fatalf("googletest's source is needed (Debian package googletest; scripts/install-deps.sh test): %v", err)
	}
	return configure(t, GoogletestSrc, "googletest", "-DCMAKE_CXX_COMPILER=g++", "-Dgtest_build_samples=ON")
}

// CJSON copies the pinned cJSON and configures it with GCC and the project's own compiler
// flags (ENABLE_CUSTOM_COMPILER_FLAGS, on by default: -std=c89 -pedantic -Werror…), its tests
// off (their sources are not pinned).
func CJSON(t testing.TB) *Project {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	return configure(t, filepath.Join(filepath.Dir(here), "testdata", "cjson"), "cjson", "-DENABLE_CJSON_TEST=OFF")
}

// configure copies src to a temporary directory named name, configures it with CMake, GCC and
// args, and reads its compile_commands.json.
func configure(t testing.TB, src, name string, args ...string) *Project {
	t.Helper()
	for _, tool := range []string{"cmake", "gcc", "g++"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed for the real-project tests (scripts/install-deps.sh test): %v", tool, err)
		}
	}
	dir := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("cp", "-r", src, dir).CombinedOutput(); err != nil {
		t.Fatalf("copy %s: %v\n%s", name, err, out)
	}
	p := &Project{Dir: dir, Build: filepath.Join(dir, "build")}
	cmd := exec.Command("cmake", append([]string{"-S", dir, "-B", p.Build, "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
		"-DCMAKE_C_COMPILER=gcc"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cmake: %v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(p.Build, "compile_commands.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &p.commands); err != nil {
		t.Fatalf("compile_commands.json: %v", err)
	}
	return p
}

// Command returns the database's entry for file (a path under the project).
func (p *Project) Command(t testing.TB, file string) Command {
	t.Helper()
	want := filepath.Join(p.Dir, file)
	for _, c := range p.commands {
		if c.File == want {
			return c
		}
	}
	t.Fatalf("no entry for %s in compile_commands.json", want)
	return Command{}
}

// Compile runs the entry's own command (GCC), its object file sent to a temporary path, and
// fails t with GCC's output when it does not compile.
func (c Command) Compile(t testing.TB) {
	t.Helper()
	args := strings.Fields(c.Command)
	for i := range args {
		if args[i] == "-o" && i+1 < len(args) {
			args[i+1] = filepath.Join(t.TempDir(), "out.o")
		}
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = c.Directory
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the project's own command fails on the result: %v\n%s\n%s", err, c.Command, out)
	}
}

// Cut is a function body of a real file to regenerate.
type Cut struct {
	Name string
	File string // under the project
	// Sig is the line that opens the body (the prefix ends with it), unique in the file;
	// Close the line that closes it (the first one after Sig).
	Sig, Close string
	// Mistake and Fix: the first attempt has Mistake instead of Fix in the body's first line,
	// so the repair goes back to the start of the body.
	Mistake, Fix string
	// CompiledBy is the database entry whose command compiles File (itself, or a file that
	// #includes it).
	CompiledBy string
}

// GoogletestCuts are the bodies regenerated in googletest: one in a test file that uses the
// framework, one in the 6,795-line gtest.cc, one a function template, and one inside
// `#if GTEST_OS_LINUX … #endif` (gtest-port.cc), whose prefix ends in an open conditional that
// only the suffix closes.
var GoogletestCuts = []Cut{
	{Name: "test file using the framework", File: "googletest/samples/sample1_unittest.cc",
		Sig: "TEST(IsPrimeTest, Trivial) {\n", Close: "}\n", Mistake: "isPrime(0)", Fix: "IsPrime(0)",
		CompiledBy: "googletest/samples/sample1_unittest.cc"},
	{Name: "file over 2,000 lines", File: "googletest/src/gtest.cc",
		Sig: "static bool TestSuitePassed(const TestSuite* test_suite) {\n", Close: "}\n",
		Mistake: "test_suite->passed()", Fix: "test_suite->Passed()", CompiledBy: "googletest/src/gtest-all.cc"},
	{Name: "template", File: "googletest/src/gtest-printers.cc",
		Sig: "        PrintCharsAsStringTo(const CharType* begin, size_t len, ostream* os) {\n", Close: "}\n",
		Mistake: "GetCharWidthPrefix(begin)", Fix: "GetCharWidthPrefix(*begin)", CompiledBy: "googletest/src/gtest-all.cc"},
	{Name: "inside #if", File: "googletest/src/gtest-port.cc",
		Sig: "T ReadProcFileField(const std::string& filename, int field) {\n", Close: "}\n",
		Mistake: "std::strin dummy", Fix: "std::string dummy", CompiledBy: "googletest/src/gtest-all.cc"},
}

// CJSONCuts are the bodies regenerated in cJSON.c (3,191 lines, C89 under -Werror), each with a
// mistake only C89 makes one: a `//` comment (no comment in C89: two '/' tokens), and one on a
// directive line in a body that has its own #ifdef … #endif (extra tokens at the end of
// #ifdef, an error under -Werror).
var CJSONCuts = []Cut{
	{Name: "C89 under -Werror, file over 2,000 lines", File: "cJSON.c",
		Sig: "static cJSON_bool compare_double(double a, double b)\n{\n", Close: "}\n",
		Mistake: "fabs(a) : fabs(b); // the larger", Fix: "fabs(a) : fabs(b);", CompiledBy: "cJSON.c"},
	{Name: "body with its own #ifdef", File: "cJSON.c",
		Sig: "static unsigned char get_decimal_point(void)\n{\n", Close: "}\n",
		Mistake: "#ifdef ENABLE_LOCALES // from the locale", Fix: "#ifdef ENABLE_LOCALES", CompiledBy: "cJSON.c"},
}

// Split reads the cut's file in p and returns it whole (upstream), the text before the body
// (ending with Sig), the body and the text after it (starting with Close).
func (c Cut) Split(t testing.TB, p *Project) (upstream, prefix, body, suffix string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(p.Dir, c.File))
	if err != nil {
		t.Fatal(err)
	}
	upstream = string(b)
	if strings.Count(upstream, c.Sig) != 1 {
		t.Fatalf("%s: the signature line %q is not unique", c.File, c.Sig)
	}
	at := strings.Index(upstream, c.Sig) + len(c.Sig)
	end := strings.Index(upstream[at:], "\n"+c.Close)
	if end < 0 {
		t.Fatalf("%s: no line %q after %q", c.File, c.Close, c.Sig)
	}
	body = upstream[at : at+end+1]
	if first := body[:strings.IndexByte(body, '\n')+1]; !strings.Contains(first, c.Fix) {
		t.Fatalf("%s: the body's first line %q does not hold %q", c.File, first, c.Fix)
	}
	return upstream, upstream[:at], body, upstream[at+len(body):]
}

// Script is what the scripted stand-in model writes: the body with the mistake, then (prompted
// with the checker's feedback) the right one, each followed by the closing line and more code,
// as a model goes on.
func (c Cut) Script(body string) modeltest.Script {
	more := c.Close + "\nint more;\n"
	return modeltest.Script{Rules: []modeltest.Rule{
		{PromptContains: engine.FeedbackMarker, Text: body + more, Chunk: 4},
		{Text: strings.Replace(body, c.Fix, c.Mistake, 1) + more, Chunk: 4},
	}}
}
