package lsp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hydra-lsp/hydra/engine/model/modeltest"
	"github.com/hydra-lsp/hydra/lsp"
)

// TestSummaryOffersThePictureOfTheSearch: a generation with a rollback ends with a summary that
// names the SVG picture of its search (written to the cache directory) and the hydra.showTrace
// command that opens it; the command answers the picture's path and refuses any other file.
func TestSummaryOffersThePictureOfTheSearch(t *testing.T) {
	model := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
		{PromptContains: "hydra-feedback:", Text: accRetry, Chunk: 6, DelayMS: 5},
		{PromptSuffix: "// An accumulator.\n", Text: accBad, Chunk: 6, DelayMS: 20},
	}})
	cache := t.TempDir()
	c := startServer(t, clientOptions{
		initOptions: map[string]any{"hydra": map[string]any{"modelUrl": model.URL}},
		env:         []string{"XDG_CACHE_HOME=" + cache},
	})
	dir := t.TempDir()
	uri := "file://" + filepath.Join(dir, "acc.cpp")
	c.open(uri, "cpp", accPrefix+accSuffix)
	sum := runCodeAction(t, c, uri, lsp.Range{Start: position(accPrefix, len(accPrefix)), End: position(accPrefix, len(accPrefix))})
	if !sum.OK || sum.Attempts != 2 {
		t.Fatalf("summary %+v, want an accepted generation in 2 attempts", sum)
	}
	if filepath.Dir(sum.Trace) != filepath.Join(cache, "hydra", "traces") {
		t.Fatalf("trace picture %q is not in the cache directory %s", sum.Trace, cache)
	}
	svg, err := os.ReadFile(sum.Trace)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", ">attempt 1<", ">attempt 2<", "timeline: model streaming", "acc.cpp: accepted, 2 attempts"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("the picture lacks %q", want)
		}
	}
	if sum.ShowTrace == nil || sum.ShowTrace.Command != lsp.CommandShowTrace || len(sum.ShowTrace.Arguments) != 1 {
		t.Fatalf("summary offers %+v, want the %s command", sum.ShowTrace, lsp.CommandShowTrace)
	}
	var res struct {
		Path string `json:"path"`
	}
	if err := c.call("workspace/executeCommand", lsp.ExecuteCommandParams{Command: sum.ShowTrace.Command,
		Arguments: rawArgs(t, sum.ShowTrace.Arguments...)}, &res); err != nil {
		t.Fatalf("%s: %v", lsp.CommandShowTrace, err)
	}
	if res.Path != sum.Trace {
		t.Errorf("%s answered %q, want %q", lsp.CommandShowTrace, res.Path, sum.Trace)
	}
	other := filepath.Join(dir, "acc.cpp")
	if err := c.call("workspace/executeCommand", lsp.ExecuteCommandParams{Command: lsp.CommandShowTrace,
		Arguments: rawArgs(t, map[string]string{"path": other})}, &res); err == nil || !strings.Contains(err.Error(), "not a trace picture") {
		t.Errorf("%s on %s: %v, want a refusal", lsp.CommandShowTrace, other, err)
	}
}

// rawArgs marshals command arguments as an executeCommand request carries them.
func rawArgs(t *testing.T, args ...any) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	for _, a := range args {
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}
