package bench

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Axis is one swept simulator parameter and its values.
type Axis struct {
	Name   string    `json:"name"`
	Values []float64 `json:"values"`
}

// ParseGrid parses a sweep spec: comma-separated name=v1/v2/… pairs, e.g.
// "local=0.1/0.3/0.5,far=0.2/0.6". known checks each name. Values must lie in [0, 1].
func ParseGrid(spec string, known func(string) bool) ([]Axis, error) {
	var axes []Axis
	seen := map[string]bool{}
	for _, kv := range strings.Split(spec, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, vs, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || vs == "" {
			return nil, fmt.Errorf("sweep %q: want name=v1/v2/…", kv)
		}
		if !known(k) {
			return nil, fmt.Errorf("sweep: unknown simulator parameter %q", k)
		}
		if seen[k] {
			return nil, fmt.Errorf("sweep: parameter %s given twice", k)
		}
		seen[k] = true
		ax := Axis{Name: k}
		for _, v := range strings.Split(vs, "/") {
			x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || math.IsNaN(x) || x < 0 || x > 1 {
				return nil, fmt.Errorf("sweep: %s value %q is not a number in [0, 1]", k, v)
			}
			ax.Values = append(ax.Values, x)
		}
		axes = append(axes, ax)
	}
	if len(axes) == 0 {
		return nil, fmt.Errorf("sweep %q names no parameter", spec)
	}
	return axes, nil
}

// Points returns the grid's cells in order (the last axis varies fastest), each as the swept
// parameters' values by name.
func Points(axes []Axis) []map[string]float64 {
	out := []map[string]float64{{}}
	for _, ax := range axes {
		var next []map[string]float64
		for _, p := range out {
			for _, v := range ax.Values {
				q := map[string]float64{ax.Name: v}
				for k, x := range p {
					q[k] = x
				}
				next = append(next, q)
			}
		}
		out = next
	}
	return out
}

// Cell is one point of a sweep: the simulator's parameters (all of them, swept or not) and
// every policy's metrics on the same tasks, with TokPol's paired ratios.
type Cell struct {
	Sim           map[string]float64      `json:"sim"`
	ErroringTasks int                     `json:"erroring_tasks"`
	Policies      map[string]PolicyReport `json:"policies"`
	Paired        []Paired                `json:"paired,omitempty"`
}

// Sweep is what `hydra bench --sweep` reports.
type Sweep struct {
	Axes []Axis `json:"axes"`
	// Simulator states the simulator's assumptions at the grid's first cell (the swept
	// parameters vary; each cell's Sim has them all).
	Simulator map[string]any `json:"simulator"`
	Config    Config         `json:"config"`
	Cells     []Cell         `json:"cells"`
}

// NewCell summarises one cell's report.
func NewCell(params map[string]float64, r *Report) Cell {
	return Cell{Sim: params, ErroringTasks: len(r.ErroringTasks), Policies: r.Policies, Paired: r.Paired}
}

// Correct applies Holm's correction (see Holm) to every paired interval of the sweep as one
// family: the sweep's table is read as a whole, so its "wins" hold together at 95%.
func (s *Sweep) Correct() {
	var ps []Paired
	for _, c := range s.Cells {
		ps = append(ps, c.Paired...)
	}
	HolmPaired(ps)
	k := 0
	for _, c := range s.Cells {
		k += copy(c.Paired, ps[k:k+len(c.Paired)])
	}
}

// verdict reads a paired interval of TokPol against another policy: "wins" when the whole
// interval lies below 1 (TokPol uses less), "loses" when it lies above, else "ties".
func verdict(iv Interval) string {
	switch {
	case iv.Tasks == 0:
		return "-"
	case iv.Hi < 1:
		return "wins"
	case iv.Lo > 1:
		return "loses"
	}
	return "ties"
}

// WriteMarkdown writes the sweep as a Markdown table: a row per cell with TokPol's paired
// token and latency ratios against each baseline, its verdict, and TokPol's static correctness.
func (s *Sweep) WriteMarkdown(w io.Writer) error {
	b := &strings.Builder{}
	var names []string
	for _, ax := range s.Axes {
		names = append(names, ax.Name)
	}
	cols := append([]string{}, names...)
	cols = append(cols, "erroring")
	var against []string
	if len(s.Cells) > 0 {
		for _, p := range s.Cells[0].Paired {
			against = append(against, p.B)
			cols = append(cols, "tokens TokPol/"+p.B, "latency TokPol/"+p.B)
		}
	}
	cols = append(cols, "TokPol static", "TokPol repair overhead")
	fmt.Fprintf(b, "| %s |\n|%s\n", strings.Join(cols, " | "), strings.Repeat("---|", len(cols)))
	for _, c := range s.Cells {
		var row []string
		for _, n := range names {
			row = append(row, strconv.FormatFloat(c.Sim[n], 'g', -1, 64))
		}
		row = append(row, strconv.Itoa(c.ErroringTasks))
		for i := range against {
			if i >= len(c.Paired) {
				row = append(row, "-", "-")
				continue
			}
			p := c.Paired[i]
			row = append(row, fmt.Sprintf("%.2f [%.2f, %.2f] %s", p.Tokens.Ratio, p.Tokens.Lo, p.Tokens.Hi, verdict(p.Tokens)),
				fmt.Sprintf("%.2f [%.2f, %.2f] %s", p.Latency.Ratio, p.Latency.Lo, p.Latency.Hi, verdict(p.Latency)))
		}
		tp := c.Policies["tokpol"].Erroring
		overhead := "-" // needs the unconstrained run
		if _, ok := c.Policies["unconstrained"]; ok {
			overhead = fmt.Sprintf("%.0f", tp.RepairOverheadMean)
		}
		row = append(row, fmt.Sprintf("%.1f%%", 100*tp.StaticCorrect), overhead)
		fmt.Fprintf(b, "| %s |\n", strings.Join(row, " | "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteHeatmap draws the sweep as heatmaps of TokPol's paired ratios (tokens on the top row,
// latency below; one column per baseline) over the first two swept parameters (one row pair
// for each combination of the others), to an .svg or .png file.
func (s *Sweep) WriteHeatmap(path string) error {
	if len(s.Cells) == 0 || len(s.Cells[0].Paired) == 0 {
		return fmt.Errorf("heatmap %s: no paired ratios to draw (run tokpol with local-first, fixed or posthoc)", path)
	}
	x := s.Axes[0]
	y := Axis{Name: "", Values: []float64{0}}
	if len(s.Axes) > 1 {
		y = s.Axes[1]
	}
	rest := Points(s.Axes[min(2, len(s.Axes)):])
	var rows [][]*plot.Plot
	for _, fixed := range rest {
		for _, what := range []string{"tokens", "latency"} {
			var row []*plot.Plot
			for i, p := range s.Cells[0].Paired {
				pl, err := s.heatPanel(x, y, fixed, i, what, p.B)
				if err != nil {
					return fmt.Errorf("heatmap %s: %w", path, err)
				}
				row = append(row, pl)
			}
			rows = append(rows, row)
		}
	}
	w := vg.Length(len(rows[0])) * 3.6 * vg.Inch
	h := vg.Length(len(rows)) * 3 * vg.Inch
	return writeTiles(path, rows, w, h)
}

// grid is the plotter.GridXYZ of one heatmap panel: cells by index, z = log2 of the ratio.
type grid struct {
	nx, ny int
	z      [][]float64 // z[c][r]
}

func (g grid) Dims() (int, int)   { return g.nx, g.ny }
func (g grid) Z(c, r int) float64 { return g.z[c][r] }
func (g grid) X(c int) float64    { return float64(c) }
func (g grid) Y(r int) float64    { return float64(r) }
func (s *Sweep) cellAt(p map[string]float64) *Cell {
	for i := range s.Cells {
		ok := true
		for k, v := range p {
			if s.Cells[i].Sim[k] != v {
				ok = false
			}
		}
		if ok {
			return &s.Cells[i]
		}
	}
	return nil
}

// heatPanel is one heatmap: TokPol/against (pair index k) in tokens or latency over x and y,
// the other swept parameters at fixed.
func (s *Sweep) heatPanel(x, y Axis, fixed map[string]float64, k int, what, against string) (*plot.Plot, error) {
	g := grid{nx: len(x.Values), ny: len(y.Values)}
	labels := plotter.XYLabels{}
	for c, xv := range x.Values {
		col := make([]float64, len(y.Values))
		for r, yv := range y.Values {
			at := map[string]float64{x.Name: xv}
			if y.Name != "" {
				at[y.Name] = yv
			}
			for n, v := range fixed {
				at[n] = v
			}
			col[r] = math.NaN()
			cell := s.cellAt(at)
			if cell == nil || k >= len(cell.Paired) {
				continue
			}
			iv := cell.Paired[k].Tokens
			if what == "latency" {
				iv = cell.Paired[k].Latency
			}
			if iv.Tasks == 0 {
				continue
			}
			col[r] = math.Log2(iv.Ratio)
			labels.XYs = append(labels.XYs, plotter.XY{X: float64(c), Y: float64(r)})
			labels.Labels = append(labels.Labels, fmt.Sprintf("%.2f\n[%.2f, %.2f]", iv.Ratio, iv.Lo, iv.Hi))
		}
		g.z = append(g.z, col)
	}
	pal := moreland.SmoothBlueRed()
	pal.SetMin(-1)
	pal.SetMax(1)
	colors := pal.Palette(255)
	hm := plotter.NewHeatMap(g, colors)
	hm.Min, hm.Max = -1, 1 // ratios 0.5 (blue, TokPol uses half) to 2 (red), beyond: the ends
	hm.Underflow, hm.Overflow = colors.Colors()[0], colors.Colors()[254]
	p := plot.New()
	var fix []string
	for n, v := range fixed {
		fix = append(fix, fmt.Sprintf("%s=%g", n, v))
	}
	p.Title.Text = fmt.Sprintf("%s TokPol/%s %s", what, against, strings.Join(fix, " "))
	p.Add(hm)
	lb, err := plotter.NewLabels(labels)
	if err != nil {
		return nil, err
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].XAlign, lb.TextStyle[i].YAlign = -0.5, -0.5
	}
	p.Add(lb)
	p.X.Label.Text, p.Y.Label.Text = x.Name, y.Name
	p.X.Tick.Marker = indexTicks(x.Values)
	p.Y.Tick.Marker = indexTicks(y.Values)
	return p, nil
}

// indexTicks labels cell indexes with the axis values.
func indexTicks(vs []float64) plot.ConstantTicks {
	var t plot.ConstantTicks
	for i, v := range vs {
		t = append(t, plot.Tick{Value: float64(i), Label: strconv.FormatFloat(v, 'g', -1, 64)})
	}
	return t
}
