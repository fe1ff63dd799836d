package sim

import "testing"

// TestDiagHintTypeScript: tsc's suggestions and type mismatches give the same hints as clang's.
func TestDiagHintTypeScript(t *testing.T) {
	for msg, want := range map[string]string{
		"TS2552: Cannot find name 'count'. Did you mean 'counts'?": HintSuggestion,
		"TS1005: ';' expected.": HintSuggestion,
		"TS2322: Type 'string' is not assignable to type 'number'.":    HintType,
		"TS2554: Expected 1 arguments, but got 0.":                     HintNone,
		"use of undeclared identifier 'count'; did you mean 'counts'?": HintSuggestion,
		"no member named 'push' in 'std::vector<int>'":                 HintNone,
	} {
		if got := DiagHint(msg); got != want {
			t.Errorf("DiagHint(%q) = %s, want %s", msg, got, want)
		}
	}
	m := didYouMean.FindStringSubmatch("TS2552: Cannot find name 'count'. Did you mean 'counts'?")
	if m == nil || m[1] != "count" || m[2] != "counts" {
		t.Errorf("tsc's did-you-mean: %q", m)
	}
}
