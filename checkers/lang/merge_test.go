package lang

import (
	"strings"
	"testing"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/chunk"
)

func TestMergerJoinsWholeChunksAndKeepsTheirBoundaries(t *testing.T) {
	text := "#include <a.h>\n#include <b.h>\nint a;\nint b;\nint c;\nint d;\nint e;\n#if X\nint f;\n"
	chs := chunk.Split(text, chunk.Options{})
	got := Merge(chs, 12)
	var joined strings.Builder
	off := 0
	for i, p := range got {
		if p.Off != off {
			t.Fatalf("piece %d at offset %d, want %d", i, p.Off, off)
		}
		off = p.End()
		joined.WriteString(p.Text)
		if i < len(got)-1 && len(p.Text) < 12 && p.Cat != checkers.BoundaryPreamble && !p.PreambleEnd && !p.Unclean {
			t.Errorf("piece %d %q is shorter than 12 bytes and ends on no boundary", i, p.Text)
		}
	}
	if joined.String() != text {
		t.Fatalf("pieces join to %q, want the text", joined.String())
	}
	// The preamble's end keeps its own piece; the unclean tail (the open #if) stays last and
	// unclean; code chunks are joined.
	ends := map[int]bool{}
	for _, c := range chs {
		ends[c.End()] = true
	}
	preambleEnd := 0
	for _, p := range got {
		if !ends[p.End()] {
			t.Errorf("piece %q ends at %d, not at a chunk's end", p.Text, p.End())
		}
		if p.PreambleEnd {
			preambleEnd = p.End()
		}
	}
	if preambleEnd != len("#include <a.h>\n#include <b.h>\n") {
		t.Errorf("preamble ends at %d in the pieces", preambleEnd)
	}
	if last := got[len(got)-1]; !last.Unclean || !strings.HasPrefix(last.Text, "#if X") && !strings.HasSuffix(last.Text, "int f;\n") {
		t.Errorf("last piece %+v, want the unclean tail", last)
	}
	if len(got) >= len(chs) {
		t.Errorf("%d pieces from %d chunks: nothing merged", len(got), len(chs))
	}
	if same := Merge(chs, MergeMin(len(text))); len(same) != len(chs) {
		t.Errorf("a short text's chunks were merged: %d pieces from %d", len(same), len(chs))
	}
}
