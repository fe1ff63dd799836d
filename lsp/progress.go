package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// progress is one work-done progress (window/workDoneProgress/create + $/progress begin,
// report, end). A nil *progress, or one without a token, reports nothing: the client did
// not ask for progress and does not support server-created progress (eglot 1.9).
type progress struct {
	s     *Server
	token json.RawMessage

	mu    sync.Mutex
	ended bool
	last  string
}

// beginProgress starts a progress for a running job. token is the client's workDoneToken
// when it gave one; otherwise one is created when the client supports it. cancel is what
// window/workDoneProgress/cancel on the token does.
func (s *Server) beginProgress(ctx context.Context, token json.RawMessage, title string, cancel func()) *progress {
	s.mu.Lock()
	supported := s.caps.Window.WorkDoneProgress
	if len(token) == 0 && supported {
		s.nextToken++
		token = json.RawMessage(fmt.Sprintf(`"hydra-%d"`, s.nextToken))
	} else if len(token) == 0 {
		s.mu.Unlock()
		return &progress{s: s}
	} else {
		supported = false // the client made the token: no create
	}
	s.progress[string(token)] = cancel
	s.mu.Unlock()
	if supported {
		cctx, stop := context.WithTimeout(ctx, 10*time.Second)
		err := s.conn.Call(cctx, "window/workDoneProgress/create", WorkDoneProgressCreateParams{Token: token}, nil)
		stop()
		if err != nil {
			s.logf("window/workDoneProgress/create: %v", err)
			s.mu.Lock()
			delete(s.progress, string(token))
			s.mu.Unlock()
			return &progress{s: s}
		}
	}
	p := &progress{s: s, token: token}
	s.notify("$/progress", ProgressParams{Token: token, Value: WorkDoneProgressBegin{
		Kind: "begin", Title: title, Cancellable: true, Message: "starting",
	}})
	return p
}

// report sends a report with msg (repeated messages are sent once).
func (p *progress) report(msg string) {
	if p == nil || p.token == nil {
		return
	}
	p.mu.Lock()
	if p.ended || msg == p.last {
		p.mu.Unlock()
		return
	}
	p.last = msg
	p.mu.Unlock()
	p.s.notify("$/progress", ProgressParams{Token: p.token, Value: WorkDoneProgressReport{
		Kind: "report", Cancellable: true, Message: msg,
	}})
}

// end ends the progress with msg; later calls do nothing.
func (p *progress) end(msg string) {
	if p == nil || p.token == nil {
		return
	}
	p.mu.Lock()
	if p.ended {
		p.mu.Unlock()
		return
	}
	p.ended = true
	p.mu.Unlock()
	p.s.mu.Lock()
	delete(p.s.progress, string(p.token))
	p.s.mu.Unlock()
	p.s.notify("$/progress", ProgressParams{Token: p.token, Value: WorkDoneProgressEnd{Kind: "end", Message: msg}})
}

// workDoneProgressCancel handles window/workDoneProgress/cancel: the job behind the token stops.
func (s *Server) workDoneProgressCancel(_ context.Context, params json.RawMessage) error {
	var p WorkDoneProgressCancelParams
	if err := decodeParams("window/workDoneProgress/cancel", params, &p); err != nil {
		return err
	}
	s.mu.Lock()
	cancel := s.progress[string(p.Token)]
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return nil
}
