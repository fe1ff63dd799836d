package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/hydra-lsp/hydra/engine/model/modeltest"
)

// Errors that were in the document before (Request.Baseline) are excused: above the insertion
// point, below it, and not when the body the model writes is unfinished.
func TestBaselineErrorsAreNotTheModels(t *testing.T) {
	const prefix = "#include <stdio.h>\n\nint broken(void) { return nowhere; }\n\n// add returns the sum of a and b.\nint add(int a, int b) {\n"
	const suffix = "\nint main(void) {\n  printf(\"%d\\n\", add(1, 2) + missing);\n  return 0;\n}\n"
	tests := []struct {
		name      string
		text      string
		baseline  bool
		wantOK    bool
		wantCalls int
	}{
		{"excused", "  return a + b;\n}\n", true, true, 1},
		{"without a baseline the old errors block", "  return a + b;\n}\n", false, false, 0},
		// The model stops before the closing brace: the errors that follow are new, not excused.
		{"an unfinished body is not accepted", "  return a + b;\n", true, false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{rule("", tt.text)}})
			ck := newRecorder(newChecker(t))
			res, err := Search(context.Background(), ck, newClient(t, srv.URL), Request{
				Prefix: prefix, Suffix: suffix, Filename: "add.c", Flags: []string{"-std=gnu11"}, Model: "m",
				Baseline: tt.baseline, StopAtClose: true, Budget: Budget{MaxAttempts: 2},
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.OK != tt.wantOK {
				t.Fatalf("ok=%v reason=%q diagnostics=%v, want ok=%v", res.OK, res.Reason, res.Diagnostics, tt.wantOK)
			}
			if tt.wantCalls > 0 && len(srv.Calls()) != tt.wantCalls {
				t.Errorf("%d model requests, want %d", len(srv.Calls()), tt.wantCalls)
			}
			if tt.wantOK {
				if len(res.Baseline) != 2 || !strings.Contains(res.Baseline[0].Diag, "nowhere") || !strings.Contains(res.Baseline[1].Diag, "missing") {
					t.Errorf("Result.Baseline = %+v, want the two old errors in document order", res.Baseline)
				}
			}
			if !tt.baseline && res.Reason != "prefix_error" {
				t.Errorf("reason %q, want prefix_error without a baseline", res.Reason)
			}
			if left := ck.waitGone(); len(left) > 0 {
				t.Errorf("checker processes left after the search: %v", left)
			}
		})
	}
}

// A fatal error that was there before (a missing header) stops Clang, so nothing after it can
// be checked: the search ends on it at once instead of spending attempts on it.
func TestBaselineFatalErrorEndsTheSearch(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{rule("", "  return a + b;\n")}})
	ck := newRecorder(newChecker(t))
	res, err := Search(context.Background(), ck, newClient(t, srv.URL), Request{
		Prefix: "int add(int a, int b) {\n", Suffix: "}\n#include \"not_there.h\"\n", Filename: "add.c",
		Model: "m", Baseline: true, StopAtClose: true, Budget: Budget{MaxAttempts: 4},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || res.Reason != "prefix_error" || len(res.Diagnostics) != 1 || !strings.Contains(res.Diagnostics[0].Diag, "not_there.h") {
		t.Fatalf("ok=%v reason=%q diagnostics=%+v, want the missing header to end the search", res.OK, res.Reason, res.Diagnostics)
	}
	if len(srv.Calls()) != 1 {
		t.Errorf("%d model requests, want 1", len(srv.Calls()))
	}
	if left := ck.waitGone(); len(left) > 0 {
		t.Errorf("checker processes left after the search: %v", left)
	}
}
