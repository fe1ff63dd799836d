package typescript

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hydra-lsp/hydra/checkers"
)

// jsxPrelude declares JSX's intrinsic elements, so that a .tsx file needs no React types.
const jsxPrelude = "declare global {\n  namespace JSX {\n    interface IntrinsicElements { [name: string]: any }\n  }\n}\nexport {};\n"

// A component whose JSX text holds what the lexer would read as code: an apostrophe, a
// backtick, `//` and `/*`, and braces on lines of their own.
const jsxComponent = `export function Card(props: { title: string; items: string[]; wide?: boolean }) {
  const n = props.items.length;
  return (
    <section className={props.wide ? "wide" : "narrow"} data-title="it's
      a title">
      <h2>Don't use ` + "`npm`" + ` here // not a comment /* nor this</h2>
      {n > 0 && <p>{n} item(s)</p>}
      <ul>
        {props.items.map((item, i) => {
          const key = item + i;
          return <li key={key}>{item}</li>;
        })}
      </ul>
      <>
        <br />
        <input value={"{"} onChange={() => {}} />
      </>
    </section>
  );
}
`

// TestJSXLexing: in a .tsx file the lexer reads JSX as TypeScript's parser does, so braces are
// counted, and cuts fall, as in the code around it; in a .ts file the same '<' is code.
func TestJSXLexing(t *testing.T) {
	tsx := Syntax{JSX: true}
	for text, want := range map[string]int{
		jsxComponent:                              0,
		"function A() {\n  return <p>Don't {\n":   1, // the '{' of an expression in the text does not count; the function's does
		"const f = <T,>(x: T) => {\n":             1, // a generic arrow function, not an element
		"let g: <T>(x: T) => T = (x) => {\n":      1, // a generic function type
		"const e = <div>{'}'}</div>; {\n":         1, // a '}' in a string inside an expression
		"const c = a < b; {\n":                    1, // a comparison
		"const h = <Foo<string> a={1}>{x}</Foo>;": 0, // type arguments on a tag
	} {
		if got := tsx.BraceDepth(text); got != want {
			t.Errorf("tsx BraceDepth(%q) = %d, want %d", text, got, want)
		}
	}
	for text, want := range map[string]bool{
		"const a = <p>Don't ":                 false, // JSX text is where markup is written, not a literal
		"const a = <p title=\"it's ":          true,  // an attribute's string
		"const a = <p>{/* note ":              true,
		"const a = <p>{`x ${y} ":              true,
		"const a = <p>a // b\n":               false,
		"const a = <p className={x} ":         false,
		"const a = <p>{x}</p>; // done\n":     false,
		"const a = <p>{x}</p>; let s = 'ab":   true,
		"const a = <p>{x}</p>; const r = /ab": true, // after an element, '/' starts a regex only where an operand may
	} {
		if got := tsx.InCommentOrLiteral(text); got != want {
			t.Errorf("tsx InCommentOrLiteral(%q) = %v, want %v", text, got, want)
		}
	}
	// In a .ts file, <number>x is a type assertion and `'` in it a string.
	if got := (Syntax{}).BraceDepth("const n = <number>x; const s = '{';\n{\n"); got != 1 {
		t.Errorf("ts BraceDepth of a type assertion = %d, want 1", got)
	}
	// The component is cut at every line but inside the attribute string that spans two.
	chs := tsx.Split(jsxComponent)
	lines := strings.Count(jsxComponent, "\n")
	if len(chs) != lines-1 {
		var got []string
		for _, c := range chs {
			got = append(got, c.Text)
		}
		t.Errorf("%d chunks, want %d (one per line, the attribute's two lines in one): %q", len(chs), lines-1, got)
	}
	for _, c := range chs {
		if strings.HasSuffix(c.Text, "data-title=\"it's\n") {
			t.Errorf("a cut inside the attribute string: %q", c.Text)
		}
	}
	if d := chs[len(chs)-1].Depth; d != 0 {
		t.Errorf("depth after the component %d, want 0", d)
	}
}

// TestJSXStreamsLineByLine: a .tsx component streamed line by line is accepted at every line
// (an element still open when the text ends is unfinished, not wrong), as tsc accepts the whole
// file; a mistake inside the JSX is found at its own line before the end of input, as tsc finds it.
func TestJSXStreamsLineByLine(t *testing.T) {
	ck := newChecker(t)
	dir := writeFile(t, t.TempDir(), "tsconfig.json", jsxConfig)
	good := jsxPrelude + jsxComponent
	evs := checkText(t, ck, dir, "card.tsx", good) // writes dir/card.tsx
	if first, ok := firstError(evs); first != nil || !ok {
		t.Errorf("the component is rejected (%+v, done ok=%v); tsc accepts it", first, ok)
	}
	if line, code := tscOn(t, dir, "card.tsx"); line != 0 {
		t.Fatalf("tsc rejects the test's own component: line %d, TS%d", line, code)
	}

	bad := strings.Replace(good, "{n} item(s)", "{props.size} item(s)", 1)
	wantLine := strings.Count(bad[:strings.Index(bad, "props.size")], "\n") + 1
	dir = writeFile(t, writeFile(t, t.TempDir(), "tsconfig.json", jsxConfig), "bad.tsx", bad) // on disk: the project's include finds it
	s, err := ck.Start(context.Background(), checkers.SessionOptions{Filename: filepath.Join(dir, "bad.tsx")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ev := next(t, s); ev.Kind != checkers.KindInit {
		t.Fatalf("first event %+v, want init", ev)
	}
	go func() {
		for _, line := range strings.SplitAfter(bad, "\n") {
			if line != "" && s.Submit(line, checkers.SubmitOptions{}) != nil {
				return
			}
		}
	}()
	for {
		ev := next(t, s)
		if ev.Kind == checkers.KindError {
			if ev.Line != wantLine {
				t.Errorf("error at line %d (%s), want %d", ev.Line, ev.Diag, wantLine)
			}
			break
		}
		if ev.Kind == checkers.KindProgress && ev.Off == len(bad) {
			t.Fatal("no error before the end of input for a mistake inside the JSX")
		}
	}
	if line, _ := tscOn(t, dir, "bad.tsx"); line != wantLine {
		t.Errorf("tsc's first error at line %d, want %d", line, wantLine)
	}
}

// writeFile writes text to dir/name and returns dir.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// jsxConfig is the tsconfig.json of the tests' .tsx files: without one, tsc refuses JSX (TS17004).
const jsxConfig = `{"compilerOptions":{"noEmit":true,"jsx":"preserve"}}`

// tscOn runs the installed tsc on dir/name alone, under jsxConfig, and returns its first error's
// line and code (0 when it accepts).
func tscOn(t *testing.T, dir, name string) (line, code int) {
	t.Helper()
	exe, err := FindCompiler("")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	sub := writeFile(t, writeFile(t, t.TempDir(), name, string(src)), "tsconfig.json", jsxConfig)
	cmd := exec.Command(exe, "-p", ".", "--pretty", "false")
	cmd.Dir = sub
	out, _ := cmd.CombinedOutput()
	for _, l := range strings.Split(string(out), "\n") {
		if m := tscLine.FindStringSubmatch(l); m != nil && m[1] == name {
			n, _ := strconv.Atoi(m[2])
			c, _ := strconv.Atoi(m[4])
			if line == 0 || n < line {
				line, code = n, c
			}
		}
	}
	return line, code
}
