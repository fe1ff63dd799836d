package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// WritePlot draws box plots of the output tokens and the latency of each policy's runs (all
// tasks on the top row, erroring tasks on the bottom) to path, as SVG or PNG by its extension.
func WritePlot(path string, r *Report, runs []Run) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".svg" && ext != ".png" {
		return fmt.Errorf("plot %s: want a .svg or .png file name", path)
	}
	erroring := map[string]bool{}
	for _, t := range r.ErroringTasks {
		erroring[t] = true
	}
	rows := [][]*plot.Plot{}
	for _, onlyErr := range []bool{false, true} {
		var row []*plot.Plot
		for _, what := range []string{"tokens", "latency"} {
			p, err := boxPlot(r.order, runs, what, onlyErr, erroring)
			if err != nil {
				return fmt.Errorf("plot %s: %w", path, err)
			}
			row = append(row, p)
		}
		rows = append(rows, row)
	}
	w, h := vg.Length(max(len(r.order), 3))*1.1*vg.Inch*2, 8*vg.Inch
	return writeTiles(path, rows, w, h)
}

// writeTiles draws rows of plots, aligned, to path (SVG or PNG by its extension).
func writeTiles(path string, rows [][]*plot.Plot, w, h vg.Length) error {
	var canvas vg.CanvasWriterTo
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		canvas = vgsvg.New(w, h)
	case ".png":
		canvas = vgimg.PngCanvas{Canvas: vgimg.New(w, h)}
	default:
		return fmt.Errorf("plot %s: want a .svg or .png file name", path)
	}
	dc := draw.New(canvas)
	tiles := draw.Tiles{Rows: len(rows), Cols: len(rows[0]), PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	cs := plot.Align(rows, tiles, dc)
	for i := range rows {
		for j := range rows[i] {
			rows[i][j].Draw(cs[i][j])
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if _, err := canvas.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return f.Close()
}

// boxPlot is one panel: a box per policy of its runs' tokens or latency.
func boxPlot(order []string, runs []Run, what string, onlyErr bool, erroring map[string]bool) (*plot.Plot, error) {
	p := plot.New()
	scope := "all tasks"
	if onlyErr {
		scope = "tasks that hit a static error"
	}
	if what == "tokens" {
		p.Title.Text = "Output tokens, " + scope
		p.Y.Label.Text = "tokens"
	} else {
		p.Title.Text = "Latency, " + scope
		p.Y.Label.Text = "seconds"
	}
	var names []string
	for i, name := range order {
		var vals plotter.Values
		for _, r := range runs {
			if r.Policy != name || (onlyErr && !erroring[r.Task]) {
				continue
			}
			if what == "tokens" {
				vals = append(vals, float64(r.Tokens))
			} else {
				vals = append(vals, r.Latency.Seconds())
			}
		}
		names = append(names, name)
		if len(vals) == 0 {
			continue
		}
		b, err := plotter.NewBoxPlot(vg.Points(18), float64(i), vals)
		if err != nil {
			return nil, err
		}
		p.Add(b)
	}
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = 0.5
	p.X.Tick.Label.XAlign = draw.XRight
	return p, nil
}
