package tsbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf16"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/uri"

	"github.com/hydra-lsp/hydra/checkers/chunk"
	"github.com/hydra-lsp/hydra/checkers/lang"
	"github.com/hydra-lsp/hydra/internal/childproc"
)

// This file holds the three baselines. Each checks the prefixes of a file that end at the units
// at (the last one the whole file) in the baselines' tree, where file's tsconfig.json beside it
// holds Hydra's default options, and returns the time of each and its verdict on the whole file.

// tscErrorLine is a line of `tsc --pretty false`'s output that reports an error in a file.
var tscErrorLine = regexp.MustCompile(`^(.+?)\((\d+),(\d+)\): error TS(\d+): `)

// measureTsc runs `tsc -p tsconfig.json` in file's directory on each prefix, written to file.
func measureTsc(ctx context.Context, exe, file, text string, units []chunk.Chunk, at []int) ([]float64, Verdict, error) {
	dir := filepath.Dir(file)
	var lat []float64
	var v Verdict
	for k, i := range at {
		if err := os.WriteFile(file, []byte(text[:units[i].End()]), 0o644); err != nil {
			return nil, v, err
		}
		cmd := exec.CommandContext(ctx, exe, "-p", "tsconfig.json", "--pretty", "false")
		cmd.Dir = dir
		start := time.Now()
		out, err := cmd.Output()
		d := ms(time.Since(start))
		// A prefix may well not check (an open function): tsc then exits 1 or 2.
		if _, exit := err.(*exec.ExitError); err != nil && !exit {
			return nil, v, fmt.Errorf("tsc: %w", err)
		}
		lat = append(lat, d)
		if k == len(at)-1 {
			v = tscVerdict(string(out), dir, file)
		}
	}
	return lat, v, nil
}

// tscVerdict reads tsc's verdict on file from its output (paths relative to dir): its error on
// the lowest line, if any.
func tscVerdict(out, dir, file string) Verdict {
	v := Verdict{OK: true}
	for _, l := range strings.Split(out, "\n") {
		m := tscErrorLine.FindStringSubmatch(l)
		if m == nil || filepath.Join(dir, m[1]) != file {
			continue
		}
		line, _ := strconv.Atoi(m[2])
		code, _ := strconv.Atoi(m[4])
		v.see(line, code)
	}
	return v
}

// see records an error at line: the verdict keeps the lowest.
func (v *Verdict) see(line, code int) {
	if v.OK || line < v.Line {
		v.OK, v.Line, v.Code = false, line, code
	}
}

// proc is a child process that speaks JSON-RPC with LSP's framing on its stdio (TypeScript 7's
// language server, and its API with --async).
type proc struct {
	cmd  *exec.Cmd
	conn jsonrpc2.Conn
}

// childIO is a child's stdout and stdin as the ReadWriteCloser a jsonrpc2 stream wants. Close
// closes stdin (the child's stdout is closed when the child is waited for).
type childIO struct {
	io.Reader
	stdin io.WriteCloser
}

func (c childIO) Write(b []byte) (int, error) { return c.stdin.Write(b) }
func (c childIO) Close() error                { return c.stdin.Close() }

// startProc starts exe with args in dir; handler answers the child's requests and notifications.
// The child is in its own process group, killed with it by close, and dies with this process's
// thread that started it (Pdeathsig).
func startProc(exe string, args []string, dir string, handler jsonrpc2.Handler) (*proc, error) {
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	stdin, stdout, err := childproc.StartPiped(cmd)
	if err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, conn: jsonrpc2.NewConn(jsonrpc2.NewStream(childIO{stdout, stdin}))}
	p.conn.Go(context.Background(), handler)
	return p, nil
}

// call sends a request and waits (at most two minutes) for its result, decoded into out.
func (p *proc) call(ctx context.Context, method string, params, out any) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if _, err := p.conn.Call(ctx, method, params, out); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// notify sends a notification.
func (p *proc) notify(ctx context.Context, method string, params any) error {
	if err := p.conn.Notify(ctx, method, params); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// close ends the child: its stdin closes, then its process group is killed.
func (p *proc) close() {
	p.conn.Close()
	if p.cmd.Process != nil {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	_ = p.cmd.Wait()
}

// lspHandler answers the language server's requests: workspace/configuration with no settings
// (the server's defaults), anything else with null; notifications are ignored.
func lspHandler(_ context.Context, req *jsonrpc2.Request) (any, error) {
	if req.Method() == "workspace/configuration" {
		var p struct {
			Items []json.RawMessage `json:"items"`
		}
		_ = json.Unmarshal(req.Params(), &p)
		return make([]any, len(p.Items)), nil
	}
	return nil, nil
}

// lspPosition is an LSP position (UTF-16 code units).
type lspPosition struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// endPosition is the LSP position of the end of text.
func endPosition(text string) lspPosition {
	last := strings.LastIndexByte(text, '\n')
	return lspPosition{Line: strings.Count(text, "\n"), Character: len(utf16.Encode([]rune(text[last+1:])))}
}

// measureLSP opens the file's first unit in TypeScript 7's language server, then appends the
// units up to each sampled one with an incremental didChange and pulls the diagnostics.
func measureLSP(ctx context.Context, file, text string, units []chunk.Chunk, at []int) (lat []float64, open float64, v Verdict, err error) {
	exe, args, err := lang.TypeScript.LanguageServer()
	if err != nil {
		return nil, 0, v, err
	}
	p, err := startProc(exe, args, filepath.Dir(file), lspHandler)
	if err != nil {
		return nil, 0, v, err
	}
	defer p.close()
	root, doc := string(uri.File(filepath.Dir(file))), string(uri.File(file))
	pid := os.Getpid()
	init := map[string]any{"processId": pid, "rootUri": root,
		"workspaceFolders": []map[string]string{{"uri": root, "name": "bench"}},
		"capabilities": map[string]any{"textDocument": map[string]any{
			"diagnostic":      map[string]any{"dynamicRegistration": false},
			"synchronization": map[string]any{"dynamicRegistration": false}}}}
	if err := p.call(ctx, "initialize", init, nil); err != nil {
		return nil, 0, v, err
	}
	if err := p.notify(ctx, "initialized", map[string]any{}); err != nil {
		return nil, 0, v, err
	}
	type item struct {
		Range struct {
			Start lspPosition `json:"start"`
		} `json:"range"`
		Severity int             `json:"severity"`
		Code     json.RawMessage `json:"code"`
	}
	var report struct {
		Kind  string `json:"kind"`
		Items []item `json:"items"`
	}
	pull := func() error {
		report.Items = nil
		return p.call(ctx, "textDocument/diagnostic", map[string]any{"textDocument": map[string]string{"uri": doc}}, &report)
	}
	sent := units[0].End() // the length of the text the server has
	start := time.Now()
	if err := p.notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": doc, "languageId": "typescript", "version": 1, "text": text[:units[0].End()]}}); err != nil {
		return nil, 0, v, err
	}
	if err := pull(); err != nil {
		return nil, 0, v, err
	}
	open = ms(time.Since(start))
	for k, i := range at {
		add := text[sent:units[i].End()]
		end := endPosition(text[:sent])
		start := time.Now()
		err := p.notify(ctx, "textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": doc, "version": k + 2},
			"contentChanges": []map[string]any{{"range": map[string]any{"start": end, "end": end}, "text": add}}})
		if err == nil {
			err = pull()
		}
		if err != nil {
			return nil, 0, v, err
		}
		lat = append(lat, ms(time.Since(start)))
		sent = units[i].End()
	}
	if report.Kind != "full" {
		return nil, 0, v, fmt.Errorf("textDocument/diagnostic: report of kind %q, want full", report.Kind)
	}
	v.OK = true
	for _, it := range report.Items {
		if it.Severity == 1 {
			code, _ := strconv.Atoi(strings.Trim(string(it.Code), `"`))
			v.see(it.Range.Start.Line+1, code)
		}
	}
	_ = p.call(ctx, "shutdown", nil, nil)
	_ = p.notify(ctx, "exit", nil)
	return lat, open, v, nil
}

// apiDiagnostic is a diagnostic of TypeScript 7's API (positions in UTF-16 code units).
type apiDiagnostic struct {
	Pos      int `json:"pos"`
	Code     int `json:"code"`
	Category int `json:"category"`
}

// measureAPI checks each prefix, written to file, in a new snapshot of TypeScript 7's API that
// invalidates everything the previous one had read (fileChanges invalidateAll).
func measureAPI(ctx context.Context, exe, file, text string, units []chunk.Chunk, at []int) (lat []float64, open float64, v Verdict, err error) {
	dir := filepath.Dir(file)
	p, err := startProc(exe, []string{"--api", "--async", "--cwd", dir}, dir, func(context.Context, *jsonrpc2.Request) (any, error) { return nil, nil })
	if err != nil {
		return nil, 0, v, err
	}
	defer p.close()
	if err := p.call(ctx, "initialize", nil, nil); err != nil {
		return nil, 0, v, err
	}
	cfg := filepath.Join(dir, "tsconfig.json")
	snapshot := int64(0)
	var syn, sem []apiDiagnostic
	check := func(prefix string, params map[string]any) (time.Duration, error) {
		if err := os.WriteFile(file, []byte(prefix), 0o644); err != nil {
			return 0, err
		}
		start := time.Now()
		var snap struct {
			Snapshot int64 `json:"snapshot"`
			Projects []struct {
				ID             string `json:"id"`
				ConfigFileName string `json:"configFileName"`
			} `json:"projects"`
		}
		if err := p.call(ctx, "updateSnapshot", params, &snap); err != nil {
			return 0, err
		}
		if snapshot != 0 {
			if err := p.call(ctx, "release", map[string]any{"snapshot": snapshot}, nil); err != nil {
				return 0, err
			}
		}
		snapshot = snap.Snapshot
		project := ""
		for _, pr := range snap.Projects {
			if filepath.Clean(pr.ConfigFileName) == cfg {
				project = pr.ID
			}
		}
		if project == "" {
			return 0, fmt.Errorf("updateSnapshot: project %s not loaded", cfg)
		}
		q := map[string]any{"snapshot": snap.Snapshot, "project": project, "file": file}
		syn, sem = nil, nil
		if err := p.call(ctx, "getSyntacticDiagnostics", q, &syn); err != nil {
			return 0, err
		}
		if err := p.call(ctx, "getSemanticDiagnostics", q, &sem); err != nil {
			return 0, err
		}
		return time.Since(start), nil
	}
	d, err := check(text[:units[0].End()], map[string]any{"openProjects": []string{cfg}})
	if err != nil {
		return nil, 0, v, err
	}
	open = ms(d)
	for _, i := range at {
		d, err := check(text[:units[i].End()], map[string]any{"fileChanges": map[string]any{"invalidateAll": true}})
		if err != nil {
			return nil, 0, v, err
		}
		lat = append(lat, ms(d))
	}
	// tsc reports the syntax errors of a file, or when it has none its semantic errors.
	all := sem
	if len(syn) > 0 {
		all = syn
	}
	v.OK = true
	u16 := utf16.Encode([]rune(text))
	for _, dg := range all {
		if dg.Category == 1 {
			v.see(1+countNewlines(u16[:min(dg.Pos, len(u16))]), dg.Code)
		}
	}
	return lat, open, v, nil
}

// countNewlines counts the '\n' code units in s.
func countNewlines(s []uint16) int {
	n := 0
	for _, c := range s {
		if c == '\n' {
			n++
		}
	}
	return n
}
