package mutate

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

const tsSrc = `function count(xs: number[], limit: number): number {
  let total = 0;
  for (const x of xs) {
    if (x < limit) {
      total += x;
    }
  }
  return total;
}
`

// TestTypeScriptOperators: TypeScript gets no #include or ';' deletion, and its type changes
// are TypeScript's (a ': number' annotation made ': string', a number-initialised 'let' made a
// string), never C's 'char *' or std::string.
func TestTypeScriptOperators(t *testing.T) {
	ops := OpsFor(TypeScript)
	if slices.Contains(ops, DeleteInclude) || slices.Contains(ops, DeleteSemi) || !slices.Contains(ops, ChangeType) {
		t.Fatalf("OpsFor(TypeScript) = %v", ops)
	}
	if !slices.Equal(OpsFor("c++"), Ops) {
		t.Fatalf("OpsFor(c++) = %v, want every operator", OpsFor("c++"))
	}
	seen := map[string]bool{}
	for i := range 40 {
		m, err := Apply(tsSrc, TypeScript, ChangeType, rand.New(rand.NewPCG(uint64(i), 7)))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(m.Text, "char") || strings.Contains(m.Text, "std::") {
			t.Fatalf("a C type in a TypeScript mutant: %s", m.Text)
		}
		seen[m.Desc] = true
	}
	for _, want := range []string{"changed type 'number' to 'string' at line 1", "declared 'total' a string at line 2"} {
		if !seen[want] {
			t.Errorf("no mutant %q among %v", want, seen)
		}
	}
}
