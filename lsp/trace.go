package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hydra-lsp/hydra/engine"
	"github.com/hydra-lsp/hydra/engine/tracesvg"
)

// CommandShowTrace opens the picture of a generation's search (its summary's showTrace
// command carries the path): the server asks the client to show the SVG file with
// window/showDocument (external), and answers the path, so that a client which cannot show
// documents can open it itself.
const CommandShowTrace = "hydra.showTrace"

// maxTraces is how many trace pictures the trace directory keeps (the newest).
const maxTraces = 50

// traceDir is where the pictures of searches go: the user's cache directory's hydra/traces.
func traceDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("trace directory: %w", err)
	}
	return filepath.Join(dir, "hydra", "traces"), nil
}

// saveTrace draws the search of a generation of uri to an SVG file in the trace directory and
// returns its path; older pictures beyond maxTraces are removed.
func saveTrace(uri string, res *engine.Result) (string, error) {
	if res == nil || res.Trace == nil || len(res.Trace.Nodes) == 0 {
		return "", errors.New("trace picture: no search tree")
	}
	dir, err := traceDir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("trace picture: %w", err)
	}
	base := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' || r == ' ' {
			return '_'
		}
		return r
	}, filepath.Base(uri))
	f, err := os.CreateTemp(dir, time.Now().Format("20060102-150405")+"-"+base+"-*.svg")
	if err != nil {
		return "", fmt.Errorf("trace picture: %w", err)
	}
	title := fmt.Sprintf("%s: %s, %d attempts, %d output tokens", filepath.Base(uri), res.Reason, res.Stats.Attempts, res.Stats.OutputTokens)
	werr := tracesvg.Write(f, res.Trace, title)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("trace picture: %w", werr)
	}
	pruneTraces(dir)
	return f.Name(), nil
}

// pruneTraces keeps the newest maxTraces pictures in dir.
func pruneTraces(dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.svg"))
	if len(files) <= maxTraces {
		return
	}
	sort.Strings(files) // names start with the time
	for _, f := range files[:len(files)-maxTraces] {
		os.Remove(f)
	}
}

// showTraceArgs is hydra.showTrace's argument.
type showTraceArgs struct {
	Path string `json:"path"`
}

// showDocumentParams are window/showDocument's parameters (LSP 3.16).
type showDocumentParams struct {
	URI      string `json:"uri"`
	External bool   `json:"external,omitempty"`
}

// showTrace runs hydra.showTrace: only pictures in the trace directory are shown.
func (s *Server) showTrace(ctx context.Context, args []json.RawMessage) (any, error) {
	if len(args) != 1 {
		return nil, invalidParams(CommandShowTrace, fmt.Errorf("want one argument {path}, got %d", len(args)))
	}
	var a showTraceArgs
	if err := json.Unmarshal(args[0], &a); err != nil {
		return nil, invalidParams(CommandShowTrace, err)
	}
	dir, err := traceDir()
	if err != nil {
		return nil, err
	}
	if filepath.Dir(filepath.Clean(a.Path)) != dir || filepath.Ext(a.Path) != ".svg" {
		return nil, invalidParams(CommandShowTrace, fmt.Errorf("%q is not a trace picture in %s", a.Path, dir))
	}
	if _, err := os.Stat(a.Path); err != nil {
		return nil, invalidParams(CommandShowTrace, err)
	}
	var res struct {
		Success bool `json:"success"`
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.conn.Call(cctx, "window/showDocument", showDocumentParams{URI: "file://" + a.Path, External: true}, &res); err != nil {
		s.logf("window/showDocument %s: %v", a.Path, err)
	}
	return map[string]any{"path": a.Path, "shown": res.Success}, nil
}
