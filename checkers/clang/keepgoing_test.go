package clang

import (
	"context"
	"testing"

	"github.com/hydra-lsp/hydra/checkers"
)

// With SubmitOptions.KeepGoing, progress (and a requested checkpoint) still comes after an
// error: the engine excuses errors that were in the document before generation and needs to
// see the checker accept what follows them. Without it, progress stops at the first error.
func TestKeepGoingReportsProgressAfterAnError(t *testing.T) {
	for _, keep := range []bool{false, true} {
		c := newChecker(t, Options{})
		s, err := c.Start(context.Background(), checkers.SessionOptions{Filename: "k.cpp"})
		if err != nil {
			t.Fatal(err)
		}
		chunks := []string{"int a = b;\n", "int c = 1;\n", "int d = c;\n"}
		for i, ch := range chunks {
			if err := s.Submit(ch, checkers.SubmitOptions{Cat: checkers.BoundaryDecl, KeepGoing: keep, Checkpoint: i == 1}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.EOS(); err != nil {
			t.Fatal(err)
		}
		var progress, chkpts, errs []int
		for _, ev := range collect(t, s) {
			switch ev.Kind {
			case checkers.KindProgress:
				progress = append(progress, ev.Off)
			case checkers.KindChkpt:
				chkpts = append(chkpts, ev.Off)
				if cp := c.Adopt(ev.ID); cp != nil {
					cp.Release()
				}
			case checkers.KindError:
				errs = append(errs, ev.Off)
			}
		}
		if len(errs) != 1 || errs[0] != len("int a = ") {
			t.Fatalf("keep %v: errors at %v, want one at %d", keep, errs, len("int a = "))
		}
		end := len(chunks[0]) + len(chunks[1]) + len(chunks[2])
		if keep {
			if len(progress) == 0 || progress[len(progress)-1] != end || len(chkpts) != 1 {
				t.Fatalf("keep going: progress %v, checkpoints %v; want progress to %d and one checkpoint", progress, chkpts, end)
			}
		} else if len(progress) != 0 || len(chkpts) != 0 {
			t.Fatalf("without keep going: progress %v, checkpoints %v after the error, want none", progress, chkpts)
		}
	}
}
