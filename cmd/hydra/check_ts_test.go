package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckTypeScriptCLI runs the real binary on .ts files: the TypeScript checker streams
// them line by line, accepts a right file with progress to its end, and rejects a wrong one
// at the line tsc names, with exit status 1.
func TestCheckTypeScriptCLI(t *testing.T) {
	dir := t.TempDir()
	okTS := "function sq(x: number): number {\n  return x * x;\n}\nconsole.log(sq(3));\n"
	badTS := "function sq(x: number): number {\n  return x * x;\n}\nconst s: string = sq(2);\n"
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	out, errOut, code := runHydraCheck(t, hydraBin, nil, "--json", "--checkpoint-every", "2", write("ok.ts", okTS))
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", code, out, errOut)
	}
	evs := jsonEvents(t, out)
	progress, chkpts, last := 0, 0, 0.0
	for _, ev := range evs {
		switch ev["event"] {
		case "progress":
			progress++
			last = ev["off"].(float64)
		case "chkpt":
			chkpts++
		case "error":
			t.Fatalf("error on a right file: %v", ev)
		}
	}
	if progress != 4 || chkpts != 2 || int(last) != len(okTS) {
		t.Fatalf("%d progress events to %v and %d checkpoints, want 4 (one a line) to %d and 2", progress, last, chkpts, len(okTS))
	}
	if end := evs[len(evs)-1]; end["event"] != "done" || end["ok"] != true {
		t.Fatalf("last event %v, want done ok", end)
	}

	out, errOut, code = runHydraCheck(t, hydraBin, nil, write("bad.ts", badTS))
	if code != 1 || !strings.Contains(out, "bad.ts:4:7: error: Type 'number' is not assignable to type 'string'.") {
		t.Fatalf("exit %d, want 1 and the error at 4:7\n%s%s", code, out, errOut)
	}

	// Compiler flags are clang's: for TypeScript they are refused, not ignored.
	_, errOut, code = runHydraCheck(t, hydraBin, nil, write("flags.ts", okTS), "--", "-std=c11")
	if code != 2 || !strings.Contains(errOut, "compiler flags after -- do not apply to TypeScript") {
		t.Fatalf("clang flags on a .ts file: exit %d, want 2 and a refusal\n%s", code, errOut)
	}
	// Only regular files are read, as for C/C++ (a device would be read without end).
	dev := filepath.Join(dir, "zero.ts")
	if err := os.Symlink("/dev/zero", dev); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = runHydraCheck(t, hydraBin, nil, dev)
	if code != 2 || !strings.Contains(errOut, "not a regular file") {
		t.Fatalf("a device named .ts: exit %d, want 2 and 'not a regular file'\n%s", code, errOut)
	}
}
