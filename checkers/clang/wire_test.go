package clang

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/hydra-lsp/hydra/checkers"
)

// The hand-written fast path reads what encoding/json reads, and gives every other line to it.
func TestDecodeEventFastPathMatchesJSON(t *testing.T) {
	fast, plain := &Checker{}, &Checker{plain: true}
	for _, line := range []string{
		`{"cat":"stmt","event":"progress","off":1234,"shim_us":56}` + "\n",
		`{"cat":"stmt","event":"progress","off":1234,"shim_faults":12,"shim_us":56}` + "\n",
		`{"cat":"stmt","event":"progress","off":1234,"shim_faults":0,"shim_us":5}` + "\n",
		`{"cat":"stmt","event":"progress","off":1234,"shim_faults":-1,"shim_us":5}` + "\n",
		`{"cat":"","event":"progress","off":0}` + "\n",
		`{"cat":"line","event":"progress","off":7,"shim_us":0}`,
		`{"cat":"we\"ird","event":"progress","off":7}` + "\n",
		`{"cat":"line","event":"progress","off":-7}` + "\n",
		`{"cat":"line","event":"progress","off":7,"extra":1}` + "\n",
		`{"cat":"syntax","col":3,"diag":"expected ';'","event":"error","line":2,"meta":{"diag_id":"err_expected"},"off":9}` + "\n",
		`{"event":"done","ok":true}` + "\n",
	} {
		var a, b checkers.Event
		errA, errB := fast.decodeEvent([]byte(line), &a), plain.decodeEvent([]byte(line), &b)
		if (errA == nil) != (errB == nil) || !reflect.DeepEqual(a, b) {
			t.Errorf("%q: fast %+v (%v), encoding/json %+v (%v)", line, a, errA, b, errB)
		}
	}
}

// The hand-written submit header is the line encoding/json writes.
func TestSubmitLineMatchesJSON(t *testing.T) {
	fast, plain := &Session{c: &Checker{}}, &Session{c: &Checker{plain: true}}
	for _, h := range []submitHeader{{Op: "submit"}, {Op: "submit", Len: 12, Cat: "stmt"},
		{Op: "submit", Len: 12, Cat: "decl", Chkpt: 99}, {Op: "submit", Len: 5, Cat: `we"ird`, Chkpt: 3},
		{Op: "submit", Len: 7, Cat: "line", KeepGoing: true}} {
		a, _ := fast.submitLine(h)
		b, _ := plain.submitLine(h)
		var ha, hb submitHeader
		if err := json.Unmarshal(a, &ha); err != nil || json.Unmarshal(b, &hb) != nil || ha != hb || ha != h || a[len(a)-1] != '\n' {
			t.Errorf("%+v: fast %q, encoding/json %q", h, a, b)
		}
	}
}

// BenchmarkDecodeProgress compares the two ways of reading a progress line (the lever).
func BenchmarkDecodeProgress(b *testing.B) {
	line := []byte(`{"cat":"stmt","event":"progress","off":1234,"shim_us":56}` + "\n")
	for _, c := range []struct {
		name string
		ck   *Checker
	}{{"fast", &Checker{}}, {"encoding-json", &Checker{plain: true}}} {
		b.Run(c.name, func(b *testing.B) {
			var ev checkers.Event
			for i := 0; i < b.N; i++ {
				_ = c.ck.decodeEvent(line, &ev)
			}
		})
	}
}
