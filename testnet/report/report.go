package report

import (
	"encoding/csv"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"text/tabwriter"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Point is one measurement.
type Point struct{ X, Y float64 }

// Series is one line of a figure.
type Series struct {
	Name   string
	Points []Point
	// Dashed draws a reference line (a theoretical bound) rather than data.
	Dashed bool
}

// Figure is an experiment's result: series sharing axes.
type Figure struct {
	// Name names the files: Name.csv and Name.png.
	Name           string
	Title          string
	XLabel, YLabel string
	LogX, LogY     bool
	// LegendLowRight moves the legend from the top left to the right, a little
	// above the x axis, for figures whose data fill the top left.
	LegendLowRight bool
	Series         []Series
}

// WriteCSV writes the figure as a long table: series, x, y.
func (f Figure) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"series", f.XLabel, f.YLabel}); err != nil {
		return err
	}
	for _, s := range f.Series {
		for _, p := range s.Points {
			if err := cw.Write([]string{s.Name, format(p.X), format(p.Y)}); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteTable prints the figure for a terminal: one row per x, one column per
// series.
func (f Figure) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\t", f.XLabel)
	for _, s := range f.Series {
		fmt.Fprintf(tw, "%s\t", s.Name)
	}
	fmt.Fprintln(tw)
	var xs []float64
	seen := map[float64]bool{}
	for _, s := range f.Series {
		for _, p := range s.Points {
			if !seen[p.X] {
				seen[p.X] = true
				xs = append(xs, p.X)
			}
		}
	}
	for _, x := range xs {
		fmt.Fprintf(tw, "%s\t", format(x))
		for _, s := range f.Series {
			cell := "-"
			for _, p := range s.Points {
				if p.X == x {
					cell = format(p.Y)
				}
			}
			fmt.Fprintf(tw, "%s\t", cell)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// SavePNG draws the figure as a line plot.
func (f Figure) SavePNG(path string) error {
	p := plot.New()
	p.Title.Text = f.Title
	p.X.Label.Text, p.Y.Label.Text = f.XLabel, f.YLabel
	if f.LogX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{}
	}
	if f.LogY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{}
	}
	p.Legend.Top, p.Legend.Left = true, true
	if f.LegendLowRight {
		p.Legend.Top, p.Legend.Left, p.Legend.YOffs = false, false, vg.Inch
	}
	p.Add(plotter.NewGrid())
	for i, s := range f.Series {
		xys := make(plotter.XYs, len(s.Points))
		for j, pt := range s.Points {
			xys[j] = plotter.XY{X: pt.X, Y: pt.Y}
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("report: series %q: %w", s.Name, err)
		}
		line.Color = plotutil.Color(i)
		if i >= 7 { // the palette has seven colours: dash the lines that reuse one
			line.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		}
		points.Color, points.Shape = line.Color, plotutil.Shape(i)
		if s.Dashed {
			line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
			line.Color = color.Gray{Y: 90}
			p.Add(line)
			p.Legend.Add(s.Name, line)
			continue
		}
		p.Add(line, points)
		p.Legend.Add(s.Name, line, points)
	}
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}

// Save writes dir/Name.csv and dir/Name.png.
func (f Figure) Save(dir string) error {
	path := filepath.Join(dir, f.Name)
	file, err := os.Create(path + ".csv")
	if err != nil {
		return err
	}
	if err := f.WriteCSV(file); err != nil {
		file.Close()
		return err
	}
	if err := file.Close(); err != nil {
		return err
	}
	return f.SavePNG(path + ".png")
}

func format(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
