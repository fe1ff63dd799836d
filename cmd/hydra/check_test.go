package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/chunk"
	"github.com/hydra-lsp/hydra/checkers/lang"
)

// runHydraCheck runs the built binary and returns stdout, stderr and the exit status.
func runHydraCheck(t *testing.T, bin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"check"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("hydra check %q: %v", args, err)
		}
		return out.String(), errb.String(), cmd.ProcessState.ExitCode()
	case <-time.After(3 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("hydra check %q hangs", args)
		return "", "", -1
	}
}

// jsonEvents parses --json output, checking that each line has exactly the contract's keys in
// the contract's order.
func jsonEvents(t *testing.T, out string) []map[string]any {
	t.Helper()
	keys := map[string][]string{
		"progress": {"event", "off", "cat"},
		"chkpt":    {"event", "off", "id"},
		"error":    {"event", "off", "line", "col", "cat", "diag"},
		"done":     {"event", "ok"},
	}
	keyRe := regexp.MustCompile(`"([a-z]+)":`)
	var evs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not a JSON line: %q: %v", line, err)
		}
		kind, _ := ev["event"].(string)
		want, ok := keys[kind]
		if !ok {
			t.Fatalf("unknown event %q in %q", kind, line)
		}
		var got []string
		for _, m := range keyRe.FindAllStringSubmatch(line, -1) {
			got = append(got, m[1])
		}
		if kind == "error" {
			// The diagnostic text may itself contain "word": patterns; compare the fixed prefix.
			got = got[:min(len(got), len(want))]
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("%s event keys %v, want %v: %s", kind, got, want, line)
		}
		evs = append(evs, ev)
	}
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	return evs
}

const (
	okCpp = `#include <vector>
#include <cstdio>

int sum(const std::vector<int> &v) {
  int s = 0;
  for (int x : v) s += x;
  return s;
}

int main() {
  std::printf("%d\n", sum({1, 2, 3}));
  return 0;
}
`
	badCpp = `#include <vector>

int main() {
  std::vector<int> v;
  v.push(1);
  return 0;
}
`
	// Valid C, invalid C++ ("class" is a keyword there).
	cOnly = "int main(void) {\n  int class = 1;\n  return class - 1;\n}\n"
	// Needs -DN=… to compile.
	needsDefine = "int a[N];\nint main(void) { return 0; }\n"
)

// TestCheckCLI runs the real binary (built here) on files, as tools will.
func TestCheckCLI(t *testing.T) {
	bin := hydraBin
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}

	t.Run("accepted file streams progress to its end then done ok", func(t *testing.T) {
		f := write("ok.cpp", okCpp)
		out, errOut, code := runHydraCheck(t, bin, nil, "--json", f)
		if code != 0 {
			t.Fatalf("exit %d, want 0\n%s%s", code, out, errOut)
		}
		evs := jsonEvents(t, out)
		last := evs[len(evs)-1]
		if last["event"] != "done" || last["ok"] != true {
			t.Fatalf("last event %v, want done ok", last)
		}
		prev, progress, chkpts := -1.0, 0, 0
		for _, ev := range evs {
			switch ev["event"] {
			case "progress":
				off := ev["off"].(float64)
				if off <= prev {
					t.Fatalf("progress offsets not increasing: %v after %v", off, prev)
				}
				prev = off
				progress++
			case "chkpt":
				chkpts++
				if ev["off"].(float64) != float64(len("#include <vector>\n#include <cstdio>\n")) {
					t.Errorf("checkpoint at %v, want the end of the preamble", ev["off"])
				}
			case "error":
				t.Fatalf("error on a valid file: %v", ev)
			}
		}
		if int(prev) != len(okCpp) {
			t.Fatalf("last progress at %v, file has %d bytes", prev, len(okCpp))
		}
		if progress < 8 || chkpts != 1 {
			t.Fatalf("%d progress events and %d checkpoints, want ≥ 8 (line by line) and 1 (preamble)", progress, chkpts)
		}
	})

	t.Run("--checkpoint-every adds checkpoints after the preamble one", func(t *testing.T) {
		f := write("every.cpp", okCpp)
		out, errOut, code := runHydraCheck(t, bin, nil, "--json", "--checkpoint-every", "2", f)
		if code != 0 {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
		codeChunks := 0
		for _, c := range chunk.Split(okCpp, chunk.Options{}) {
			if c.Cat != checkers.BoundaryPreamble {
				codeChunks++
			}
		}
		var offs []float64
		for _, ev := range jsonEvents(t, out) {
			if ev["event"] == "chkpt" {
				offs = append(offs, ev["off"].(float64))
			}
		}
		if want := 1 + codeChunks/2; len(offs) != want {
			t.Fatalf("%d checkpoints at %v, want %d (preamble + every 2nd of %d chunks)", len(offs), offs, want, codeChunks)
		}
	})

	t.Run("a file of more than lang.MaxChunks chunks goes in merged pieces, its error on its line", func(t *testing.T) {
		// 70,000 one-declaration lines, the chunker's 70,000 chunks: at most MaxChunks pieces
		// reach the checker, and the error on line 69,990 is still reported on that line.
		const lines, bad = 70000, 69990
		var b strings.Builder
		b.WriteString("#include <stddef.h>\n")
		for i := 2; i <= lines; i++ {
			if i == bad {
				b.WriteString("int v_bad = undeclared_name;\n")
				continue
			}
			fmt.Fprintf(&b, "int v%d;\n", i)
		}
		f := write("big.c", b.String())
		out, errOut, code := runHydraCheck(t, bin, nil, "--json", f)
		if code != 1 {
			t.Fatalf("exit %d, want 1\n%s", code, errOut)
		}
		progress, firstLine := 0, 0.0
		for _, ev := range jsonEvents(t, out) {
			switch ev["event"] {
			case "progress":
				progress++
			case "error":
				if firstLine == 0 {
					firstLine = ev["line"].(float64)
				}
			}
		}
		if progress == 0 || progress > lang.MaxChunks {
			t.Errorf("%d progress events, want 1..%d (merged pieces)", progress, lang.MaxChunks)
		}
		if firstLine != bad {
			t.Errorf("first error on line %v, want %d", firstLine, bad)
		}
	})

	t.Run("rejected file reports the error then done not ok", func(t *testing.T) {
		f := write("bad.cpp", badCpp)
		out, errOut, code := runHydraCheck(t, bin, nil, "--json", f)
		if code != 1 {
			t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
		}
		evs := jsonEvents(t, out)
		var first map[string]any
		for _, ev := range evs {
			if ev["event"] == "error" {
				first = ev
				break
			}
		}
		if first == nil {
			t.Fatalf("no error event:\n%s", out)
		}
		wantOff := strings.Index(badCpp, "push")
		if first["line"] != 5.0 || first["col"] != 5.0 || first["off"] != float64(wantOff) || first["cat"] != "no_member" ||
			!strings.Contains(first["diag"].(string), "no member named 'push'") {
			t.Fatalf("error event %v, want line 5 col 5 off %d no_member \"no member named 'push'…\"", first, wantOff)
		}
		if last := evs[len(evs)-1]; last["event"] != "done" || last["ok"] != false {
			t.Fatalf("last event %v, want done ok=false", last)
		}
	})

	t.Run("human output names file, line, column, message and category", func(t *testing.T) {
		f := write("bad2.cpp", badCpp)
		out, _, code := runHydraCheck(t, bin, nil, f)
		if code != 1 {
			t.Fatalf("exit %d, want 1", code)
		}
		re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(f) + `:5:5: error: no member named 'push' in .*\[no_member\]$`)
		if !re.MatchString(out) || !strings.Contains(out, "rejected") {
			t.Fatalf("human output:\n%s", out)
		}
		out, _, code = runHydraCheck(t, bin, nil, write("ok2.cpp", okCpp))
		if code != 0 || !strings.Contains(out, "accepted") || strings.Contains(out, "error") {
			t.Fatalf("exit %d, human output:\n%s", code, out)
		}
	})

	tests := []struct {
		name  string
		file  string
		text  string
		flags []string // after --
		code  int
	}{
		{"a .c file is checked as C", "k.c", cOnly, nil, 0},
		{"any other extension is C++", "k.cc", cOnly, nil, 1},
		{"-x after -- overrides the extension", "k2.c", cOnly, []string{"-x", "c++"}, 1},
		{"-std after -- is passed on", "k3.c", "int main(void) {\n  for (int i = 0; i < 1; i++) {}\n  return 0;\n}\n", []string{"-std=c89", "-pedantic-errors"}, 1},
		{"-D after -- is passed on", "d.c", needsDefine, []string{"-DN=3"}, 0},
		{"without the define it is rejected", "d2.c", needsDefine, nil, 1},
		{"unterminated comment at end of input", "uc.c", "int a;\n/* never closed\nint b;\n", nil, 1},
		{"invalid UTF-8", "u.c", "int a;\nconst char *s = \"\xff\xfe\";\nint \xc3(void);\n", nil, 1},
		{"binary data", "bin.cpp", string(bytes.Repeat([]byte{0, 1, 2, 0xff, '\n', '{', '"', 0x80}, 512)), nil, 1},
		{"a 5 MB line", "long.c", "const char *s = \"" + strings.Repeat("x", 5<<20) + "\";\nint main(void) { return 0; }\n", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := write(tt.file, tt.text)
			args := []string{"--json"}
			if tt.flags != nil {
				args = append(append(args, "--"), tt.flags...)
			}
			out, errOut, code := runHydraCheck(t, bin, nil, append(args, f)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, out, errOut)
			}
			evs := jsonEvents(t, out)
			if last := evs[len(evs)-1]; last["event"] != "done" || last["ok"] != (tt.code == 0) {
				t.Fatalf("last event %v", last)
			}
		})
	}

	usage := []struct {
		name string
		env  []string
		args []string
		msg  string
	}{
		{"no file", nil, nil, "no FILE"},
		{"missing file", nil, []string{filepath.Join(dir, "nope.c")}, "no such file"},
		{"unknown flag", nil, []string{"--bogus", "x.c"}, "not defined"},
		{"two files", nil, []string{"a.c", "b.c"}, "one FILE"},
		{"shim missing", []string{"HYDRA_CLANG_SHIM=" + filepath.Join(dir, "no-shim")}, []string{write("s.c", cOnly)}, "shim"},
	}
	for _, tt := range usage {
		t.Run("exit 2: "+tt.name, func(t *testing.T) {
			out, errOut, code := runHydraCheck(t, bin, tt.env, tt.args...)
			if code != 2 || !strings.Contains(errOut, tt.msg) {
				t.Fatalf("exit %d stderr %q, want 2 and %q (stdout %q)", code, errOut, tt.msg, out)
			}
		})
	}
}

func TestParseCheckArgs(t *testing.T) {
	tests := []struct {
		args  []string
		file  string
		flags []string
		json  bool
	}{
		{[]string{"a.c"}, "a.c", []string{"-x", "c"}, false},
		{[]string{"--json", "a.cpp"}, "a.cpp", []string{"-x", "c++"}, true},
		{[]string{"--json", "--", "-std=c++20", "a.cpp"}, "a.cpp", []string{"-x", "c++", "-std=c++20"}, true},
		{[]string{"a.h", "--", "-x", "c", "-DX"}, "a.h", []string{"-x", "c", "-DX"}, false},
		{[]string{"--", "-xc", "a.cpp"}, "a.cpp", []string{"-xc"}, false},
	}
	for _, tt := range tests {
		a, err := parseCheckArgs(tt.args, &bytes.Buffer{})
		if err != nil {
			t.Fatalf("%q: %v", tt.args, err)
		}
		if a.file != tt.file || a.json != tt.json || strings.Join(a.flags, " ") != strings.Join(tt.flags, " ") {
			t.Errorf("%q: got file %q flags %q json %v, want %q %q %v", tt.args, a.file, a.flags, a.json, tt.file, tt.flags, tt.json)
		}
	}
}

// TestCheckNamesTheFileAsWritten: the checker gets the file name as the command line wrote it,
// in the same working directory, as `clang -fsyntax-only FILE` does, so __FILE__ and
// __BASE_FILE__ (and the names in messages) are the same as clang's.
func TestCheckNamesTheFileAsWritten(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	text := "_Static_assert(sizeof(__FILE__) == sizeof(\"sub/named.c\"), \"file\");\n" +
		"_Static_assert(sizeof(__BASE_FILE__) == sizeof(\"sub/named.c\"), \"base\");\nint x;\n"
	if err := os.WriteFile(filepath.Join(dir, "sub", "named.c"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	clangBin, err := exec.LookPath("clang-19")
	if err != nil {
		t.Fatalf("clang-19: %v", err)
	}
	whole := exec.Command(clangBin, "-fsyntax-only", "-std=c11", "sub/named.c")
	whole.Dir = dir
	if out, err := whole.CombinedOutput(); err != nil {
		t.Fatalf("clang-19 rejects the reference text: %v\n%s", err, out)
	}
	shim, err := filepath.Abs("../../bin/hydra-clang-shim") // found from the module, not from dir
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(hydraBin, "check", "--", "-std=c11", "sub/named.c")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HYDRA_CLANG_SHIM="+shim)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hydra check rejects what clang accepts: %v\n%s", err, out)
	}
}
