package lsp_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hydra-lsp/hydra/engine/model/modeltest"
	"github.com/hydra-lsp/hydra/internal/realproject"
)

// TestRealProjectGoogletestLSP regenerates the bodies of internal/realproject's googletest cuts
// through `hydra lsp` (JSON-RPC over pipes): the document is the real file with the body cut,
// opened under its own path so that the server finds the project's compile_commands.json, and
// hydra.generate runs at the cut. The scripted stand-in's first attempt has a realistic mistake.
// The document must end equal to upstream and compile with the project's own GCC command.
func TestRealProjectGoogletestLSP(t *testing.T) {
	regenerateLSP(t, realproject.Googletest(t), realproject.GoogletestCuts)
}

// TestRealProjectCJSONLSP does the same in cJSON, C89 under the project's -std=c89 -pedantic
// -Werror, opened as a C document.
func TestRealProjectCJSONLSP(t *testing.T) {
	regenerateLSP(t, realproject.CJSON(t), realproject.CJSONCuts)
}

func regenerateLSP(t *testing.T, p *realproject.Project, cuts []realproject.Cut) {
	// Each cut's result is checked equal to upstream before it is written back, so the project's
	// tree is upstream's whenever a command compiles it: the same command on the same files gives
	// the same result, and it runs once (gtest-all.cc, which #includes three cuts' files, compiles
	// once instead of three times).
	compiled := map[string]bool{}
	for _, c := range cuts {
		t.Run(c.Name, func(t *testing.T) {
			upstream, prefix, body, suffix := c.Split(t, p)
			model := modeltest.NewServer(t, c.Script(body))
			srv := startServer(t, clientOptions{initOptions: map[string]any{"hydra": map[string]any{"modelUrl": model.URL}}})
			path := filepath.Join(p.Dir, c.File)
			uri := "file://" + path
			// As a user leaves it after deleting a body: an empty line inside the braces, the
			// cursor on it.
			lang := "cpp"
			if filepath.Ext(path) == ".c" {
				lang = "c"
			}
			srv.open(uri, lang, prefix+"\n"+suffix)
			sum, err := srv.generate(uri, position(prefix, len(prefix)))
			if err != nil {
				t.Fatal(err)
			}
			if got := srv.text(uri); !sum.OK || got != upstream {
				t.Fatalf("summary %+v; document differs from upstream:\n%s", sum, got[len(prefix):min(len(got), len(prefix)+len(body)+40)])
			}
			if sum.Attempts != 2 {
				t.Errorf("%d attempts, want the first and one repair", sum.Attempts)
			}
			if err := os.WriteFile(path, []byte(srv.text(uri)), 0o644); err != nil {
				t.Fatal(err)
			}
			if !compiled[c.CompiledBy] {
				p.Command(t, c.CompiledBy).Compile(t)
				compiled[c.CompiledBy] = true
			}
		})
	}
}
