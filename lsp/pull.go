package lsp

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// Pulled diagnostics pushed. TypeScript 7's server publishes no diagnostics by itself: it
// answers LSP 3.17's textDocument/diagnostic, which older clients (eglot, Neovim before 0.10)
// never send. For such a client Hydra asks the server itself, a moment after each change of a
// document, and publishes the answer merged with its own diagnostics (diagMerger), as the
// client would show a pushing server's.

// pullDelay is how long a document must stay unchanged before its diagnostics are asked for:
// typing does not start a check per keystroke.
const pullDelay = 150 * time.Millisecond

// pullTimeout bounds one diagnostic request.
const pullTimeout = 30 * time.Second

// pulls holds each document's pending pull.
type pulls struct {
	mu     sync.Mutex
	timers map[string]*time.Timer
}

// schedulePull asks for uri's diagnostics once it has been unchanged for pullDelay.
func (px *backend) schedulePull(uri string) {
	px.pull.mu.Lock()
	defer px.pull.mu.Unlock()
	if px.pull.timers == nil {
		px.pull.timers = map[string]*time.Timer{}
	}
	if t := px.pull.timers[uri]; t != nil {
		t.Stop()
	}
	px.pull.timers[uri] = time.AfterFunc(pullDelay, func() { px.pullNow(uri) })
}

// pullNow asks the server for uri's diagnostics and publishes them.
func (px *backend) pullNow(uri string) {
	select {
	case <-px.done:
		return
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), pullTimeout)
	defer cancel()
	params, _ := json.Marshal(map[string]any{"textDocument": map[string]any{"uri": uri}})
	res, err := px.call(ctx, "textDocument/diagnostic", params)
	if err != nil {
		px.s.logf("%s: diagnostics of %s: %v", px.name, uri, err)
		return
	}
	var report struct {
		Kind  string            `json:"kind"`
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(res, &report); err != nil || report.Kind != "full" {
		return // "unchanged" needs a previous result id, which Hydra never sends
	}
	if report.Items == nil {
		report.Items = []json.RawMessage{}
	}
	b, _ := json.Marshal(mergedDiagnostics{URI: uri, Diagnostics: report.Items})
	px.diags.fromBackend(px.s, px.name, b)
}

// hasCapability says whether an initialize answer offers capability k.
func hasCapability(res json.RawMessage, k string) bool {
	var r struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	if json.Unmarshal(res, &r) != nil {
		return false
	}
	v, ok := r.Capabilities[k]
	return ok && string(v) != "false" && string(v) != "null"
}

// clientPulls says whether the client's initialize params say it pulls diagnostics
// (capabilities.textDocument.diagnostic).
func clientPulls(raw json.RawMessage) bool {
	var p struct {
		Capabilities struct {
			TextDocument struct {
				Diagnostic json.RawMessage `json:"diagnostic"`
			} `json:"textDocument"`
		} `json:"capabilities"`
	}
	return json.Unmarshal(raw, &p) == nil && len(p.Capabilities.TextDocument.Diagnostic) > 0 && string(p.Capabilities.TextDocument.Diagnostic) != "null"
}
