package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// slowConstexpr is a file whose one constexpr call runs n loop iterations when it is checked.
func slowConstexpr(n int) string {
	return fmt.Sprintf(`constexpr unsigned long long spin(unsigned long long n) {
  unsigned long long s = 0;
  for (unsigned long long i = 0; i < n; ++i) s += i ^ (s >> 3);
  return s;
}
constexpr unsigned long long v = spin(%d);
int main() { return v == 1; }
`, n)
}

// --timeout is the per-chunk limit: a chunk that takes longer ends the run with a clear error,
// and with no limit (0) or a long one the same kind of chunk is accepted when it finishes.
func TestCheckTimeoutIsThePerChunkLimit(t *testing.T) {
	dir := t.TempDir()
	steps := "-fconstexpr-steps=2000000000"
	slow := filepath.Join(dir, "slow.cpp") // hundreds of millions of steps: many seconds of CPU
	if err := os.WriteFile(slow, []byte(slowConstexpr(200_000_000)), 0o644); err != nil {
		t.Fatal(err)
	}
	quick := filepath.Join(dir, "quick.cpp") // the same loop, short enough to finish at once
	if err := os.WriteFile(quick, []byte(slowConstexpr(100_000)), 0o644); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := runHydraCheck(t, hydraBin, nil, "--timeout", "1s", slow, "--", steps)
	if code != 2 || !strings.Contains(errOut, "checker timed out: no answer for 1s") {
		t.Fatalf("--timeout 1s on a slow chunk: exit %d, want 2 with a timeout error\n%s%s", code, out, errOut)
	}
	for _, limit := range []string{"0", "10m"} {
		out, errOut, code := runHydraCheck(t, hydraBin, nil, "--timeout", limit, quick, "--", steps)
		if code != 0 {
			t.Fatalf("--timeout %s on a chunk that finishes: exit %d, want 0 (accepted)\n%s%s", limit, code, out, errOut)
		}
	}
	if _, errOut, code := runHydraCheck(t, hydraBin, nil, "--timeout", "-1s", quick); code != 2 || !strings.Contains(errOut, "--timeout") {
		t.Fatalf("negative --timeout: exit %d, want 2 with an error naming --timeout\n%s", code, errOut)
	}
}

// Input that is not a regular file is refused before anything is read: a device (/dev/zero
// would be read until memory runs out), a FIFO with no writer (the open would block), a
// socket and a directory. hydra generate refuses them as its prompt and as --suffix.
func TestInputMustBeARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.cpp")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock.cpp")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	sub := filepath.Join(dir, "dir.cpp")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	ok := filepath.Join(dir, "ok.cpp")
	if err := os.WriteFile(ok, []byte("int f() {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"/dev/zero": "a character device",
		fifo:        "a FIFO",
		sock:        "a socket",
		sub:         "a directory",
	}
	for path, kind := range cases {
		want := path + ": not a regular file (" + kind + ")"
		_, errOut, code := runHydraCheck(t, hydraBin, nil, "--", "-x", "c++", path)
		if code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("hydra check %s: exit %d, stderr %q; want 2 and %q", path, code, errOut, want)
		}
		gen := func(args ...string) (string, int) {
			cmd := exec.Command(hydraBin, append([]string{"generate", "--model-url", "http://127.0.0.1:1/v1", "--quiet"}, args...)...)
			cmd.Env = append(os.Environ(), "HYDRA_MODEL_WAIT=0s")
			b, _ := cmd.CombinedOutput()
			return string(b), cmd.ProcessState.ExitCode()
		}
		if out, code := gen(path); code != 2 || !strings.Contains(out, want) {
			t.Errorf("hydra generate %s: exit %d, output %q; want 2 and %q", path, code, out, want)
		}
		if out, code := gen("--suffix", path, ok); code != 2 || !strings.Contains(out, "--suffix: "+want) {
			t.Errorf("hydra generate --suffix %s: exit %d, output %q; want 2 and %q", path, code, out, "--suffix: "+want)
		}
	}
	// A link to a regular file is read as the file.
	link := filepath.Join(dir, "link.cpp")
	if err := os.Symlink(ok, link); err != nil {
		t.Fatal(err)
	}
	if b, err := readRegularFile(link); err != nil || string(b) != "int f() {\n" {
		t.Fatalf("readRegularFile(link) = %q, %v", b, err)
	}
}

// hydra generate --help shows --model as optional (the one model a server serves is used).
func TestGenerateHelpShowsModelOptional(t *testing.T) {
	out, _ := exec.Command(hydraBin, "generate", "--help").CombinedOutput()
	usage, _, _ := strings.Cut(string(out), "\n")
	if !strings.Contains(usage, "[--model NAME]") || strings.Contains(strings.ReplaceAll(usage, "[--model NAME]", ""), "--model NAME") {
		t.Fatalf("usage line %q, want --model shown as optional", usage)
	}
}
