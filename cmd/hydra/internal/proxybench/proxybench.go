// Package proxybench measures what `hydra lsp` in front of clangd adds to clangd's answers: the
// same hover, definition and completion requests, on the same document, sent to a clangd of
// its own and to `hydra lsp` running clangd behind it, interleaved in one run, and the medians
// side by side. `hydra bench lsp-proxy` prints it.
package proxybench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/hydra-lsp/hydra/internal/stats"
)

// Options say what to run.
type Options struct {
	Clangd   string // the clangd binary for the direct arm (Hydra finds its own the same way)
	Hydra    string // the hydra binary
	Requests int    // requests of each kind to each server
	Log      io.Writer
}

// Row is one kind of request's latencies in milliseconds.
type Row struct {
	Method string `json:"method"`
	// Results is how many items (locations, completion items) the last answer held, or 1 for a hover.
	Results        int     `json:"results"`
	DirectP50      float64 `json:"direct_p50_ms"`
	ProxyP50       float64 `json:"proxy_p50_ms"`
	AddedP50       float64 `json:"added_p50_ms"`
	PairedAddedP50 float64 `json:"paired_added_p50_ms"`
	DirectP90      float64 `json:"direct_p90_ms"`
	ProxyP90       float64 `json:"proxy_p90_ms"`
}

// The document: a small program with a call, a std::vector and a member access.
const source = `#include <vector>

int twice(int x) { return 2 * x; }

int sum(const std::vector<int>& v) {
  int total = 0;
  for (int x : v) total += twice(x);
  return total + static_cast<int>(v.size());
}

int main() {
  std::vector<int> v{1, 2, 3};
  return sum(v);
}
`

// Run starts both servers in a fresh directory, opens the document in each, waits for
// clangd's first diagnostics in both, then times Requests of each kind to each, alternating
// which goes first.
func Run(ctx context.Context, o Options) ([]Row, error) {
	dir, err := os.MkdirTemp("", "hydra-bench-lsp-proxy-")
	if err != nil {
		return nil, fmt.Errorf("lsp-proxy bench: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "compile_flags.txt"), []byte("-std=c++17\n"), 0o644); err != nil {
		return nil, fmt.Errorf("lsp-proxy bench: %w", err)
	}
	path := filepath.Join(dir, "bench.cpp")
	if err := os.WriteFile(path, []byte(source), 0o644); err != nil {
		return nil, fmt.Errorf("lsp-proxy bench: %w", err)
	}
	doc := uri.File(path)

	// Hydra runs clangd with --log=error unless told otherwise; the direct one runs alike.
	direct, err := start(ctx, "clangd", dir, exec.Command(o.Clangd, "--log=error"), nil)
	if err != nil {
		return nil, err
	}
	defer direct.close()
	hydraCmd := exec.Command(o.Hydra, "lsp")
	hydraCmd.Stderr = o.Log
	proxy, err := start(ctx, "hydra lsp", dir, hydraCmd, map[string]any{"hydra": map[string]any{"clangd": true}})
	if err != nil {
		return nil, err
	}
	defer proxy.close()
	for _, s := range []*server{direct, proxy} {
		if err := s.open(ctx, doc, source); err != nil {
			return nil, err
		}
	}
	// Let the first builds and Hydra's preamble checkpoint settle.
	time.Sleep(2 * time.Second)

	at := func(needle string, delta int) protocol.Position {
		off := indexOf(source, needle) + delta
		line, col := 0, 0
		for _, c := range source[:off] {
			if c == '\n' {
				line, col = line+1, 0
			} else {
				col++
			}
		}
		return protocol.Position{Line: uint32(line), Character: uint32(col)}
	}
	tdp := func(p protocol.Position) protocol.TextDocumentPositionParams {
		return protocol.TextDocumentPositionParams{TextDocument: protocol.TextDocumentIdentifier{URI: doc}, Position: p}
	}
	kinds := []struct {
		method string
		params any
	}{
		{"textDocument/hover", &protocol.HoverParams{TextDocumentPositionParams: tdp(at("twice(x)", 1))}},
		{"textDocument/definition", &protocol.DefinitionParams{TextDocumentPositionParams: tdp(at("twice(x)", 1))}},
		{"textDocument/completion", &protocol.CompletionParams{TextDocumentPositionParams: tdp(at("v.size", 4))}},
	}
	var rows []Row
	for _, k := range kinds {
		// Warm both: the first answers build caches.
		for i := 0; i < 3; i++ {
			for _, s := range []*server{direct, proxy} {
				if _, _, err := s.time(ctx, k.method, k.params); err != nil {
					return nil, err
				}
			}
		}
		var d, p, diff []float64
		results := 0
		for i := 0; i < o.Requests; i++ {
			order := []*server{direct, proxy}
			if i%2 == 1 {
				order = []*server{proxy, direct}
			}
			var took [2]float64
			for _, s := range order {
				ms, n, err := s.time(ctx, k.method, k.params)
				if err != nil {
					return nil, err
				}
				if s == direct {
					took[0] = ms
				} else {
					took[1] = ms
					results = n
				}
			}
			d, p, diff = append(d, took[0]), append(p, took[1]), append(diff, took[1]-took[0])
		}
		rows = append(rows, Row{Method: k.method, Results: results,
			DirectP50: stats.Quantile(d, 0.5), ProxyP50: stats.Quantile(p, 0.5), AddedP50: stats.Quantile(p, 0.5) - stats.Quantile(d, 0.5),
			PairedAddedP50: stats.Quantile(diff, 0.5), DirectP90: stats.Quantile(d, 0.9), ProxyP90: stats.Quantile(p, 0.9)})
	}
	return rows, nil
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	panic("proxybench: " + sub + " is not in the document")
}

// server is one LSP server under test, over its stdin and stdout.
type server struct {
	name string
	cmd  *exec.Cmd
	conn *jsonrpc2.Conn

	diags chan struct{} // closed at the first publishDiagnostics
	once  sync.Once
}

func start(ctx context.Context, name, dir string, cmd *exec.Cmd, initOptions any) (*server, error) {
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	s := &server{name: name, cmd: cmd, diags: make(chan struct{})}
	s.conn = jsonrpc2.NewConn(context.Background(),
		jsonrpc2.NewBufferedStream(pipes{stdout, stdin}, jsonrpc2.VSCodeObjectCodec{}), s)
	ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	params := map[string]any{"processId": os.Getpid(), "rootUri": nil, "capabilities": map[string]any{}}
	if initOptions != nil {
		params["initializationOptions"] = initOptions
	}
	if err := s.conn.Call(ictx, "initialize", params, nil); err != nil {
		s.close()
		return nil, fmt.Errorf("%s initialize: %w", name, err)
	}
	if err := s.conn.Notify(ictx, "initialized", map[string]any{}); err != nil {
		s.close()
		return nil, fmt.Errorf("%s initialized: %w", name, err)
	}
	return s, nil
}

// Handle answers what the servers send: requests with null, diagnostics noted.
func (s *server) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	if req.Method == "textDocument/publishDiagnostics" {
		s.once.Do(func() { close(s.diags) })
	}
	if !req.Notif {
		_ = conn.Reply(ctx, req.ID, nil)
	}
}

// open opens the document and waits for its first diagnostics (the AST is built then).
func (s *server) open(ctx context.Context, doc uri.URI, text string) error {
	err := s.conn.Notify(ctx, "textDocument/didOpen", &protocol.DidOpenTextDocumentParams{
		TextDocument: protocol.TextDocumentItem{URI: doc, LanguageID: "cpp", Version: 1, Text: text}})
	if err != nil {
		return fmt.Errorf("%s didOpen: %w", s.name, err)
	}
	select {
	case <-s.diags:
		return nil
	case <-time.After(2 * time.Minute):
		return fmt.Errorf("%s: no diagnostics for the document in 2 minutes", s.name)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// time sends one request and returns how long its answer took (ms) and how many items it held.
func (s *server) time(ctx context.Context, method string, params any) (float64, int, error) {
	var res json.RawMessage
	t0 := time.Now()
	err := s.conn.Call(ctx, method, params, &res)
	ms := float64(time.Since(t0).Microseconds()) / 1000
	if err != nil {
		return 0, 0, fmt.Errorf("%s %s: %w", s.name, method, err)
	}
	return ms, count(res), nil
}

// count is how many results an answer holds: list items, array entries, or 1.
func count(res json.RawMessage) int {
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	var arr []json.RawMessage
	switch {
	case json.Unmarshal(res, &arr) == nil:
		return len(arr)
	case json.Unmarshal(res, &list) == nil && list.Items != nil:
		return len(list.Items)
	case string(res) == "null":
		return 0
	}
	return 1
}

// close shuts the server down (shutdown, exit, then a kill after 5 s).
func (s *server) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.conn.Call(ctx, "shutdown", nil, nil)
	_ = s.conn.Notify(ctx, "exit", nil)
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
	s.conn.Close()
}

// pipes joins a child's stdout and stdin.
type pipes struct {
	io.ReadCloser
	io.WriteCloser
}

func (p pipes) Close() error {
	return errors.Join(p.WriteCloser.Close(), p.ReadCloser.Close())
}
