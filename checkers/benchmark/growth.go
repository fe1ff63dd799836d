package benchmark

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/agreement"
	"github.com/hydra-lsp/hydra/checkers/chunk"
	"github.com/hydra-lsp/hydra/internal/stats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Growth is how the per-line cost grows with the prefix: Hydra's per-chunk latency against the
// line the chunk ends on, and clangd's didChange latency against the document's length.
type Growth struct {
	Program     string    `json:"program"`
	Lines       int       `json:"lines"`
	HydraLines  []int     `json:"hydra_lines"`
	HydraMS     []float64 `json:"hydra_ms"`
	ClangdLines []int     `json:"clangd_lines,omitempty"`
	ClangdMS    []float64 `json:"clangd_ms,omitempty"`
}

// Slope is the least-squares slope of a latency against prefix length, in ms per 100 lines.
type Slope struct {
	Hydra  float64 `json:"hydra"`
	Clangd float64 `json:"clangd"`
}

// MeasureGrowth streams p (a long program) through a checker session one chunk at a time and,
// when cfg.Clangd is set, grows it in clangd to clangdSamples prefixes, from 100 lines to its end.
func MeasureGrowth(ctx context.Context, cfg Config, p agreement.Program, clangdSamples int) (*Growth, error) {
	g := &Growth{Program: p.ID, Lines: strings.Count(p.Text, "\n")}
	chs, first := codeChunks(p)
	sess, err := cfg.Checker.Start(ctx, checkers.SessionOptions{Flags: p.Flags, Filename: p.Base})
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	for i, c := range chs {
		start := time.Now()
		if err := sess.Submit(c.Text, checkers.SubmitOptions{Cat: c.Cat}); err != nil {
			return nil, err
		}
		ev, err := await(ctx, sess, func(ev checkers.Event) bool {
			return (ev.Kind == checkers.KindProgress && ev.Off >= c.End()) || ev.Kind == checkers.KindError
		}, func(ev checkers.Event) {})
		if err != nil {
			return nil, fmt.Errorf("growth: chunk at %d: %w", c.Off, err)
		}
		if ev.Kind == checkers.KindError {
			return nil, fmt.Errorf("growth: the program does not check: %d: %s", ev.Line, ev.Diag)
		}
		if i >= first {
			g.HydraLines = append(g.HydraLines, strings.Count(p.Text[:c.End()], "\n"))
			g.HydraMS = append(g.HydraMS, ms(time.Since(start)))
		}
	}
	if cfg.Clangd == "" || clangdSamples <= 0 {
		return g, nil
	}
	c, err := startClangd(ctx, cfg.Clangd, p.Flags, p.Base)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	pre := 0
	if first > 0 {
		pre = chs[first-1].End()
	}
	if _, err := c.open(ctx, p.Text[:pre]); err != nil {
		return nil, err
	}
	// One change first, not measured: clangd's first update after didOpen also finishes work
	// left from the open (the first sample of a run was an outlier every time): the first sample's
	// text and one more newline, so the same preamble, yet a different text (clangd publishes
	// nothing for a change to the same text).
	version := int32(2)
	if _, err := c.change(ctx, version, p.Text[:lineEnd(p.Text, 100, chs)]+"\n"); err != nil {
		return nil, err
	}
	for k := 0; k < clangdSamples; k++ {
		want := 100 + (g.Lines-100)*k/max(1, clangdSamples-1)
		if n := len(g.ClangdLines); n > 0 && want <= g.ClangdLines[n-1] {
			continue // the same text again: clangd would publish nothing
		}
		end := lineEnd(p.Text, want, chs)
		version++
		d, err := c.change(ctx, version, p.Text[:end])
		if err != nil {
			return nil, err
		}
		g.ClangdLines = append(g.ClangdLines, strings.Count(p.Text[:end], "\n"))
		g.ClangdMS = append(g.ClangdMS, ms(d))
	}
	return g, nil
}

// lineEnd returns the end of the first chunk that reaches line n (a clean cut, as the checker
// would see it).
func lineEnd(text string, n int, chs []chunk.Chunk) int {
	for _, c := range chs {
		if strings.Count(text[:c.End()], "\n") >= n {
			return c.End()
		}
	}
	return len(text)
}

// Slopes fits both series (lines 100 and on).
func (g *Growth) Slopes() Slope {
	return Slope{Hydra: 100 * slope(g.HydraLines, g.HydraMS, 100), Clangd: 100 * slope(g.ClangdLines, g.ClangdMS, 100)}
}

// slope is the least-squares slope of ys over xs, for xs >= from; 0 with fewer than 2 points.
func slope(xs []int, ys []float64, from int) float64 {
	var n, sx, sy, sxx, sxy float64
	for i, x := range xs {
		if x < from {
			continue
		}
		fx := float64(x)
		n++
		sx += fx
		sy += ys[i]
		sxx += fx * fx
		sxy += fx * ys[i]
	}
	if n < 2 || n*sxx-sx*sx == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / (n*sxx - sx*sx)
}

// Plot writes the growth as a chart (PNG or SVG by the file's extension): Hydra's per-line
// latency (medians per 100 lines) and clangd's, in ms against the prefix's lines, log scale.
func (g *Growth) Plot(path string) error {
	p := plot.New()
	p.Title.Text = "Per-line cost against prefix length: " + g.Program
	p.X.Label.Text = "prefix (lines)"
	p.Y.Label.Text = "latency (ms, log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	bins := map[int][]float64{}
	for i, l := range g.HydraLines {
		bins[l/100] = append(bins[l/100], g.HydraMS[i])
	}
	var hy plotter.XYs
	for b := 0; b <= g.Lines/100; b++ {
		if v := bins[b]; len(v) > 0 {
			hy = append(hy, plotter.XY{X: float64(b*100 + 50), Y: max(stats.Median(v), 1e-3)})
		}
	}
	var cd plotter.XYs
	for i, l := range g.ClangdLines {
		cd = append(cd, plotter.XY{X: float64(l), Y: max(g.ClangdMS[i], 1e-3)})
	}
	for _, s := range []struct {
		name string
		xys  plotter.XYs
	}{{"Hydra checker (median per 100 lines)", hy}, {"clangd-19 --sync didChange", cd}} {
		if len(s.xys) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(s.xys)
		if err != nil {
			return err
		}
		if s.name[0] == 'c' {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(l, pts)
		p.Legend.Add(s.name, l, pts)
	}
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}
