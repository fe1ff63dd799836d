package benchmark

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/hydra-lsp/hydra/checkers/agreement"
	"github.com/hydra-lsp/hydra/checkers/wholefile"
)

// HeavyTemplate is the head of every program of the heavy set: <bits/stdc++.h> and the kind of
// template competitive programmers start from (the paper's LiveCodeBench tasks look like this):
// type aliases, macros, small templates, fast I/O.
const HeavyTemplate = `#include <bits/stdc++.h>
using namespace std;
typedef long long ll;
typedef unsigned long long ull;
typedef pair<int, int> pii;
typedef vector<int> vi;
typedef vector<long long> vll;
#define ALL(x) (x).begin(), (x).end()
#define SZ(x) (int)(x).size()
#define REP(i, a, b) for (int i = (a); i < (b); ++i)
template <class T> bool chmin(T &a, const T &b) { return b < a ? (a = b, true) : false; }
template <class T> bool chmax(T &a, const T &b) { return a < b ? (a = b, true) : false; }
template <class T> ostream &operator<<(ostream &os, const vector<T> &v) {
  for (const auto &x : v) os << x << ' ';
  return os;
}
const long long MOD = 1000000007LL;
long long power_mod(long long b, long long e, long long m = MOD) {
  long long r = 1;
  b %= m;
  for (; e > 0; e >>= 1, b = b * b % m)
    if (e & 1) r = r * b % m;
  return r;
}
struct FastIO {
  FastIO() {
    ios::sync_with_stdio(false);
    cin.tie(nullptr);
  }
} fast_io_;
`

// includeLine matches an #include line (the heavy template's <bits/stdc++.h> replaces them).
var includeLine = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*include[^\n]*\n`)

// Heavy makes the heavy program set from the corpus's C++ programs: each keeps its code with its
// #include lines replaced by HeavyTemplate. Programs that whole-file clang rejects that way (a
// name clashing with namespace std, say) are left out. It returns up to n programs, spread
// evenly over the C++ programs, skipping those longer than maxBytes.
func Heavy(ctx context.Context, clang string, all []agreement.Program, n, maxBytes int) ([]agreement.Program, error) {
	var cpp []agreement.Program
	for _, p := range all {
		if p.Lang == "c++" && len(p.Text) <= maxBytes {
			cpp = append(cpp, p)
		}
	}
	if len(cpp) == 0 || n <= 0 {
		return nil, nil
	}
	var out []agreement.Program
	step := max(1, len(cpp)/(2*n))
	for i := 0; i < len(cpp) && len(out) < n; i += step {
		p := cpp[i]
		q := p
		q.ID = "heavy:" + p.ID
		q.Flags = agreement.FlagsFor("c++", "c++17")
		q.Text = HeavyTemplate + includeLine.ReplaceAllString(p.Text, "")
		ok, err := compiles(ctx, clang, q)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, q)
		}
	}
	return out, nil
}

// Long makes one C++ program of at least lines lines for the growth measurement: HeavyTemplate,
// then heavy-set programs each in a namespace of its own (their mains included), added one by
// one as long as whole-file clang accepts the result.
func Long(ctx context.Context, clang string, heavy []agreement.Program, lines int) (agreement.Program, error) {
	text := HeavyTemplate
	used := 0
	for k := 0; strings.Count(text, "\n") < lines && k < 4*len(heavy)+4; k++ {
		if len(heavy) == 0 {
			break
		}
		p := heavy[k%len(heavy)]
		body := strings.TrimPrefix(p.Text, HeavyTemplate)
		if strings.Contains(body, "#define") {
			continue // macros would leak into the programs after it
		}
		cand := text + fmt.Sprintf("namespace part%d {\n%s\n}  // namespace part%d\n", k, body, k)
		q := agreement.Program{ID: "long", Base: "long.cpp", Lang: "c++", Flags: agreement.FlagsFor("c++", "c++17"), Text: cand}
		ok, err := compiles(ctx, clang, q)
		if err != nil {
			return agreement.Program{}, err
		}
		if ok {
			text = cand
			used++
		}
	}
	if strings.Count(text, "\n") < lines {
		return agreement.Program{}, fmt.Errorf("long program: only %d lines from %d programs", strings.Count(text, "\n"), used)
	}
	return agreement.Program{ID: fmt.Sprintf("long (%d heavy programs in namespaces)", used), Base: "long.cpp", Lang: "c++",
		Flags: agreement.FlagsFor("c++", "c++17"), Text: text}, nil
}

// compiles reports whether whole-file clang accepts p.
func compiles(ctx context.Context, clang string, p agreement.Program) (bool, error) {
	v, err := wholefile.Check(ctx, p.Text, wholefile.Options{Clang: clang, Name: p.Base, Flags: p.Flags})
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	return err == nil && v.OK, nil
}
