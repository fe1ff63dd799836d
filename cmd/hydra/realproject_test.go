package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hydra-lsp/hydra/engine/model/modeltest"
	"github.com/hydra-lsp/hydra/internal/realproject"
)

// TestRealProjectGoogletestCLI regenerates real function bodies of googletest (configured with
// CMake and GCC, internal/realproject) with `hydra generate --suffix` (in-process), the flags
// found in the project's compile_commands.json, and the scripted stand-in model whose first
// attempt has a realistic mistake. The result must equal upstream and compile with the project's
// own command. In the "inside #if" case the prefix opens `#if GTEST_OS_LINUX` and the suffix
// closes it.
func TestRealProjectGoogletestCLI(t *testing.T) {
	regenerateCLI(t, realproject.Googletest(t), realproject.GoogletestCuts)
}

// TestRealProjectCJSONCLI does the same in cJSON, C89 under the project's -std=c89 -pedantic
// -Werror: the first attempts' mistakes are ones only C89 makes.
func TestRealProjectCJSONCLI(t *testing.T) {
	regenerateCLI(t, realproject.CJSON(t), realproject.CJSONCuts)
}

func regenerateCLI(t *testing.T, p *realproject.Project, cuts []realproject.Cut) {
	t.Setenv("HYDRA_API_KEY", "")
	// Each cut's result is checked equal to upstream before it is written back, so the project's
	// tree is upstream's whenever a command compiles it: the same command on the same files gives
	// the same result, and it runs once (gtest-all.cc, which #includes three cuts' files, compiles
	// once instead of three times).
	compiled := map[string]bool{}
	for _, c := range cuts {
		t.Run(c.Name, func(t *testing.T) {
			upstream, prefix, body, suffix := c.Split(t, p)
			model := modeltest.NewServer(t, c.Script(body))
			// The prompt file sits beside the original, so that its "…" includes resolve
			// the same way.
			path := filepath.Join(p.Dir, c.File)
			prompt := filepath.Join(filepath.Dir(path), "hydra-prompt-"+filepath.Base(path))
			suffixFile := filepath.Join(t.TempDir(), "suffix")
			if err := os.WriteFile(prompt, []byte(prefix), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(suffixFile, []byte(suffix), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errs := runGen(t, "--model-url", model.URL, "--model", "m", "--quiet", "--suffix", suffixFile,
				"--compile-commands-dir", p.Build, prompt)
			if code != 0 {
				t.Fatalf("exit %d; want the repair accepted\n%s", code, errs)
			}
			if out != upstream {
				t.Fatalf("the result differs from upstream; generated body:\n%s", out[len(prefix):min(len(out), len(prefix)+len(body)+40)])
			}
			if n := len(model.Calls()); n != 2 {
				t.Errorf("%d model requests, want the first attempt and one repair", n)
			}
			if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			if !compiled[c.CompiledBy] {
				p.Command(t, c.CompiledBy).Compile(t)
				compiled[c.CompiledBy] = true
			}
		})
	}
}
