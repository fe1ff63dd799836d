package typescript

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/hydra-lsp/hydra/checkers"
)

// finding is one diagnostic placed in the text (byte offsets).
type finding struct {
	start, end int
	code       int
	msg        string
	syntax     bool
}

// place converts the API's diagnostics (UTF-16 offsets) to byte offsets in text, keeping errors
// only, sorted by position.
func place(text string, ds []diagnostic, syntax bool) []finding {
	var out []finding
	for _, d := range ds {
		if d.Category != categoryError {
			continue
		}
		out = append(out, finding{start: utf16ToByte(text, d.Pos), end: utf16ToByte(text, d.End),
			code: d.Code, msg: d.Text, syntax: syntax})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out
}

// utf16ToByte returns the byte offset in text of UTF-16 offset u (clamped to the text).
func utf16ToByte(text string, u int) int {
	if u <= 0 {
		return 0
	}
	n := 0
	for i, r := range text {
		if n >= u {
			return i
		}
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return len(text)
}

// onlyTrivia reports whether s holds nothing but whitespace and comments (a line comment, or a
// block comment, closed or not).
func onlyTrivia(s string) bool { return onlyCode(s) == "" }

// Diagnostic codes that, on a function or class still being written, say only that it is not
// finished: its body is not there yet (2391 "Function implementation is missing…", 7010
// "…implicitly has an 'any' return type" on a declaration without body), its return is not
// written yet (2355, 2366, 7030), or its constructor is not (2564).
var unfinishedCodes = map[int]bool{2391: true, 7010: true, 2355: true, 2366: true, 7030: true, 2564: true}

// Diagnostic codes that name something as unused or unread (noUnusedLocals,
// noUnusedParameters…): only the end of the file decides them.
var unusedCodes = map[int]bool{6133: true, 6138: true, 6192: true, 6196: true, 6198: true, 6199: true, 6205: true}

// Diagnostic codes of a name not (yet) declared: functions, classes, types, interfaces and
// namespaces are hoisted, and a function body may use a variable declared after it, so a
// later declaration in the file can still declare it; only the end of the file decides. 2580-2593
// are "Cannot find name 'X'" with advice to install type definitions (process, require, $, describe).
var undeclaredCodes = map[int]bool{2304: true, 2552: true, 2580: true, 2581: true, 2582: true, 2583: true, 2584: true,
	2591: true, 2592: true, 2593: true, 2503: true, 2693: true}

// Diagnostic codes that depend on whether the file is a module, which any later import or
// export decides: 2669, `declare global` in a file with no import or export (yet).
var moduleCodes = map[int]bool{2669: true}

// Diagnostic codes of a body-less declaration, complete in the parse, that may still get its
// body on a later line (Allman braces, overload signatures before the implementation): only
// the end of the file decides them.
var bodyPendingCodes = map[int]bool{2391: true, 7010: true}

// Diagnostic codes of a JSX element (17008) or fragment (17014) without its closing tag, which
// the parser reports at the opening tag: where the parser also reached the end of the text, the
// element is still being written.
var openJSXCodes = map[int]bool{17008: true, 17014: true}

// judgement is the verdict on a prefix of the text that is still being written.
type judgement struct {
	// complete: the prefix parses without any syntax error (every bracket closed), so a
	// top-level unit ends here.
	complete bool
	// real is the first error that more text cannot take back (nil: none).
	real *finding
}

// judge tells unfinished from wrong on a prefix. unitStart is where the top-level unit being
// written begins (the end of the last complete prefix). At the end of input (final) every
// error is real.
func judge(text string, syn, sem []finding, unitStart int, final bool) judgement {
	j := judgement{complete: len(syn) == 0}
	if final {
		// tsc reports semantic errors only when there is no syntax error.
		if len(syn) > 0 {
			j.real = &syn[0]
		} else if len(sem) > 0 {
			j.real = &sem[0]
		}
		return j
	}
	// A syntax error with only whitespace or comments after it is the parser reaching the end
	// of an unfinished text (`foo.`, `let z = (1 +`, `class C { m(`, an open template literal,
	// string or comment); one with more text after it is real. Positions are sorted, so the first
	// syntax error is real when any is.
	atEnd := len(syn) > 0 && onlyTrivia(text[syn[len(syn)-1].end:])
	for i := range syn {
		if atEnd && openJSXCodes[syn[i].code] {
			// An element the text has not closed yet: the parser reports it at its opening
			// tag, and reaches the end of the text inside it.
			continue
		}
		if !onlyTrivia(text[syn[i].end:]) {
			j.real = &syn[i]
			return j
		}
	}
	pending := pendingNames(sem)
	firstUndeclared := -1
	for _, d := range sem {
		if undeclaredCodes[d.code] && (firstUndeclared < 0 || d.start < firstUndeclared) {
			firstUndeclared = d.start
		}
	}
	// usedBefore: the unit being written declares a name the text before it already uses (a
	// hoisted function called above it, an interface a parameter above names). Until the unit
	// is complete, what those uses are checked against is cut short: the function's return type
	// is inferred from a body not all there yet ("Type 'void' is not assignable…", "Expected 0
	// arguments…"), the interface has not all its members.
	usedBefore := false
	if !j.complete {
		for _, n := range declaredIn(text[unitStart:]) {
			pending = append(pending, n)
			usedBefore = usedBefore || namesAny(text[:unitStart], []string{n})
		}
	}
	for i := range sem {
		d := &sem[i]
		switch {
		case onlyTrivia(text[d.end:]):
			// The last thing written: an identifier, a member chain or an expression that the
			// next line may still continue.
			continue
		case unusedCodes[d.code] || bodyPendingCodes[d.code] || undeclaredCodes[d.code] || moduleCodes[d.code]:
			continue
		case !j.complete && d.end > unitStart:
			// Inside the top-level unit still being written (a function, class or object literal
			// whose brackets are open), the compiler sees it cut short: missing properties,
			// returns, arguments. Only what ends before it is settled.
			continue
		case d.start >= unitStart && unfinishedCodes[d.code] && !j.complete:
			continue
		case usedBefore:
			continue
		case d.code == 2394 && !j.complete:
			// "This overload signature is not compatible with its implementation signature",
			// on an overload before the implementation being written: the implementation's
			// return type is inferred from a body that is not all there yet.
			continue
		case firstUndeclared >= 0 && firstUndeclared <= d.start:
			// After a use of a name not declared yet (a function, class or type declared
			// further down, hoisted): what the compiler inferred from that use is an error type,
			// and an error it leads to can go with the declaration ("Parameter 'values'
			// implicitly has an 'any' type" in a callback passed to it, "'x' is possibly
			// 'null'" after a type guard it is). Only the declaration, or the end, decides.
			continue
		case namesAny(d.msg, pending):
			// It is about a name not declared yet, or declared by the unit still being written
			// ("Property 'buffer' does not exist on type 'SequenceState<T>'" while the
			// interface's members are still to come): what the declaration says decides it.
			continue
		}
		j.real = d
		return j
	}
	return j
}

// pendingNames returns the names that sem's undeclared-name errors quote ("Cannot find name
// 'X'."): a later declaration may still declare them.
func pendingNames(sem []finding) []string {
	var names []string
	for _, d := range sem {
		if !undeclaredCodes[d.code] {
			continue
		}
		if i := strings.IndexByte(d.msg, '\''); i >= 0 {
			if j := strings.IndexByte(d.msg[i+1:], '\''); j > 0 {
				names = append(names, d.msg[i+1:i+1+j])
			}
		}
	}
	return names
}

// declaredIn returns the names that the declarations at the start of unit declare (`interface
// X`, `class X`, `type X`, `enum X`, `namespace X`, `function X`, after `export`, `declare`,
// `default`, `abstract`, `const` or `async`).
func declaredIn(unit string) []string {
	var names []string
	next := ""
	for _, w := range strings.FieldsFunc(onlyCode(unit), func(r rune) bool { return r >= 0x80 || !identByte(byte(r)) }) {
		switch {
		case next != "":
			names = append(names, w)
			next = ""
		case w == "interface" || w == "class" || w == "type" || w == "enum" || w == "namespace" || w == "function":
			next = w
		case w == "export" || w == "declare" || w == "default" || w == "abstract" || w == "const" || w == "async":
		default:
			return names
		}
	}
	return names
}

// onlyCode returns s without its leading whitespace and comments (a line comment, or a block
// comment, closed or not), as TypeScript's scanner reads them: its line ends include CR, U+2028 and
// U+2029, and its whitespace NBSP and the BOM.
func onlyCode(s string) string {
	for {
		s = strings.TrimLeft(s, " \t\r\n\f\v\u00a0\ufeff\u2028\u2029")
		switch {
		case strings.HasPrefix(s, "//"):
			i := strings.IndexAny(s, "\n\r\u2028\u2029")
			if i < 0 {
				return ""
			}
			s = s[i:]
		case strings.HasPrefix(s, "/*"):
			i := strings.Index(s[2:], "*/")
			if i < 0 {
				return ""
			}
			s = s[2+i+2:]
		default:
			return s
		}
	}
}

// namesAny reports whether msg holds one of names as a whole identifier.
func namesAny(msg string, names []string) bool {
	for _, n := range names {
		for k := 0; ; {
			i := strings.Index(msg[k:], n)
			if i < 0 {
				break
			}
			i += k
			end := i + len(n)
			if (i == 0 || !identByte(msg[i-1])) && (end == len(msg) || !identByte(msg[end])) {
				return true
			}
			k = end
		}
	}
	return false
}

// category maps a TypeScript diagnostic to Hydra's coarse error classes.
func category(f finding) string {
	if f.syntax {
		return checkers.CatSyntax
	}
	switch f.code {
	case 2304, 2552, 2582, 2583, 2584, 2662, 2663, 18004:
		return checkers.CatUndeclared
	case 2339, 2551, 2353, 2561:
		return checkers.CatNoMember
	case 2322, 2345, 2352, 2362, 2363, 2365, 2367, 2739, 2740, 2741, 2769, 18046, 18047, 18048, 2531, 2532, 2533:
		return checkers.CatTypeMismatch
	case 2554, 2555, 2556, 2558:
		return checkers.CatArgCount
	case 2300, 2451, 2393, 2323:
		return checkers.CatRedefinition
	case 2355, 2366, 7030:
		return checkers.CatMissingReturn
	}
	if f.code >= 1000 && f.code < 2000 {
		return checkers.CatSyntax
	}
	return checkers.CatOther
}

// lineCol returns the 1-based line and byte column of off in text (lines end at \n, \r\n or
// \r, and at U+2028/U+2029, as in TypeScript's scanner).
func lineCol(text string, off int) (line, col int) {
	line, start := 1, 0
	for i := 0; i < off && i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		switch r {
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				n = 2
			}
			fallthrough
		case '\n', '\u2028', '\u2029':
			if i+n <= off {
				line++
				start = i + n
			}
		}
		i += n
	}
	return line, off - start + 1
}
