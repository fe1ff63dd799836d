package mutate

import (
	"context"
	"errors"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"github.com/hydra-lsp/hydra/checkers/wholefile"
)

const cProg = `#include <stdio.h>
#include <string.h>

struct node {
    int val;
    struct node *next;
};

int sum(struct node *n, int limit) {
    int total = 0;
    while (n && limit > 0) {
        total += n->val;
        n = n->next;
        limit--;
    }
    return total;
}

int main(void) {
    struct node b = {2, NULL};
    struct node a = {1, &b};
    int count = sum(&a, 5);
    printf("%d %zu\n", count, strlen("x"));
    return 0;
}
`

// TestEachOperatorChangesTheRootCause: every operator applies to a small C program, changes the
// text at RootOff, and (checked by real clang) breaks the program.
func TestEachOperatorChangesTheRootCause(t *testing.T) {
	tests := []struct {
		op       Op
		rootHas  string // what the mutated text holds at RootOff
		gone     string // a piece of the original that no longer occurs (empty: skip)
		rootLine int    // 0: any
	}{
		{RenameDecl, "", "", 0},
		{DeleteInclude, "", "", 0},
		{ChangeType, "char *", "", 0},
		{MoveDecl, "{ ", "", 0},
		{DeleteSemi, "", "", 0},
		{NoMember, "", "", 0},
		{ArgCount, "sum(", "", 22},
	}
	clang, _ := exec.LookPath("clang-19")
	for _, tt := range tests {
		t.Run(string(tt.op), func(t *testing.T) {
			for seed := uint64(0); seed < 5; seed++ {
				m, err := Apply(cProg, "c", tt.op, rand.New(rand.NewPCG(seed, 9)))
				if err != nil {
					t.Fatal(err)
				}
				if m.Text == cProg || m.Op != tt.op || m.Desc == "" {
					t.Fatalf("mutant unchanged or undescribed: %+v", m)
				}
				if m.RootOff < 0 || m.RootOff > len(m.Text) {
					t.Fatalf("RootOff %d out of range", m.RootOff)
				}
				if got := 1 + strings.Count(m.Text[:m.RootOff], "\n"); got != m.RootLine {
					t.Fatalf("RootLine %d, offset is on line %d", m.RootLine, got)
				}
				if tt.rootLine != 0 && m.RootLine != tt.rootLine {
					t.Fatalf("RootLine %d, want %d (%s)", m.RootLine, tt.rootLine, m.Desc)
				}
				if !strings.HasPrefix(m.Text[m.RootOff:], tt.rootHas) {
					t.Fatalf("text at root %q does not start with %q (%s)", m.Text[m.RootOff:min(len(m.Text), m.RootOff+20)], tt.rootHas, m.Desc)
				}
				// The text before the root cause is untouched.
				if m.Text[:m.RootOff] != cProg[:m.RootOff] {
					t.Fatalf("text before the root changed (%s)", m.Desc)
				}
				if clang == "" {
					continue
				}
				v, err := wholefile.Check(context.Background(), m.Text, wholefile.Options{Clang: clang, Name: "prog.c", Flags: []string{"-std=gnu11"}})
				if err != nil {
					t.Fatal(err)
				}
				if v.OK && tt.op != DeleteInclude {
					t.Fatalf("mutant compiles (%s):\n%s", m.Desc, m.Text)
				}
			}
		})
	}
}

func TestOriginalCompiles(t *testing.T) {
	clang, err := exec.LookPath("clang-19")
	if err != nil {
		t.Fatal("clang-19 not installed (make deps)")
	}
	v, err := wholefile.Check(context.Background(), cProg, wholefile.Options{Clang: clang, Name: "prog.c", Flags: []string{"-std=gnu11"}})
	if err != nil || !v.OK {
		t.Fatalf("test program does not compile: %v\n%s", err, v.Output)
	}
}

func TestSpecificEdits(t *testing.T) {
	tests := []struct {
		name string
		src  string
		lang string
		op   Op
		want string
	}{
		{"rename keeps uses", "int f(void) {\n  int apples = 1;\n  return apples;\n}\n", "c", RenameDecl,
			"int f(void) {\n  int appless = 1;\n  return apples;\n}\n"},
		{"delete include removes the line", "#include <stdio.h>\nint x;\n", "c", DeleteInclude, "int x;\n"},
		{"change type in C++", "int f() {\n  int n = 3;\n  return n;\n}\n", "c++", ChangeType,
			"int f() {\n  std::string n = 3;\n  return n;\n}\n"},
		{"move declaration into a block", "int f(void) {\n  int n = 3;\n  return n;\n}\n", "c", MoveDecl,
			"int f(void) {\n  { int n = 3; }\n  return n;\n}\n"},
		{"delete the only semicolon", "int x\n;", "c", DeleteSemi, "int x\n"},
		{"wrong member name", "void f(std::vector<int> v) {\n  v.push_back(1);\n}\n", "c++", NoMember,
			"void f(std::vector<int> v) {\n  v.push(1);\n}\n"},
		{"drop an argument", "int g(int a, int b) { return a; }\nint f(void) {\n  return g(1, 2);\n}\n", "c", ArgCount,
			"int g(int a, int b) { return a; }\nint f(void) {\n  return g(1);\n}\n"},
		{"add an argument", "int g(void) { return 1; }\nint f(void) {\n  return g();\n}\n", "c", ArgCount,
			"int g(void) { return 1; }\nint f(void) {\n  return g(0);\n}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Apply(tt.src, tt.lang, tt.op, rand.New(rand.NewPCG(1, 1)))
			if err != nil {
				t.Fatal(err)
			}
			if m.Text != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", m.Text, tt.want)
			}
		})
	}
}

func TestNotApplicable(t *testing.T) {
	_, err := Apply("int x;\n", "c", DeleteInclude, rand.New(rand.NewPCG(1, 1)))
	if !errors.Is(err, ErrNotApplicable) {
		t.Fatalf("err = %v, want ErrNotApplicable", err)
	}
	if _, err := Apply("int x;\n", "c", Op("nonsense"), rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Fatal("unknown operator accepted")
	}
}

func TestAllMakesDistinctMutantsOfEveryOperator(t *testing.T) {
	ms := All(cProg, "c", rand.New(rand.NewPCG(3, 3)), 30)
	if len(ms) != 30 {
		t.Fatalf("got %d mutants, want 30", len(ms))
	}
	seen := map[string]bool{}
	ops := map[Op]bool{}
	for _, m := range ms {
		if seen[m.Text] {
			t.Fatalf("duplicate mutant (%s)", m.Desc)
		}
		seen[m.Text] = true
		ops[m.Op] = true
	}
	if len(ops) != len(Ops) {
		t.Fatalf("operators used: %v, want all %d", ops, len(Ops))
	}
	// Deterministic for a seed.
	again := All(cProg, "c", rand.New(rand.NewPCG(3, 3)), 30)
	for i := range ms {
		if ms[i].Text != again[i].Text {
			t.Fatal("All is not deterministic for a given rng")
		}
	}
}
