package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Command names (the contract with the editor clients).
const (
	// CommandGenerate runs "Generate with repair" and returns its summary when it ends.
	CommandGenerate = "hydra.generate"
	// CommandCancel cancels generations: all, or those of one document.
	CommandCancel = "hydra.cancel"
	// KindGenerate is the code action kind of "Generate with repair".
	KindGenerate = "source.generate.hydra"
	// KindRewrite is the same action under refactor.rewrite, where VS Code's lightbulb and
	// Ctrl+. show it (they leave source actions out); offered only where it fits (offerRewrite).
	KindRewrite = "refactor.rewrite.hydra"
)

// initialize answers the client's capabilities with the server's and takes the initial
// configuration from initializationOptions.
func (s *Server) initialize(ctx context.Context, params json.RawMessage) (any, error) {
	var p InitializeParams
	if err := decodeParams("initialize", params, &p); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.initialized {
		s.mu.Unlock()
		return nil, invalidParams("initialize", errors.New("initialize sent twice"))
	}
	s.initialized = true
	s.caps = p.Capabilities
	s.roots = workspaceRoots(p)
	s.enc = negotiateEncoding(p.Capabilities.General.PositionEncodings)
	enc := s.enc
	s.mu.Unlock()
	s.toClient.Store(true) // the log goes to the client from now on (window/logMessage)

	if len(p.InitializationOptions) > 0 {
		if err := s.cfg.apply(sourceInitOptions, p.InitializationOptions); err != nil {
			s.logf("initializationOptions: %v", err)
		}
		s.applyCheckTimeout()
	}
	if p.ProcessID != nil && *p.ProcessID > 0 {
		s.watchParent(ctx, *p.ProcessID)
	}

	caps := ServerCapabilities{
		PositionEncoding: enc.String(),
		TextDocumentSync: TextDocumentSyncOptions{OpenClose: true, Change: 2},
		CodeActionProvider: CodeActionOptions{
			CodeActionKinds: []string{KindGenerate, KindRewrite},
		},
		ExecuteCommandProvider: ExecuteCommandOptions{
			Commands:         []string{CommandGenerate, CommandCancel, CommandShowTrace},
			WorkDoneProgress: true,
		},
		InlineCompletionProvider: &InlineCompletionOptions{WorkDoneProgress: true},
	}
	own := InitializeResult{Capabilities: caps, ServerInfo: ServerInfo{Name: "hydra", Version: s.opts.Version}}
	return s.startBackends(ctx, params, p, own), nil
}

// initializedNotification pulls the configuration when the client serves workspace/configuration.
func (s *Server) initializedNotification(context.Context, json.RawMessage) error {
	s.goPullConfig()
	return nil
}

// shutdownRequest stops every generation; the processes end at exit.
func (s *Server) shutdownRequest(context.Context, json.RawMessage) (any, error) {
	s.mu.Lock()
	s.shutdown = true
	s.mu.Unlock()
	s.stopAll()
	return nil, nil
}

// exitNotification ends Serve.
func (s *Server) exitNotification(context.Context, json.RawMessage) error {
	s.exitOnce.Do(func() {
		s.mu.Lock()
		s.exitOK = s.shutdown
		s.mu.Unlock()
		close(s.exited)
	})
	return nil
}

// watchParent ends the server when the client's process is gone even though the pipe stays
// open (clangd does the same): a vanished client must leave no checker process behind.
func (s *Server) watchParent(ctx context.Context, pid int) {
	go func() {
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.exited:
				return
			case <-t.C:
				if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
					s.logf("client process %d is gone; exiting", pid)
					s.exitOnce.Do(func() { close(s.exited) })
					return
				}
			}
		}
	}()
}

// workspaceRoots returns the local directories of the client's workspace folders and rootUri.
func workspaceRoots(p InitializeParams) []string {
	var roots []string
	for _, f := range p.WorkspaceFolders {
		if d := uriPath(f.URI); d != "" {
			roots = append(roots, filepath.Clean(d))
		}
	}
	if d := uriPath(p.RootURI); d != "" {
		roots = append(roots, filepath.Clean(d))
	}
	return roots
}

// rootFor returns the workspace root that holds path (the innermost), or "" when none does:
// the checker then reads only the file's own directory and the include paths.
func (s *Server) rootFor(path string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	best := ""
	for _, r := range s.roots {
		if (path == r || strings.HasPrefix(path, r+string(filepath.Separator))) && len(r) > len(best) {
			best = r
		}
	}
	return best
}
