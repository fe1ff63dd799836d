package typescript

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/hydra-lsp/hydra/checkers"
)

// TestDefaultConfigForgetsClosedFiles: two files that exist only in the checker (a directory
// with no files on disk, as `hydra bench` checks its tasks), checked one after the other in the
// same directory. Once the first one's session has ended, its file is gone; the default
// tsconfig.json of the directory must no longer name it, or every later check there fails with
// TS6053 ("File ... not found").
func TestDefaultConfigForgetsClosedFiles(t *testing.T) {
	ck := newChecker(t)
	dir := filepath.Join(t.TempDir(), "not-on-disk")
	for _, name := range []string{"first.ts", "second.ts"} {
		s, err := ck.Start(context.Background(), checkers.SessionOptions{Filename: filepath.Join(dir, name)})
		if err != nil {
			t.Fatal(err)
		}
		evs := streamLines(t, ck, s, "function f(n: number): number {\n  return n + 1;\n}\n", false)
		s.Close()
		if first, ok := firstError(evs); first != nil || !ok {
			t.Fatalf("%s: error %+v, done ok %v; want it accepted", name, first, ok)
		}
	}
}
