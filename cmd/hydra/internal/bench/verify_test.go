package bench

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/cmd/hydra/internal/sandbox"
)

func needClang(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("clang++-19"); err != nil {
		t.Fatal("clang++-19 is required (install clang-19)")
	}
}

var task = Task{ID: "t", Lang: "c++", Filename: "t.cpp", Flags: []string{"-x", "c++", "-std=c++17"},
	Prompt: "#include <cstdlib>\nint twice(int x){\n",
	Test:   "int main(){ if (twice(3) != 6) abort(); }\n"}

func TestStaticAgreesWithClang(t *testing.T) {
	needClang(t)
	v := &Verifier{}
	if ok, msg := v.Static(context.Background(), task, task.Prompt+"  return 2*x;\n}\n"); !ok {
		t.Errorf("a correct program does not compile: %s", msg)
	}
	ok, msg := v.Static(context.Background(), task, task.Prompt+"  return 2*y;\n}\n")
	if ok || !strings.Contains(msg, "undeclared identifier 'y'") {
		t.Errorf("a wrong program: ok=%v, %q", ok, msg)
	}
}

func TestFunctionalRunsNothingUnlessAsked(t *testing.T) {
	needClang(t)
	v := &Verifier{}
	if ok, why := v.RunTests(context.Background(), task, task.Prompt+"  return 2*x;\n}\n"); ok || why != NotExecuted {
		t.Errorf("RunTests without Execute = %v, %q; want false, %q", ok, why, NotExecuted)
	}
}

func TestFunctionalRunsTheTestsInASandbox(t *testing.T) {
	needClang(t)
	if err := (&sandbox.Sandbox{}).Available(context.Background()); err != nil {
		t.Fatal(err) // in a chroot too (sandbox.InChroot): no skip that would hide it
	}
	v := &Verifier{Execute: true, CPUSeconds: 1, MemoryMB: 256, Wall: 3 * time.Second}
	tests := []struct {
		name, body string
		want       bool
		why        string
	}{
		{"passes", "  return 2*x;\n}\n", true, ""},
		{"wrong answer", "  return 3*x;\n}\n", false, "run:"},
		{"does not compile", "  return 2*y;\n}\n", false, "compile:"},
		{"endless loop is stopped by the CPU limit", "  for(volatile int i=0;;i++);\n}\n", false, "run:"},
		{"memory hog is stopped by the memory limit", "  volatile char *p=(volatile char*)malloc(1L<<31); if(!p) abort(); for(long i=0;i<(1L<<31);i+=4096)p[i]=1; return 2*x+p[4096]-1;\n}\n", false, "run:"},
		{"own main is kept", "  return 2*x;\n}\nint main(){ return twice(1) == 2 ? 0 : 1; }\n", true, ""},
		{"an endless sleep is stopped by the wall-clock limit", "  return 2*x;\n}\n#include <unistd.h>\nint main(){ for(;;) sleep(1); }\n", false, "run: killed at the wall-clock limit"},
		{"the compiler reads no host file", "  return 2*x;\n}\n#include \"/etc/passwd\"\n", false, "compile: /box/prog.cpp:5:10: fatal error: '/etc/passwd' file not found"},
		{"the tests read no host file", "  return 2*x;\n}\n#include <cstdio>\nint main(){ return std::fopen(\"/etc/passwd\", \"r\") ? 1 : 0; }\n", true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok, why := v.RunTests(context.Background(), task, task.Prompt+tc.body)
			if ok != tc.want || !strings.HasPrefix(why, tc.why) {
				t.Errorf("RunTests = %v, %q; want %v, %q…", ok, why, tc.want, tc.why)
			}
		})
	}
}
