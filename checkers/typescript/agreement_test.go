package typescript

import (
	"context"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/mutate"
)

// corpusDir is where scripts/install-deps.sh test unpacks the rxjs sources.
func corpusDir(t *testing.T) string {
	t.Helper()
	wd, _ := os.Getwd()
	dir := filepath.Join(wd, "..", "..", "third_party", "ts-corpus", "package", "src")
	if _, err := os.Stat(filepath.Join(dir, "index.ts")); err != nil {
		t.Fatalf("TypeScript corpus missing (%v): run scripts/install-deps.sh test", err)
	}
	return dir
}

// copyTree copies the .ts files under src to dst.
func copyTree(t *testing.T, src, dst string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".ts") {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		files = append(files, rel)
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

var tscLine = regexp.MustCompile(`^(.+?)\((\d+),(\d+)\): error TS(\d+): `)

// tscFirstError runs `tsc --noEmit FILE` (TypeScript 7's defaults, no tsconfig.json) in dir and
// returns the first error line it reports in rel (0: none) and its code.
func tscFirstError(t *testing.T, exe, dir, rel string) (line, code int) {
	t.Helper()
	cmd := exec.Command(exe, "--noEmit", "--pretty", "false", rel)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("tsc: %v", err)
		}
	}
	for _, l := range strings.Split(string(out), "\n") {
		m := tscLine.FindStringSubmatch(l)
		if m == nil || filepath.Clean(m[1]) != rel {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		c, _ := strconv.Atoi(m[4])
		if line == 0 || n < line {
			line, code = n, c
		}
	}
	return line, code
}

// TestAgreementWithTsc: on real TypeScript (rxjs's sources, as npm ships them) and mutants of
// it, hydra's checker streamed unit by unit, as `hydra check` and the engine cut it, gives the
// verdict and the first error line that `tsc --noEmit FILE` gives for the file, under the same
// (default) options.
func TestAgreementWithTsc(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tsc on a corpus; not in -short")
	}
	ck := newChecker(t)
	dir := t.TempDir()
	files := copyTree(t, corpusDir(t), dir)
	// A fixed sample of the corpus (every 36th file under 250 lines), so that the test stays
	// short. HYDRA_TS_AGREEMENT=all takes every file (about an hour on a loaded 2-core
	// machine); any other value, the files whose path contains it.
	only := os.Getenv("HYDRA_TS_AGREEMENT")
	var sample []string
	for i, rel := range files {
		b, _ := os.ReadFile(filepath.Join(dir, rel))
		picked := i%36 == 0 && strings.Count(string(b), "\n") < 250 && !strings.Contains(rel, "umd")
		if only != "" {
			picked = only == "all" || strings.Contains(rel, only)
		}
		if picked {
			sample = append(sample, rel)
		}
	}
	rng := rand.New(rand.NewPCG(36, 2))
	cases, agree, errs := 0, 0, 0
	for _, rel := range sample {
		path := filepath.Join(dir, rel)
		orig, _ := os.ReadFile(path)
		texts := []string{string(orig)}
		for _, m := range mutate.All(string(orig), mutate.TypeScript, rng, 3) {
			texts = append(texts, m.Text)
		}
		for k, text := range texts {
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			wantLine, wantCode := tscFirstError(t, ck.Compiler(), dir, rel)
			s, err := ck.Start(context.Background(), checkers.SessionOptions{Filename: path})
			if err != nil {
				t.Fatal(err)
			}
			evs := streamUnits(t, ck, s, text)
			s.Close()
			first, ok := firstError(evs)
			gotLine, gotCode := 0, 0
			if first != nil {
				gotLine, gotCode = first.Line, first.Meta["code"].(int)
			}
			cases++
			if wantLine > 0 {
				errs++
			}
			if ok != (wantLine == 0) || gotLine != wantLine {
				t.Errorf("%s (variant %d): hydra ok=%v first error line %d (TS%d), tsc first error line %d (TS%d)",
					rel, k, ok, gotLine, gotCode, wantLine, wantCode)
				continue
			}
			agree++
		}
		if err := os.WriteFile(path, orig, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("agreement with tsc --noEmit: %d/%d texts (%d files, %d texts with errors)", agree, cases, len(sample), errs)
	if errs == 0 || errs == cases {
		t.Errorf("the sample should hold both accepted and rejected texts (%d of %d rejected)", errs, cases)
	}
}

// streamUnits submits text as `hydra check` and the engine do: cut into units by the TypeScript
// chunker (Syntax.Split), each with its boundary category, then EOS; it returns the session's
// events. (streamLines cuts at every line end instead, also where the chunker never cuts, as
// inside multi-line type arguments, `new Map<` then the arguments on the next lines.)
func streamUnits(t *testing.T, ck *Checker, s checkers.Session, text string) []checkers.Event {
	t.Helper()
	var texts []string
	var opts []checkers.SubmitOptions
	for _, c := range (Syntax{}).Split(text) {
		texts, opts = append(texts, c.Text), append(opts, checkers.SubmitOptions{Cat: c.Cat})
	}
	return submitAll(t, s, texts, opts)
}
