package clang

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/hydra-lsp/hydra/checkers"
)

// The protocol's two hot lines, one each per chunk, are written and read by hand: encoding/json
// with reflection (and a map for Meta) costs more than the rest of the driver's work on a line
// (docs/checker-benchmark.md, lever "hand-written submit and progress lines"). Every other line,
// and any line that does not look exactly as expected, goes through encoding/json.

// submitLine returns the JSON line that precedes a chunk's raw bytes.
func (s *Session) submitLine(h submitHeader) ([]byte, error) {
	if s.c.plain || !plainWord(h.Cat) || h.Op != "submit" {
		hdr, err := json.Marshal(h)
		return append(hdr, '\n'), err
	}
	b := make([]byte, 0, 80)
	b = append(b, `{"op":"submit","len":`...)
	b = strconv.AppendInt(b, int64(h.Len), 10)
	if h.Cat != "" {
		b = append(b, `,"cat":"`...)
		b = append(b, h.Cat...)
		b = append(b, '"')
	}
	if h.Chkpt != 0 {
		b = append(b, `,"chkpt":`...)
		b = strconv.AppendInt(b, h.Chkpt, 10)
	}
	if h.KeepGoing {
		b = append(b, `,"keep_going":true`...)
	}
	return append(b, "}\n"...), nil
}

// plainWord reports whether s needs no JSON escaping (letters, digits, '_', '-').
func plainWord(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// decodeEvent decodes one event line from the shim.
func (c *Checker) decodeEvent(line []byte, ev *checkers.Event) error {
	if !c.plain && decodeProgress(line, ev) {
		return nil
	}
	return json.Unmarshal(line, ev)
}

// decodeProgress reads a progress line as the shim prints it (llvm::json, keys sorted):
// {"cat":"WORD","event":"progress","off":N,"shim_faults":N,"shim_us":N}; false (ev untouched)
// for anything else.
func decodeProgress(line []byte, ev *checkers.Event) bool {
	rest, ok := bytes.CutPrefix(line, []byte(`{"cat":"`))
	if !ok {
		return false
	}
	q := bytes.IndexByte(rest, '"')
	if q < 0 || !plainWord(string(rest[:q])) {
		return false
	}
	cat := rest[:q]
	rest, ok = bytes.CutPrefix(rest[q:], []byte(`","event":"progress","off":`))
	if !ok {
		return false
	}
	off, rest, ok := cutInt(rest)
	if !ok {
		return false
	}
	var us, flt int64
	if r, ok2 := bytes.CutPrefix(rest, []byte(`,"shim_faults":`)); ok2 {
		if flt, rest, ok = cutInt(r); !ok {
			return false
		}
	}
	if r, ok2 := bytes.CutPrefix(rest, []byte(`,"shim_us":`)); ok2 {
		if us, rest, ok = cutInt(r); !ok {
			return false
		}
	}
	if string(bytes.TrimRight(rest, "\r\n")) != "}" {
		return false
	}
	*ev = checkers.Event{Kind: checkers.KindProgress, Cat: string(cat), Off: int(off), ShimUS: us, ShimFaults: flt}
	return true
}

// cutInt reads a non-negative decimal integer at the start of b.
func cutInt(b []byte) (int64, []byte, bool) {
	i := 0
	for i < len(b) && i < 18 && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, b, false
	}
	n, err := strconv.ParseInt(string(b[:i]), 10, 64)
	return n, b[i:], err == nil
}
