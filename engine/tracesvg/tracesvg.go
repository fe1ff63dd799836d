// Package tracesvg draws a search (engine.Trace) as an SVG picture, after the paper's Fig. 3:
// on top, the search tree over the program's lines (one column per rollout: where it started,
// the lines it got accepted, its checkpoints, its error with the compiler's message, and the
// rollback that followed); below, a timeline of the model's streaming against the checker's
// progress. `hydra trace` and `hydra generate --trace-svg` use it; the language server writes
// one per generation for the editors' hydra.showTrace command.
package tracesvg

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	svg "github.com/ajstarks/svgo"

	"github.com/hydra-lsp/hydra/engine"
)

// File is what `hydra trace` reads: `hydra generate --json` output, a benchmark's
// --trace-dir file (an engine.Result), or a bare engine.Trace.
type File struct {
	Text  string        `json:"text"`
	Trace *engine.Trace `json:"trace"`
}

// Parse reads a trace file in any of the forms File describes.
func Parse(data []byte) (*engine.Trace, error) {
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	if f.Trace != nil && len(f.Trace.Nodes) > 0 {
		return f.Trace, nil
	}
	var tr engine.Trace
	if err := json.Unmarshal(data, &tr); err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	if len(tr.Nodes) == 0 {
		return nil, fmt.Errorf("trace: no search tree in the file (want hydra generate --json output, a bench --trace-dir file or {\"nodes\", \"rollouts\"})")
	}
	return &tr, nil
}

// Layout sizes (pixels).
const (
	width      = 1000
	margin     = 60
	colWidth   = 150
	lineHeight = 14
	timelineH  = 220
	msgChars   = 90
)

// palette colours the rollouts in turn.
var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"}

func colour(i int) string { return palette[i%len(palette)] }

// Write draws tr as SVG to w; title heads the picture.
func Write(w io.Writer, tr *engine.Trace, title string) error {
	if tr == nil || len(tr.Nodes) == 0 {
		return fmt.Errorf("trace: empty search tree")
	}
	nodes := map[int]engine.TraceNode{}
	byRollout := map[int][]engine.TraceNode{}
	minLine, maxLine := math.MaxInt, 0
	maxMS, maxOff, minOff := 0.0, 0, math.MaxInt
	for _, n := range tr.Nodes {
		nodes[n.ID] = n
		byRollout[n.Rollout] = append(byRollout[n.Rollout], n)
		if n.Line > 0 {
			minLine, maxLine = min(minLine, n.Line), max(maxLine, n.Line)
		}
		maxMS = math.Max(maxMS, n.AtMS)
		maxOff, minOff = max(maxOff, n.Off), min(minOff, n.Off)
	}
	rollouts := append([]engine.TraceRollout(nil), tr.Rollouts...)
	sort.Slice(rollouts, func(i, j int) bool { return rollouts[i].ID < rollouts[j].ID })
	for _, r := range rollouts {
		for _, p := range r.Stream {
			maxMS = math.Max(maxMS, p.AtMS)
			maxOff = max(maxOff, p.Off)
		}
	}
	if minLine > maxLine {
		minLine, maxLine = 1, 1
	}
	cols := max(len(rollouts), 1)
	treeW := margin + cols*colWidth + 12 + msgChars*6
	W := max(width, treeW)
	treeTop := 100
	treeH := (maxLine-minLine+1)*lineHeight + 20
	tlTop := treeTop + treeH + 70
	H := tlTop + timelineH + 60

	c := svg.New(w)
	c.Start(W, H, `font-family="sans-serif"`)
	c.Rect(0, 0, W, H, "fill:white")
	c.Text(margin, 24, title, "font-size:16px;font-weight:bold")
	c.Text(margin, 44, fmt.Sprintf("search tree over program lines: %d rollouts; ● accepted line  □ checkpoint  ✕ error  ▶ rollback start  ◆ done", len(rollouts)), "font-size:12px;fill:#444")

	// Line axis.
	y := func(line int) int { return treeTop + (line-minLine)*lineHeight + lineHeight/2 }
	step := max(1, (maxLine-minLine+1)/25)
	for l := minLine; l <= maxLine; l += step {
		c.Text(margin-8, y(l)+4, fmt.Sprint(l), "font-size:10px;text-anchor:end;fill:#666")
		c.Line(margin, y(l), margin+cols*colWidth, y(l), "stroke:#eee")
	}
	c.Text(margin-40, treeTop-8, "line", "font-size:11px;fill:#666")
	x := func(col int) int { return margin + col*colWidth + colWidth/2 }
	// Messages go in a column right of the tree, each at its error's line or the next free row.
	msgX := margin + cols*colWidth + 12
	used := map[int]bool{}
	message := func(at int) int {
		at += 4
		for used[at/12] {
			at += 12
		}
		used[at/12] = true
		return at
	}
	// The rollouts: from the start node's line through their nodes.
	for i, r := range rollouts {
		col := colour(i)
		start := nodes[r.Start]
		ns := byRollout[r.ID]
		c.Text(x(i), treeTop-30, fmt.Sprintf("attempt %d", i+1), "font-size:12px;text-anchor:middle;font-weight:bold;fill:"+col)
		c.Text(x(i), treeTop-16, fmt.Sprintf("%d tok, %s", r.Tokens, r.Outcome), "font-size:10px;text-anchor:middle;fill:#444")
		last := start.Line
		for _, n := range ns {
			last = max(last, n.Line)
		}
		if start.Line > 0 {
			c.Line(x(i), y(start.Line), x(i), y(last), "stroke-width:3;stroke:"+col+";stroke-opacity:0.5")
			c.Polygon([]int{x(i) - 7, x(i) + 1, x(i) - 7}, []int{y(start.Line) - 5, y(start.Line), y(start.Line) + 5}, "fill:"+col)
		}
		for _, n := range ns {
			switch n.Kind {
			case "error":
				e := 5
				c.Line(x(i)-e, y(n.Line)-e, x(i)+e, y(n.Line)+e, "stroke:#d62728;stroke-width:3")
				c.Line(x(i)-e, y(n.Line)+e, x(i)+e, y(n.Line)-e, "stroke:#d62728;stroke-width:3")
				my := message(y(n.Line))
				c.Line(x(i)+6, y(n.Line), msgX-4, my-3, "stroke:#d62728;stroke-opacity:0.3;stroke-dasharray:1,2")
				c.Text(msgX, my, clip(fmt.Sprintf("%d: line %d: %s", i+1, n.Line, n.Diag), msgChars), "font-size:10px;fill:#d62728")
			case "done":
				c.Polygon([]int{x(i), x(i) + 6, x(i), x(i) - 6}, []int{y(n.Line) - 6, y(n.Line), y(n.Line) + 6, y(n.Line)}, "fill:#2ca02c")
			case "fail":
				c.Text(msgX, message(y(n.Line)), clip(fmt.Sprintf("%d: failed: %s", i+1, n.Cat), msgChars), "font-size:10px;fill:#7f7f7f")
			default:
				style := "fill:" + col
				if n.Pruned {
					style = "fill:#bbb"
				}
				c.Circle(x(i), y(n.Line), 2, style)
			}
			if n.Checkpoint != 0 {
				c.Rect(x(i)-5, y(n.Line)-5, 10, 10, "fill:none;stroke:#333;stroke-width:1")
			}
		}
	}
	// Rollbacks: from the error of the rollout that led to each spawn to the new start point.
	for i, r := range rollouts {
		if i == 0 {
			continue
		}
		start := nodes[r.Start]
		var from *engine.TraceNode
		for j := i - 1; j >= 0 && from == nil; j-- {
			for _, n := range byRollout[rollouts[j].ID] {
				if n.Kind == "error" || n.Kind == "fail" {
					nn := n
					from = &nn
					break
				}
			}
			if from != nil {
				colJ := j
				c.Line(x(colJ)+4, y(from.Line), x(i)-8, y(start.Line), "stroke:#555;stroke-dasharray:4,3;stroke-width:1.2")
			}
		}
		if r.Feedback != "" {
			c.Text(x(i)-10, y(start.Line)+3, "from line "+fmt.Sprint(start.Line), "font-size:9px;text-anchor:end;fill:#555")
		}
	}

	// Timeline: bytes of checked text over time, the model's stream (lines) against the
	// checker's accepted progress (squares) and errors (crosses).
	c.Text(margin, tlTop-30, "timeline: model streaming (lines) vs checker progress (squares) and errors (✕)", "font-size:13px;font-weight:bold")
	plotW := W - 2*margin
	if maxMS <= 0 {
		maxMS = 1
	}
	if minOff >= maxOff {
		minOff = max(0, maxOff-1)
	}
	tx := func(ms float64) int { return margin + int(ms/maxMS*float64(plotW)) }
	ty := func(off int) int {
		return tlTop + timelineH - int(float64(off-minOff)/float64(max(maxOff-minOff, 1))*float64(timelineH))
	}
	c.Rect(margin, tlTop, plotW, timelineH, "fill:none;stroke:#999")
	for k := 0; k <= 4; k++ {
		ms := maxMS * float64(k) / 4
		c.Text(tx(ms), tlTop+timelineH+14, fmt.Sprintf("%.0f ms", ms), "font-size:10px;text-anchor:middle;fill:#666")
	}
	c.Text(margin-8, tlTop+8, fmt.Sprint(maxOff), "font-size:10px;text-anchor:end;fill:#666")
	c.Text(margin-8, tlTop+timelineH, fmt.Sprint(minOff), "font-size:10px;text-anchor:end;fill:#666")
	c.Text(margin-40, tlTop-8, "byte", "font-size:11px;fill:#666")
	for i, r := range rollouts {
		col := colour(i)
		start := nodes[r.Start]
		xs, ys := []int{tx(r.StartMS)}, []int{ty(start.Off)}
		for _, p := range r.Stream {
			xs, ys = append(xs, tx(p.AtMS)), append(ys, ty(p.Off))
		}
		if len(xs) > 1 {
			c.Polyline(xs, ys, "fill:none;stroke-width:1.5;stroke:"+col)
		}
		for _, n := range byRollout[r.ID] {
			switch n.Kind {
			case "progress", "done":
				c.Rect(tx(n.AtMS)-2, ty(n.Off)-2, 4, 4, "fill:"+col+";fill-opacity:0.6")
			case "error":
				c.Line(tx(n.AtMS)-4, ty(n.Off)-4, tx(n.AtMS)+4, ty(n.Off)+4, "stroke:#d62728;stroke-width:2")
				c.Line(tx(n.AtMS)-4, ty(n.Off)+4, tx(n.AtMS)+4, ty(n.Off)-4, "stroke:#d62728;stroke-width:2")
			}
		}
	}
	c.End()
	return nil
}

// clip shortens s to n runes with an ellipsis.
func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
