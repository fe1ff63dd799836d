package wholefile

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	if _, err := Clang(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bad.h"), []byte("int broken = ;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, file, text string
		dir              string
		ok               bool
		first            Diag   // file compared by base name
		firstIn          string // message of FirstIn(file); "" when none
	}{
		{"accepts", "a.c", "int main(void) { return 0; }\n", "", true, Diag{}, ""},
		{"first error of a C++ file", "b.cpp", "int f() {\n  return y;\n}\nint g() { return z; }\n", "", false,
			Diag{File: "b.cpp", Line: 2, Col: 10, Msg: "use of undeclared identifier 'y'"}, "use of undeclared identifier 'y'"},
		{"error in a quoted header next to the file", "c.c", "#include \"bad.h\"\nint x = q;\n", dir, false,
			Diag{File: "bad.h", Line: 1, Col: 14, Msg: "expected expression"}, "use of undeclared identifier 'q'"},
		{"fatal error", "d.c", "#include <no_such_header_hydra.h>\n", "", false,
			Diag{File: "d.c", Line: 1, Col: 10, Msg: "'no_such_header_hydra.h' file not found"}, "'no_such_header_hydra.h' file not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Check(context.Background(), tt.text, Options{Dir: tt.dir, Name: tt.file})
			if err != nil {
				t.Fatal(err)
			}
			if v.OK != tt.ok {
				t.Fatalf("OK = %v, want %v\n%s", v.OK, tt.ok, v.Output)
			}
			d, found := v.First()
			if found == tt.ok {
				t.Fatalf("First found = %v with OK = %v", found, v.OK)
			}
			if found {
				d.File = filepath.Base(d.File)
			}
			if d != tt.first {
				t.Errorf("First = %+v, want %+v", d, tt.first)
			}
			in, found := v.FirstIn(tt.file)
			if found != (tt.firstIn != "") || in.Msg != tt.firstIn {
				t.Errorf("FirstIn = %+v (%v), want %q", in, found, tt.firstIn)
			}
		})
	}
}

func TestCheckErrors(t *testing.T) {
	if _, err := Check(context.Background(), "int x;\n", Options{}); err == nil {
		t.Error("no file name: no error")
	}
	if _, err := Check(context.Background(), "int x;\n", Options{Name: "a.c", Clang: "/bin/false"}); err == nil ||
		!strings.Contains(err.Error(), "without an error line") {
		t.Errorf("a failing driver without an error line: %v", err)
	}
	crash := filepath.Join(t.TempDir(), "crashing-clang")
	if err := os.WriteFile(crash, []byte("#!/bin/sh\necho 'a.c:1:1: error: before the crash' >&2\nexit 139\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Check(context.Background(), "int x;\n", Options{Name: "a.c", Clang: crash}); err == nil {
		t.Error("exit status 139 (a crash, not a rejection): no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Check(ctx, "int x;\n", Options{Name: "a.c"}); err == nil {
		t.Error("a cancelled context: no error")
	}
}
