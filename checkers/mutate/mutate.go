// Package mutate makes erroneous variants of correct C/C++ programs with operators that mimic the
// mistakes a language model makes: a renamed declaration whose uses keep the old name, a missing
// #include, a changed declared type, a declaration moved into an inner block, a missing ';', a
// call of a member that does not exist, a call with the wrong number of arguments.
//
// It works on the text with a small lexer, not on a Clang AST, so a mutant may happen to compile
// (an include that another header brings in anyway, a rename of an unused name); callers that
// need an error check the mutant with a compiler. Apply makes one mutant, All makes many.
// The checker agreement test and the simulated model (sim) both use it.
package mutate

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Op is a mutation operator.
type Op string

// The operators.
const (
	RenameDecl    Op = "rename_decl"     // rename a declaration; its uses keep the old name
	DeleteInclude Op = "delete_include"  // delete an #include line
	ChangeType    Op = "change_type"     // change a declared scalar type to an incompatible one
	MoveDecl      Op = "move_decl_inner" // wrap a local declaration in a block of its own
	DeleteSemi    Op = "delete_semicolon"
	NoMember      Op = "no_member" // call/access a member that does not exist
	ArgCount      Op = "arg_count" // drop or add an argument of a call
)

// Ops lists every operator, in a fixed order.
var Ops = []Op{RenameDecl, DeleteInclude, ChangeType, MoveDecl, DeleteSemi, NoMember, ArgCount}

// TypeScript is the lang of Apply and OpsFor for TypeScript programs.
const TypeScript = "typescript"

// OpsFor lists the operators that make sense in lang, in Ops' order: all of them for C and C++;
// for TypeScript all but DeleteInclude (it has no #include) and DeleteSemi (automatic semicolon
// insertion makes a missing ';' rarely an error).
func OpsFor(lang string) []Op {
	if lang != TypeScript {
		return append([]Op(nil), Ops...)
	}
	return []Op{RenameDecl, ChangeType, MoveDecl, NoMember, ArgCount}
}

// ErrNotApplicable is returned (wrapped) by Apply when the source has no site for the operator.
var ErrNotApplicable = errors.New("operator not applicable")

// Mutant is one variant of a program.
type Mutant struct {
	// Text is the mutated program.
	Text string
	Op   Op
	// RootOff is the byte offset in Text of the fault's root cause: the changed declaration,
	// the place of a deleted include or semicolon, the changed call or member access.
	RootOff int
	// RootLine is the 1-based line of RootOff.
	RootLine int
	// Desc says what was changed, for reports ("renamed 'count' to 'counts' at line 12").
	Desc string
}

// site is a candidate edit: replace src[off:end] with repl.
type site struct {
	off, end int
	repl     string
	root     int // offset of the root cause in the mutated text
	desc     string
}

// Apply makes one mutant of src with op; lang is "c", "c++" (also "cpp") or TypeScript. rng picks among the
// candidate sites. It returns an error wrapping ErrNotApplicable when op has no site in src.
func Apply(src, lang string, op Op, rng *rand.Rand) (Mutant, error) {
	sites, err := sitesFor(src, lang, op, tokenize(src))
	if err != nil {
		return Mutant{}, err
	}
	if len(sites) == 0 {
		return Mutant{}, fmt.Errorf("mutate %s: %w", op, ErrNotApplicable)
	}
	return build(src, op, sites[rng.IntN(len(sites))]), nil
}

func sitesFor(src, lang string, op Op, toks []token) ([]site, error) {
	cpp := lang != "c"
	switch op {
	case RenameDecl:
		return renameSites(src, toks), nil
	case DeleteInclude:
		return includeSites(src, toks), nil
	case ChangeType:
		if lang == TypeScript {
			return tsTypeSites(toks), nil
		}
		return typeSites(toks, cpp), nil
	case MoveDecl:
		return moveSites(src, toks), nil
	case DeleteSemi:
		return semiSites(toks, cpp), nil
	case NoMember:
		return memberSites(src, toks), nil
	case ArgCount:
		return argSites(src, toks), nil
	}
	return nil, fmt.Errorf("mutate: unknown operator %q", op)
}

func build(src string, op Op, s site) Mutant {
	text := src[:s.off] + s.repl + src[s.end:]
	return Mutant{
		Text:     text,
		Op:       op,
		RootOff:  s.root,
		RootLine: 1 + strings.Count(text[:s.root], "\n"),
		Desc:     s.desc,
	}
}

// All makes up to n distinct mutants of src: it takes lang's operators (OpsFor) in turn (from a random
// start) and, for each, a site not used yet (in an order shuffled by rng). It returns fewer
// when src has fewer sites. The result depends only on src, lang, n and rng's state.
func All(src, lang string, rng *rand.Rand, n int) []Mutant {
	toks := tokenize(src)
	ops := OpsFor(lang)
	perOp := make([][]site, len(ops))
	for i, op := range ops {
		sites, _ := sitesFor(src, lang, op, toks)
		rng.Shuffle(len(sites), func(a, b int) { sites[a], sites[b] = sites[b], sites[a] })
		perOp[i] = sites
	}
	var out []Mutant
	seen := map[string]bool{src: true}
	start := rng.IntN(len(ops))
	for len(out) < n {
		progress := false
		for k := range ops {
			i := (start + k) % len(ops)
			for len(perOp[i]) > 0 && len(out) < n {
				s := perOp[i][0]
				perOp[i] = perOp[i][1:]
				m := build(src, ops[i], s)
				if seen[m.Text] {
					continue
				}
				seen[m.Text] = true
				out = append(out, m)
				progress = true
				break
			}
		}
		if !progress {
			break
		}
	}
	return out
}

var keywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`alignas alignof and asm auto bool break case catch char char8_t
		char16_t char32_t class const consteval constexpr constinit const_cast continue co_await
		co_return co_yield decltype default delete do double dynamic_cast else enum explicit export
		extern false float for friend goto if inline int long mutable namespace new noexcept not
		nullptr operator or private protected public register reinterpret_cast requires return short
		signed sizeof static static_assert static_cast struct switch template this thread_local throw
		true try typedef typeid typename union unsigned using virtual void volatile wchar_t while
		_Bool _Complex _Static_assert _Noreturn _Alignas _Alignof _Atomic _Thread_local restrict
		NULL main std size_t uint8_t uint16_t uint32_t uint64_t int8_t int16_t int32_t int64_t`) {
		keywords[k] = true
	}
}

// typeLike reports whether t can end a declaration's type (so the identifier after it is declared).
func typeLike(t token) bool {
	switch t.kind {
	case tkIdent:
		switch t.text {
		case "return", "else", "case", "goto", "new", "delete", "throw", "sizeof", "typedef",
			"using", "namespace", "struct", "class", "union", "enum", "do", "co_return", "operator",
			"public", "private", "protected", "template", "typename", "not", "and", "or":
			return false
		}
		return true
	case tkPunct:
		return t.text == "*" || t.text == "&" || t.text == ">" || t.text == "&&"
	}
	return false
}

// declAt reports whether toks[i] is an identifier being declared: a type before it and a
// declarator end after it.
func declAt(toks []token, i int) bool {
	t := toks[i]
	if t.kind != tkIdent || t.directive || keywords[t.text] || i == 0 || i+1 >= len(toks) {
		return false
	}
	prev, next := toks[i-1], toks[i+1]
	if prev.directive || !typeLike(prev) {
		return false
	}
	if prev.kind == tkPunct && prev.text != ">" {
		// "a * b" or "a & b" may be an expression; require a type name before the declarator.
		if i < 2 || toks[i-2].kind != tkIdent || keywords[toks[i-2].text] && !typeKeyword(toks[i-2].text) {
			return false
		}
	}
	switch next.text {
	case "(", "=", ";", "[", ",", ")", "{":
		return true
	}
	return false
}

func typeKeyword(s string) bool {
	switch s {
	case "int", "char", "double", "float", "long", "short", "bool", "void", "unsigned", "signed", "auto", "const", "_Bool":
		return true
	}
	return false
}

// uses returns the indexes of identifier tokens named name outside directives, after index from.
func uses(toks []token, name string, from int) []int {
	var out []int
	for j := from; j < len(toks); j++ {
		if toks[j].kind == tkIdent && toks[j].text == name && !toks[j].directive {
			out = append(out, j)
		}
	}
	return out
}

// freshName derives a plausible wrong name from name that does not occur in src.
func freshName(src, name string, alts ...string) string {
	cands := append(alts, name+"s", name+"_val", "m_"+name, name+"1", name+"_x")
	for _, c := range cands {
		if c != name && !containsIdent(src, c) {
			return c
		}
	}
	return name + "_hydra_mutant"
}

func containsIdent(src, id string) bool {
	for i := 0; ; {
		k := strings.Index(src[i:], id)
		if k < 0 {
			return false
		}
		s, e := i+k, i+k+len(id)
		if (s == 0 || !isIdentChar(src[s-1])) && (e == len(src) || !isIdentChar(src[e])) {
			return true
		}
		i = e
	}
}

func renameSites(src string, toks []token) []site {
	var out []site
	declared := map[string]bool{}
	for i, t := range toks {
		if declared[t.text] || !declAt(toks, i) {
			continue
		}
		declared[t.text] = true
		if len(uses(toks, t.text, i+1)) == 0 {
			continue
		}
		nn := freshName(src, t.text)
		out = append(out, site{off: t.off, end: t.off + len(t.text), repl: nn, root: t.off,
			desc: fmt.Sprintf("renamed declaration '%s' to '%s' at line %d", t.text, nn, t.line)})
	}
	return out
}

func includeSites(src string, toks []token) []site {
	var out []site
	for i, t := range toks {
		if t.text != "#" || !t.directive || i+1 >= len(toks) || toks[i+1].text != "include" {
			continue
		}
		s := strings.LastIndexByte(src[:t.off], '\n') + 1
		e := strings.IndexByte(src[t.off:], '\n')
		if e < 0 {
			e = len(src)
		} else {
			e += t.off + 1
		}
		out = append(out, site{off: s, end: e, repl: "", root: s,
			desc: fmt.Sprintf("deleted %q at line %d", strings.TrimSpace(src[s:e]), t.line)})
	}
	return out
}

var scalarTypes = map[string]bool{"int": true, "long": true, "double": true, "float": true,
	"char": true, "bool": true, "short": true, "unsigned": true, "size_t": true, "int64_t": true,
	"uint64_t": true, "int32_t": true, "uint32_t": true, "uint8_t": true}

func typeSites(toks []token, cpp bool) []site {
	var out []site
	for i := 1; i+2 < len(toks); i++ {
		t := toks[i]
		if t.kind != tkIdent || !scalarTypes[t.text] || t.directive {
			continue
		}
		// A plain "T name =|;|[|,|)" declaration, not part of a longer type ("long long x").
		prev, name, next := toks[i-1], toks[i+1], toks[i+2]
		if prev.kind == tkIdent && (scalarTypes[prev.text] || prev.text == "const" || prev.text == "signed") {
			continue
		}
		if name.kind != tkIdent || keywords[name.text] {
			continue
		}
		switch next.text {
		case "=", ";", "[", ",", ")":
		default:
			continue
		}
		repl := "char *"
		if t.text == "char" {
			repl = "double *"
		}
		if cpp {
			repl = "std::string"
			if t.text == "char" || t.text == "bool" {
				repl = "std::vector<int>"
			}
		}
		out = append(out, site{off: t.off, end: t.off + len(t.text), repl: repl, root: t.off,
			desc: fmt.Sprintf("changed type of '%s' from '%s' to '%s' at line %d", name.text, t.text, repl, t.line)})
	}
	return out
}

// tsTypes maps a TypeScript primitive type to an incompatible one.
var tsTypes = map[string]string{"number": "string", "string": "number", "boolean": "number"}

// tsTypeSites finds TypeScript type annotations ": number", ": string", ": boolean" and changes
// the type, and "let|const|var x = <number literal>" declarations, which get a ": string" type.
func tsTypeSites(toks []token) []site {
	var out []site
	for i := 1; i+1 < len(toks); i++ {
		t := toks[i]
		if t.text == ":" && toks[i+1].kind == tkIdent && tsTypes[toks[i+1].text] != "" &&
			(toks[i-1].kind == tkIdent || toks[i-1].text == ")") {
			ty := toks[i+1]
			repl := tsTypes[ty.text]
			out = append(out, site{off: ty.off, end: ty.off + len(ty.text), repl: repl, root: ty.off,
				desc: fmt.Sprintf("changed type '%s' to '%s' at line %d", ty.text, repl, ty.line)})
			continue
		}
		if (t.text == "let" || t.text == "const" || t.text == "var") && i+3 < len(toks) && toks[i+1].kind == tkIdent &&
			toks[i+2].text == "=" && toks[i+3].kind == tkNumber {
			name := toks[i+1]
			out = append(out, site{off: name.off + len(name.text), end: name.off + len(name.text), repl: ": string", root: name.off,
				desc: fmt.Sprintf("declared '%s' a string at line %d", name.text, name.line)})
		}
	}
	return out
}

// moveSites finds local declaration statements "T name ...;" used later in the same block, and
// wraps each in braces of its own.
func moveSites(src string, toks []token) []site {
	var out []site
	for i := 1; i < len(toks); i++ {
		t := toks[i]
		if t.directive || t.depth < 1 || t.paren != 0 || t.kind != tkIdent || keywords[t.text] && !typeKeyword(t.text) {
			continue
		}
		if p := toks[i-1].text; p != ";" && p != "{" && p != "}" {
			continue
		}
		// Find the declared name: the identifier before the first '=', ';', '[' or ','.
		j := i + 1
		for j < len(toks) && j-i < 12 && !strings.Contains(";=([{,", toks[j].text) {
			j++
		}
		if j >= len(toks) || j-i >= 12 || toks[j].text == "(" || toks[j].text == "{" {
			continue
		}
		name := toks[j-1]
		if name.kind != tkIdent || keywords[name.text] || !declAt(toks, j-1) {
			continue
		}
		// The end of the statement: the ';' at this brace and paren depth.
		k := j
		for k < len(toks) && !(toks[k].text == ";" && toks[k].paren == 0 && toks[k].depth == t.depth) {
			if toks[k].depth < t.depth {
				k = len(toks)
			}
			k++
		}
		if k >= len(toks) {
			continue
		}
		// Used later in the same block?
		used := false
		for _, u := range uses(toks, name.text, k+1) {
			if toks[u].depth < t.depth {
				break
			}
			used = true
			break
		}
		if !used {
			continue
		}
		end := toks[k].off + 1
		out = append(out, site{off: t.off, end: end, repl: "{ " + src[t.off:end] + " }", root: t.off,
			desc: fmt.Sprintf("moved declaration of '%s' at line %d into an inner block", name.text, t.line)})
	}
	return out
}

// semiSites finds statement and declaration ends. In C the ';' before a struct's '}' is left
// alone: clang only warns when it is missing.
func semiSites(toks []token, cpp bool) []site {
	var out []site
	for i, t := range toks {
		if t.text != ";" || t.directive || t.paren != 0 || i == 0 {
			continue
		}
		if !cpp && i+1 < len(toks) && toks[i+1].text == "}" && toks[i+1].depth == t.depth {
			continue
		}
		out = append(out, site{off: t.off, end: t.off + 1, repl: "", root: t.off,
			desc: fmt.Sprintf("deleted ';' at line %d", t.line)})
	}
	return out
}

var wrongMembers = map[string][]string{
	"push_back": {"push", "append"}, "size": {"length", "count"}, "empty": {"isEmpty"},
	"begin": {"start"}, "end": {"finish"}, "first": {"key"}, "second": {"value"},
	"next": {"nxt"}, "data": {"values"}, "left": {"lchild"}, "right": {"rchild"},
	"insert": {"add"}, "erase": {"remove"}, "find": {"search"}, "pop_back": {"pop"},
	"length": {"len"}, "top": {"peek"}, "val": {"value"}, "key": {"k"},
}

func memberSites(src string, toks []token) []site {
	var out []site
	for i := 0; i+1 < len(toks); i++ {
		t, m := toks[i], toks[i+1]
		if (t.text != "." && t.text != "->") || t.directive || m.kind != tkIdent || i == 0 {
			continue
		}
		// The object must be an expression (identifier, ')' or ']'), not a designated initializer.
		if p := toks[i-1]; p.kind != tkIdent && p.text != ")" && p.text != "]" {
			continue
		}
		nn := freshName(src, m.text, wrongMembers[m.text]...)
		out = append(out, site{off: m.off, end: m.off + len(m.text), repl: nn, root: m.off,
			desc: fmt.Sprintf("member '%s' replaced by nonexistent '%s' at line %d", m.text, nn, m.line)})
	}
	return out
}

// argSites finds calls of functions the file defines and drops their last argument, or adds
// one when there is none.
func argSites(src string, toks []token) []site {
	defined := map[string]bool{}
	for i, t := range toks {
		if t.depth == 0 && declAt(toks, i) && toks[i+1].text == "(" {
			defined[t.text] = true
		}
	}
	var out []site
	for i := 1; i+1 < len(toks); i++ {
		t := toks[i]
		if t.depth < 1 || t.directive || !defined[t.text] || toks[i+1].text != "(" || declAt(toks, i) {
			continue
		}
		if p := toks[i-1].text; p == "." || p == "->" || p == "::" {
			continue
		}
		// Find the matching ')' and the last top-level ','.
		open := toks[i+1]
		lastComma, close := -1, -1
		for j := i + 2; j < len(toks); j++ {
			if toks[j].paren == open.paren+1 && toks[j].text == ")" {
				close = j
				break
			}
			if toks[j].paren == open.paren+1 && toks[j].text == "," {
				lastComma = j
			}
		}
		if close < 0 {
			continue
		}
		var s site
		switch {
		case close == i+2: // no arguments: add one
			s = site{off: toks[close].off, end: toks[close].off, repl: "0", desc: "added an argument"}
		case lastComma >= 0: // drop the last argument
			s = site{off: toks[lastComma].off, end: toks[close].off, repl: "", desc: "dropped the last argument"}
		default: // one argument: drop it
			s = site{off: toks[i+2].off, end: toks[close].off, repl: "", desc: "dropped the only argument"}
		}
		s.root = t.off
		s.desc = fmt.Sprintf("%s of call '%s' at line %d", s.desc, t.text, t.line)
		out = append(out, s)
	}
	return out
}
