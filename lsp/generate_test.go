package lsp

import (
	"context"
	"strings"
	"testing"

	"github.com/hydra-lsp/hydra/checkers/lang"
)

// editHarness drives a generation's edit tracking the way the server does, with the test
// playing the client: it applies (or not) each edit and reports changes back.
type editHarness struct {
	t   *testing.T
	doc *document
	g   *generation
}

func newEditHarness(t *testing.T, text string, insertOff int) *editHarness {
	_, cancel := context.WithCancelCause(context.Background())
	g := &generation{uri: "file:///x.cpp", cancel: cancel, versioned: true, start: insertOff, wake: make(chan struct{}, 1)}
	d := &document{uri: g.uri, lang: "cpp", version: 1, text: text, gens: []*generation{g}}
	return &editHarness{t: t, doc: d, g: g}
}

// change applies a client-side change (as didChange would report it) to the document.
func (h *editHarness) change(ev TextDocumentContentChangeEvent) {
	h.t.Helper()
	old := h.doc.text
	text, ch, err := applyChange(old, ev, encUTF16)
	if err != nil {
		h.t.Fatal(err)
	}
	h.doc.text = text
	h.g.observeLocked(old, text, ch)
	h.doc.version++
	h.g.versionSeenLocked(h.doc.version)
}

// userTypes inserts text at byte offset off, as a user would.
func (h *editHarness) userTypes(off int, text string) {
	p := positionAt(h.doc.text, off, encUTF16)
	h.change(TextDocumentContentChangeEvent{Range: &Range{p, p}, Text: text})
}

// streamTo makes the server's next edit towards target and has the client apply it, either as
// sent or re-expressed as whole lines (as Neovim reports buffer changes).
func (h *editHarness) streamTo(target string, lineWise bool) {
	h.t.Helper()
	edit, p := h.g.nextEditLocked(h.doc, target, encUTF16)
	if p == nil {
		return
	}
	p.sent = true
	if !lineWise {
		h.change(TextDocumentContentChangeEvent{Range: &edit.Range, Text: edit.NewText})
	} else {
		// Replace from the start of the edit's first line to the start of the line after its end.
		old := h.doc.text
		s, _ := offsetAt(old, edit.Range.Start, encUTF16)
		e, _ := offsetAt(old, edit.Range.End, encUTF16)
		ls := strings.LastIndexByte(old[:s], '\n') + 1
		le := len(old)
		if i := strings.IndexByte(old[e:], '\n'); i >= 0 {
			le = e + i + 1
		}
		newText := old[ls:s] + edit.NewText + old[e:le]
		r := rangeAt(old, ls, le, encUTF16)
		h.change(TextDocumentContentChangeEvent{Range: &r, Text: newText})
	}
	if !p.matched {
		h.t.Fatalf("the client's report of the server's own edit was not recognised (doc %q)", h.doc.text)
	}
	h.g.pending = nil
}

func (h *editHarness) region() string { return h.doc.text[h.g.start : h.g.start+len(h.g.shown)] }

func TestStreamedEditsFollowTheAcceptedText(t *testing.T) {
	for _, lineWise := range []bool{false, true} {
		name := "exact client"
		if lineWise {
			name = "line-wise client"
		}
		t.Run(name, func(t *testing.T) {
			const prefix, suffix = "#include <cstdio>\n// two ints\n", "int main() { return 0; }\n"
			h := newEditHarness(t, prefix+suffix, len(prefix))
			steps := []string{
				"int a = 1;\n",
				"int a = 1;\nint b = apples;\n",
				"int a = 1;\n", // rollback
				"int a = 1;\nint b = 2;\n",
			}
			for _, target := range steps {
				h.streamTo(target, lineWise)
				if got := h.doc.text; got != prefix+target+suffix {
					t.Fatalf("document is %q, want %q", got, prefix+target+suffix)
				}
				if h.region() != target {
					t.Fatalf("region holds %q, want %q", h.region(), target)
				}
			}
		})
	}
}

func TestUserEditBeforeRegionMovesIt(t *testing.T) {
	const prefix, suffix = "// add\n", "int main() {}\n"
	h := newEditHarness(t, prefix+suffix, len(prefix))
	h.streamTo("int f();\n", false)
	h.userTypes(0, "#include <vector>\n")
	if h.g.stopReason != "" {
		t.Fatalf("a change before the region stopped the generation: %s", h.g.stopReason)
	}
	h.streamTo("int f();\nint g();\n", false)
	want := "#include <vector>\n// add\nint f();\nint g();\nint main() {}\n"
	if h.doc.text != want {
		t.Fatalf("document is %q, want %q", h.doc.text, want)
	}
}

func TestUserEditAfterRegionIsKept(t *testing.T) {
	const prefix, suffix = "// add\n", "int main() {}\n"
	h := newEditHarness(t, prefix+suffix, len(prefix))
	h.streamTo("int f();\n", false)
	h.userTypes(len(h.doc.text), "// end\n")
	h.streamTo("int f();\nint g();\n", false)
	want := "// add\nint f();\nint g();\nint main() {}\n// end\n"
	if h.doc.text != want || h.g.stopReason != "" {
		t.Fatalf("document is %q (stop %q), want %q", h.doc.text, h.g.stopReason, want)
	}
}

func TestUserEditInsideRegionStopsGenerationAndKeepsText(t *testing.T) {
	const prefix, suffix = "// add\n", "int main() {}\n"
	h := newEditHarness(t, prefix+suffix, len(prefix))
	h.streamTo("int f();\nint g();\n", false)
	h.userTypes(len(prefix)+4, "my_")
	if h.g.stopReason != reasonUserEdit {
		t.Fatalf("stop reason = %q, want %q", h.g.stopReason, reasonUserEdit)
	}
	want := "// add\nint my_f();\nint g();\nint main() {}\n"
	if h.doc.text != want {
		t.Fatalf("document is %q, want %q", h.doc.text, want)
	}
	if _, p := h.g.nextEditLocked(h.doc, "int f();\nint g();\nint h();\n", encUTF16); p != nil && h.g.stopReason == "" {
		t.Fatal("a stopped generation still edits")
	}
}

func TestUserEditBeforeServerEditArrivesMakesItStale(t *testing.T) {
	const prefix, suffix = "// add\n", "int main() {}\n"
	h := newEditHarness(t, prefix+suffix, len(prefix))
	h.streamTo("int f();\n", false)
	// The server sends the next edit, but the user types first; a versioned client refuses it.
	_, p := h.g.nextEditLocked(h.doc, "int f();\nint g();\n", encUTF16)
	h.userTypes(0, "#define X 1\n")
	if !p.dead {
		t.Fatal("the edit made against an older version is still expected")
	}
	h.g.pending = nil
	h.streamTo("int f();\nint g();\n", false)
	want := "#define X 1\n// add\nint f();\nint g();\nint main() {}\n"
	if h.doc.text != want {
		t.Fatalf("document is %q, want %q", h.doc.text, want)
	}
}

func TestPlaceGenerate(t *testing.T) {
	const sig = "#include <vector>\n\nint sum(const std::vector<int>& v) {"
	tests := []struct {
		name, text string
		cursor     string // the text before the cursor is text up to the first match of this marker's end
		at         int    // or an explicit offset (when cursor is empty)
		rangeEnd   bool
		wantOff    int
		wantLead   string
		wantOrig   string
		wantPad    bool
	}{
		{name: "end of a comment line", text: "// add\nint main(){}\n", at: 6, wantOff: 7, wantPad: true},
		{name: "end of the last line without newline", text: "// add", at: 6, wantOff: 6, wantLead: "\n"},
		{name: "blank line", text: "// add\n  \nint x;\n", at: 8, wantOff: 7, wantPad: false},
		{name: "end of text with newline", text: "// add\n", at: 7, wantOff: 7},
		// Neovim's normal-mode cursor sits on the `{` of the signature just typed.
		{name: "on the { of a signature", text: sig + "\n", at: len(sig) - 1, wantOff: len(sig) + 1},
		{name: "start of a signature line", text: sig + "\n", at: len("#include <vector>\n\n"), wantOff: len(sig) + 1},
		{name: "signature on the last line, no newline", text: sig, at: len(sig) - 1, wantOff: len(sig), wantLead: "\n"},
		{name: "mid-statement", text: "int f() {\n  int x = 0;\n}\n", at: 14, wantOff: 23},
		{name: "for header", text: "void f() {\n  for (int i = 0; i < 3; i++) {\n  }\n}\n", at: 16, wantOff: 43},
		{name: "lone brace", text: "void f()\n{\n}\n", at: 9, wantOff: 11},
		{name: "blank line before }", text: "int f() {\n\n}\n", at: 10, wantOff: 10, wantOrig: "\n"},
		{name: "blank lines after the line before }", text: "int f() {\n  \n\n}\n", at: 3, wantOff: 10, wantOrig: "  \n\n"},
		{name: "after a function's }", text: "int f() {\n}\nint g();\n", at: 11, wantOff: 12, wantLead: "\n", wantPad: true},
		{name: "blank line after a function", text: "int f() {\n}\n\nint g();\n", at: 12, wantOff: 12, wantLead: "\n"},
		{name: "start of a statement line", text: "int f() {\n  return 1;\n}\n", at: 10, wantOff: 10},
		{name: "on a closing brace at column 0", text: "int f() {\n  return 1;\n}\nint g();\n", at: 22, wantOff: 24, wantLead: "\n", wantPad: true},
		{name: "inside a block comment", text: "/* Sum\n   of v.\n*/\nint main(){}\n", at: 3, wantOff: 19, wantPad: true},
		{name: "start of a comment line", text: "// add\nint main(){}\n", at: 0, wantOff: 7, wantPad: true},
		{name: "selection ending at a line start", text: "// add two ints\nint main(){}\n", at: 16, rangeEnd: true, wantOff: 16, wantPad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := placeGenerate(tt.text, tt.at, tt.rangeEnd, lang.C.Syntax(nil, ""))
			if p.off != tt.wantOff || p.lead != tt.wantLead || p.orig != tt.wantOrig || p.pad != tt.wantPad {
				t.Fatalf("placeGenerate = %+v, want off %d lead %q orig %q pad %v", p, tt.wantOff, tt.wantLead, tt.wantOrig, tt.wantPad)
			}
		})
	}
}

func TestPaddedAddsABlankLineAfterANewDefinition(t *testing.T) {
	p := placement{pad: true}
	if got := p.padded("int f() {\n  return 1;\n}\n"); got != "int f() {\n  return 1;\n}\n\n" {
		t.Errorf("padded function = %q", got)
	}
	if got := p.padded("int x = 1;\n"); got != "int x = 1;\n" {
		t.Errorf("a declaration got padded: %q", got)
	}
	if got := (placement{}).padded("int f() {\n}\n"); got != "int f() {\n}\n" {
		t.Errorf("padded without pad: %q", got)
	}
	if got := (placement{closeFollows: true}).padded("  return 1;\n\n  \n"); got != "  return 1;\n" {
		t.Errorf("blank lines kept before a closing brace: %q", got)
	}
}

func TestPromptForKeepsATailWithinBudget(t *testing.T) {
	if got := promptFor("short"); got != "" {
		t.Fatalf("a short prefix got a prompt of its own: %q", got)
	}
	long := strings.Repeat("int x;\n", promptBudget/7+100)
	p := promptFor(long)
	if len(p) > promptBudget || !strings.HasSuffix(long, p) || !strings.HasPrefix(p, "int x;") {
		t.Fatalf("prompt of %d bytes is not a line-aligned tail within %d", len(p), promptBudget)
	}
}

func TestKindWanted(t *testing.T) {
	tests := []struct {
		only []string
		want bool
	}{
		{nil, true},
		{[]string{"source"}, true},
		{[]string{"source.generate"}, true},
		{[]string{KindGenerate}, true},
		{[]string{"quickfix"}, false},
		{[]string{"source.organizeImports"}, false},
		{[]string{"sourcegraph"}, false},
	}
	for _, tt := range tests {
		if got := kindWanted(tt.only, KindGenerate); got != tt.want {
			t.Errorf("kindWanted(%q) = %v, want %v", tt.only, got, tt.want)
		}
	}
}
