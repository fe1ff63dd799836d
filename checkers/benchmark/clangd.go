package benchmark

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// clangdClient drives a clangd-19 process over stdio with the go.lsp.dev/protocol types: it
// opens one document and times each full-text didChange until clangd publishes the diagnostics
// of that version. clangd runs with --sync (every request handled on its main thread, with no
// update debounce), which measures its parse cost alone and favours it.
type clangdClient struct {
	protocol.UnimplementedClient

	cmd    *exec.Cmd
	conn   jsonrpc2.Conn
	server protocol.Server
	doc    uri.URI
	dir    string

	mu      sync.Mutex
	waiters map[int32]chan struct{} // version → closed when its diagnostics arrive
}

// startClangd starts clangd in a fresh directory that holds compile_flags.txt with flags, and
// initializes it.
func startClangd(ctx context.Context, clangd string, flags []string, base string) (*clangdClient, error) {
	dir, err := os.MkdirTemp("", "hydra-bench-clangd-")
	if err != nil {
		return nil, fmt.Errorf("clangd: %w", err)
	}
	cf := ""
	for _, f := range flags {
		cf += f + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "compile_flags.txt"), []byte(cf), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("clangd: %w", err)
	}
	cmd := exec.Command(clangd, "--sync", "--background-index=false", "--clang-tidy=false", "--log=error", "--pch-storage=memory")
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", clangd, err)
	}
	c := &clangdClient{cmd: cmd, dir: dir, waiters: map[int32]chan struct{}{},
		doc: uri.File(filepath.Join(dir, base))}
	_, c.conn, c.server = protocol.NewClient(context.Background(), c, jsonrpc2.NewStream(stdio{stdout, stdin}))
	// No root: clangd finds compile_flags.txt next to the document.
	pid := int32(os.Getpid())
	ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := c.server.Initialize(ictx, &protocol.InitializeParams{ProcessID: &pid}); err != nil {
		c.Close()
		return nil, fmt.Errorf("clangd initialize: %w", err)
	}
	if err := c.server.Initialized(ictx, &protocol.InitializedParams{}); err != nil {
		c.Close()
		return nil, fmt.Errorf("clangd initialized: %w", err)
	}
	return c, nil
}

// stdio joins a child's stdout and stdin into the ReadWriteCloser a jsonrpc2 stream wants.
type stdio struct {
	io.ReadCloser
	io.WriteCloser
}

func (s stdio) Close() error {
	err := s.WriteCloser.Close()
	if e := s.ReadCloser.Close(); err == nil {
		err = e
	}
	return err
}

// PublishDiagnostics releases whoever waits for the published version.
func (c *clangdClient) PublishDiagnostics(_ context.Context, p *protocol.PublishDiagnosticsParams) error {
	v, ok := p.Version.Get()
	if !ok {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch := c.waiters[v]; ch != nil {
		close(ch)
		delete(c.waiters, v)
	}
	return nil
}

// WorkDoneProgressCreate accepts clangd's progress tokens.
func (c *clangdClient) WorkDoneProgressCreate(context.Context, *protocol.WorkDoneProgressCreateParams) error {
	return nil
}

// Progress ignores progress reports.
func (c *clangdClient) Progress(context.Context, *protocol.ProgressParams) error { return nil }

// LogMessage ignores clangd's log.
func (c *clangdClient) LogMessage(context.Context, *protocol.LogMessageParams) error { return nil }

// ShowMessage ignores clangd's messages.
func (c *clangdClient) ShowMessage(context.Context, *protocol.ShowMessageParams) error { return nil }

func (c *clangdClient) expect(version int32) chan struct{} {
	ch := make(chan struct{})
	c.mu.Lock()
	c.waiters[version] = ch
	c.mu.Unlock()
	return ch
}

// open sends didOpen with text as version 1 and waits for its diagnostics.
func (c *clangdClient) open(ctx context.Context, text string) (time.Duration, error) {
	ch := c.expect(1)
	start := time.Now()
	err := c.server.DidOpen(ctx, &protocol.DidOpenTextDocumentParams{TextDocument: protocol.TextDocumentItem{
		URI: c.doc, LanguageID: protocol.LanguageKindCPP, Version: 1, Text: text}})
	if err != nil {
		return 0, fmt.Errorf("clangd didOpen: %w", err)
	}
	return c.wait(ctx, ch, start)
}

// change sends the whole text as version and waits for that version's diagnostics.
func (c *clangdClient) change(ctx context.Context, version int32, text string) (time.Duration, error) {
	ch := c.expect(version)
	start := time.Now()
	err := c.server.DidChange(ctx, &protocol.DidChangeTextDocumentParams{
		TextDocument: protocol.VersionedTextDocumentIdentifier{
			TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: c.doc}, Version: version},
		ContentChanges: []protocol.TextDocumentContentChangeEvent{&protocol.TextDocumentContentChangeWholeDocument{Text: text}},
	})
	if err != nil {
		return 0, fmt.Errorf("clangd didChange: %w", err)
	}
	return c.wait(ctx, ch, start)
}

func (c *clangdClient) wait(ctx context.Context, ch chan struct{}, start time.Time) (time.Duration, error) {
	timer := time.NewTimer(2 * time.Minute)
	defer timer.Stop()
	select {
	case <-ch:
		return time.Since(start), nil
	case <-timer.C:
		return 0, errors.New("clangd published no diagnostics for the new version within 2 minutes")
	case <-ctx.Done():
		return 0, fmt.Errorf("clangd diagnostics: %w", ctx.Err())
	case <-c.conn.Done():
		return 0, errors.New("clangd exited")
	}
}

// Close shuts clangd down (politely, then by kill) and removes its directory.
func (c *clangdClient) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = c.server.Shutdown(ctx)
	_ = c.server.Exit(ctx)
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
	c.conn.Close()
	os.RemoveAll(c.dir)
}
