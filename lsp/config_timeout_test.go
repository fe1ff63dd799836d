package lsp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestCheckTimeoutSettingParses(t *testing.T) {
	s := newConfigStore(func(string) string { return "" })
	if _, ok := s.get().checkTimeout(); ok {
		t.Fatal("checkTimeout given before any source set it")
	}
	for _, tc := range []struct {
		raw  string
		want time.Duration
	}{
		{`{"hydra":{"checkTimeout":2.5}}`, 2500 * time.Millisecond},
		{`{"checkTimeout":0}`, -1}, // no limit
		{`{"checkTimeout":600}`, 10 * time.Minute},
	} {
		if err := s.apply(sourceDidChange, json.RawMessage(tc.raw)); err != nil {
			t.Fatalf("%s: %v", tc.raw, err)
		}
		if got, ok := s.get().checkTimeout(); !ok || got != tc.want {
			t.Fatalf("%s: checkTimeout %v (given %v), want %v", tc.raw, got, ok, tc.want)
		}
	}
	for _, raw := range []string{`{"checkTimeout":-1}`, `{"checkTimeout":1e12}`, `{"checkTimeout":"10s"}`} {
		err := s.apply(sourceDidChange, json.RawMessage(raw))
		if err == nil {
			t.Fatalf("%s accepted", raw)
		}
		if !strings.Contains(err.Error(), "checkTimeout") {
			t.Errorf("%s: error %q does not name checkTimeout", raw, err)
		}
		if got, _ := s.get().checkTimeout(); got != 10*time.Minute {
			t.Fatalf("%s changed the limit to %v", raw, got)
		}
	}
}
