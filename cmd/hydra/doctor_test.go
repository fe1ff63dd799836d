package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hydra-lsp/hydra/checkers/clang"
	"github.com/hydra-lsp/hydra/checkers/typescript"
	"github.com/hydra-lsp/hydra/engine/model/standin"
)

// doctorLines runs hydra doctor and returns its exit status and its lines by what they check.
func doctorLines(t *testing.T, args ...string) (int, map[string]string, string) {
	t.Helper()
	var out, errb strings.Builder
	code := doctor(args, &out, &errb)
	lines := map[string]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && (f[0] == "ok" || f[0] == "FAIL" || f[0] == "--") {
			lines[f[1]] = l
		}
	}
	return code, lines, out.String() + errb.String()
}

// On a working installation every part is found: the real checker answers (and says Clang's
// version, which only Clang itself can), the standard headers compile, the model server answers.
func TestDoctorOnAWorkingInstallation(t *testing.T) {
	t.Setenv("HYDRA_API_KEY", "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	srv := standin.Start(t, standin.Kinds[0], standin.Config{ContextLen: 8192})
	code, lines, all := doctorLines(t, "--model-url", srv.URL)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, all)
	}
	for what, want := range map[string]string{
		"version": "hydra ",
		"checker": "Clang 19.",
		"system":  "<vector>",
		"model":   srv.ModelName(),
		"cache":   "(writable)",
		// scripts/install-deps.sh test installs TypeScript 7 before the tests run.
		"typescript": "Version 7.",
	} {
		if l := lines[what]; !strings.HasPrefix(l, "ok") || !strings.Contains(l, want) {
			t.Errorf("%s line %q: want ok and %q\n%s", what, l, want, all)
		}
	}
}

// What is broken is named with its fix, and a checker that cannot run makes doctor fail.
func TestDoctorNamesWhatIsBroken(t *testing.T) {
	t.Setenv("HYDRA_API_KEY", "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	notExec := filepath.Join(t.TempDir(), "hydra-clang-shim")
	if err := os.WriteFile(notExec, []byte("not a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(clang.ShimEnv, notExec)
	t.Setenv(typescript.CompilerEnv, notExec+".tsc")
	// A port nobody listens on: take one, then free it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/v1"
	l.Close()

	code, lines, all := doctorLines(t, "--model-url", url, "--timeout", "5s")
	if code != 1 {
		t.Errorf("exit %d with a checker that cannot run, want 1:\n%s", code, all)
	}
	if l := lines["checker"]; !strings.HasPrefix(l, "FAIL") || !strings.Contains(l, notExec) {
		t.Errorf("checker line %q: want FAIL naming %s", l, notExec)
	}
	if l := lines["model"]; strings.HasPrefix(l, "ok") {
		t.Errorf("model line %q: a server that is down is not ok", l)
	}
	// TypeScript is optional: a compiler that is not there is named, and does not fail doctor.
	if l := lines["typescript"]; !strings.HasPrefix(l, "--") || !strings.Contains(l, notExec+".tsc") {
		t.Errorf("typescript line %q: want -- naming %s.tsc", l, notExec)
	}
	if !strings.Contains(all, "fix: ") {
		t.Errorf("no fix offered:\n%s", all)
	}
}
