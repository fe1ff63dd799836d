package tracesvg_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/hydra-lsp/hydra/checkers/clang"
	"github.com/hydra-lsp/hydra/engine"
	"github.com/hydra-lsp/hydra/engine/model"
	"github.com/hydra-lsp/hydra/engine/tracesvg"
	"github.com/hydra-lsp/hydra/sim"
)

// TestDrawsARealSearch runs a real search (the simulated model, a stand-in for a model, with an
// injected fault, and the real Clang checker), draws its trace, and checks the picture: valid
// SVG with one column per attempt, the compiler's message at each error, the checkpoints, and a
// timeline with the stream of every attempt. The trace also survives `hydra generate --json`.
func TestDrawsARealSearch(t *testing.T) {
	dir, err := sim.DataDir()
	if err != nil {
		t.Fatalf("the shared data (../shared/data) is needed: %v", err)
	}
	tasks, err := sim.LoadTasks(dir)
	if err != nil {
		t.Fatal(err)
	}
	var sel []sim.Task
	for _, x := range sim.Select(tasks, 0, 5) {
		if x.Source == "humaneval-x" {
			sel = append(sel, x)
			break
		}
	}
	opts := sim.DefaultOptions()
	opts.Tasks, opts.TimeScale, opts.ErrorRate, opts.FixProb = sel, 0.05, 1, 1
	h, err := sim.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	ck, err := clang.New(clang.Options{})
	if err != nil {
		t.Fatalf("the real Clang checker is needed (make build): %v", err)
	}
	defer ck.Close()
	gen, err := model.NewClient(srv.URL + "/v1")
	if err != nil {
		t.Fatal(err)
	}
	task := sel[0]
	res, err := engine.Search(context.Background(), ck, gen, engine.Request{Prefix: task.Prompt, Filename: task.Filename(),
		Flags: task.Flags(), Model: sim.ModelName})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.Attempts < 2 {
		t.Fatalf("%s: %d attempt(s): the injected fault was not met", task.ID, res.Stats.Attempts)
	}
	// Round trip through the JSON hydra generate --json writes.
	data, err := json.Marshal(map[string]any{"text": task.Prompt + res.Text, "trace": res.Trace})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := tracesvg.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tracesvg.Write(&buf, tr, task.ID); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	dec := xml.NewDecoder(strings.NewReader(out))
	for {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("not well-formed SVG: %v", err)
		}
	}
	var errs, cps int
	for _, n := range tr.Nodes {
		if n.Kind == "error" {
			errs++
			if !strings.Contains(out, xmlEscape(n.Diag[:min(len(n.Diag), 30)])) {
				t.Errorf("the error at line %d (%q) is not in the picture", n.Line, n.Diag)
			}
		}
		if n.Checkpoint != 0 {
			cps++
		}
	}
	if errs == 0 {
		t.Error("the trace has no error node")
	}
	for i := range tr.Rollouts {
		if !strings.Contains(out, ">attempt "+itoa(i+1)+"<") {
			t.Errorf("no column for attempt %d", i+1)
		}
		if len(tr.Rollouts[i].Stream) == 0 && tr.Rollouts[i].Tokens > 0 {
			t.Errorf("attempt %d streamed %d tokens but its trace has no stream points", i+1, tr.Rollouts[i].Tokens)
		}
	}
	if got := strings.Count(out, `fill:none;stroke:#333`); got != cps {
		t.Errorf("%d checkpoint marks for %d checkpointed nodes", got, cps)
	}
	if !strings.Contains(out, "timeline: model streaming") || strings.Count(out, "<polyline") < len(tr.Rollouts)-1 {
		t.Error("no timeline of the attempts' streams")
	}
	t.Logf("%s: %d attempts, %d errors, %d checkpoints, %d bytes of SVG", task.ID, len(tr.Rollouts), errs, cps, len(out))
}

func xmlEscape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestParseRejectsFilesWithoutATree(t *testing.T) {
	for _, in := range []string{`{}`, `{"text": "int x;"}`, `not json`, `{"nodes": []}`} {
		if _, err := tracesvg.Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%q) accepted it", in)
		}
	}
}
