package report

import (
	"fmt"
	"github.com/leakscope/leakscope/internal/format"
	"math"
	"strings"
	"time"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/analysis/flame"
)

// line is one series of a chart. A line sampled only inside windows (a
// trace's metrics) is drawn in pieces, one per window, never across the
// time between two.
type line struct {
	name    string
	color   string
	points  []analysis.Point
	windows []analysis.Window
}

// segments splits the points at window boundaries: consecutive points in
// different windows (or one outside every window) are not joined.
func (l line) segments() [][]analysis.Point {
	if len(l.windows) == 0 {
		return [][]analysis.Point{l.points}
	}
	win := func(p analysis.Point) int {
		for i, w := range l.windows {
			if !p.TS.Before(w.Start) && !p.TS.After(w.End) {
				return i
			}
		}
		return -1
	}
	var out [][]analysis.Point
	last := -2
	for _, p := range l.points {
		w := win(p)
		if w != last || w < 0 {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], p)
		last = w
	}
	return out
}

var palette = []string{"#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"}

// chartSVG draws a self-contained SVG line chart of the series over time.
// unit is "bytes" or "" (plain counts). It returns "" when there is
// nothing to draw.
func chartSVG(title, unit string, lines []line) string {
	const w, h, left, right, top, bottom = 640, 220, 64, 16, 28, 36
	var t0, t1 time.Time
	ymax := 0.0
	n := 0
	for _, l := range lines {
		for _, p := range l.points {
			if t0.IsZero() || p.TS.Before(t0) {
				t0 = p.TS
			}
			if p.TS.After(t1) {
				t1 = p.TS
			}
			ymax = math.Max(ymax, p.Value)
			n++
		}
	}
	if n < 2 || !t1.After(t0) {
		return ""
	}
	if ymax <= 0 {
		ymax = 1
	}
	ymax = niceCeil(ymax)
	span := t1.Sub(t0).Seconds()
	x := func(t time.Time) float64 { return left + (w-left-right)*t.Sub(t0).Seconds()/span }
	y := func(v float64) float64 { return top + (h-top-bottom)*(1-v/ymax) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`, w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#fff"/>`, w, h)
	fmt.Fprintf(&b, `<text x="%d" y="16" font-size="13" font-weight="bold">%s</text>`, left, flame.XMLText(title))
	for i := 0; i <= 4; i++ {
		v := ymax * float64(i) / 4
		yy := y(v)
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>`, left, w-right, yy, yy)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`, left-4, yy+4, flame.XMLText(axisLabel(v, unit)))
	}
	for i := 0; i <= 4; i++ {
		tt := t0.Add(time.Duration(float64(t1.Sub(t0)) * float64(i) / 4))
		anchor := "middle"
		switch i {
		case 0:
			anchor = "start"
		case 4:
			anchor = "end"
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="%s">%s</text>`, x(tt), h-bottom+14, anchor, tt.UTC().Format("15:04:05"))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" fill="#666">UTC, %s</text>`, w-right, h-4, t0.UTC().Format("2006-01-02"))
	for i, l := range lines {
		if len(l.points) == 0 {
			continue
		}
		c := l.color
		if c == "" {
			c = palette[i%len(palette)]
		}
		for _, seg := range l.segments() {
			var pts []string
			for _, p := range seg {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(p.TS), y(p.Value)))
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`, c, strings.Join(pts, " "))
		}
		if len(l.points) <= 60 {
			for _, p := range l.points {
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>`, x(p.TS), y(p.Value), c)
			}
		}
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d">%s</text>`,
			left+10+i*150, h-bottom+20, c, left+24+i*150, h-bottom+29, flame.XMLText(trim(l.name, 22)))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func axisLabel(v float64, unit string) string {
	if unit == "bytes" {
		return format.Bytes(v)
	}
	if v >= 1e6 {
		return fmt.Sprintf("%.1fM", v/1e6)
	}
	if v >= 1e4 {
		return fmt.Sprintf("%.0fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func trim(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n+1:]
}

// sparks are the eight block heights of a sparkline.
var sparks = []rune("▁▂▃▄▅▆▇█")

// maxSparkline is the most characters a sparkline has; longer series are
// shown by the mean of equal slices.
const maxSparkline = 40

// sparkline draws values as Unicode blocks, from the series' minimum to
// its maximum ("▁▃▅█"); a flat series is all low blocks.
func sparkline(points []analysis.Point) string {
	vals := make([]float64, 0, min(len(points), maxSparkline))
	for i := 0; i < min(len(points), maxSparkline); i++ {
		a, b := i*len(points)/min(len(points), maxSparkline), (i+1)*len(points)/min(len(points), maxSparkline)
		sum := 0.0
		for _, p := range points[a:b] {
			sum += p.Value
		}
		vals = append(vals, sum/float64(b-a))
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	out := make([]rune, len(vals))
	for i, v := range vals {
		k := 0
		if hi > lo {
			k = int(math.Round((v - lo) / (hi - lo) * float64(len(sparks)-1)))
		}
		out[i] = sparks[k]
	}
	return string(out)
}

// chartAlt is the text form of a chart: one row per series with its
// sparkline, first and last values, range and time span.
func chartAlt(unit string, lines []line) block {
	var rows [][]string
	for _, l := range lines {
		if len(l.points) == 0 {
			continue
		}
		lo, hi := l.points[0].Value, l.points[0].Value
		for _, p := range l.points {
			lo, hi = math.Min(lo, p.Value), math.Max(hi, p.Value)
		}
		first, last := l.points[0], l.points[len(l.points)-1]
		rows = append(rows, []string{lit(l.name), code(sparkline(l.points)), valueText(first.Value, unit), valueText(last.Value, unit),
			valueText(lo, unit) + " – " + valueText(hi, unit), fmt.Sprint(len(l.points)),
			first.TS.UTC().Format("15:04:05") + " → " + last.TS.UTC().Format("15:04:05")})
	}
	if len(rows) == 0 {
		return nil
	}
	return table{head: []string{"series", "over time", "first", "last", "range", "points", "UTC"}, rows: rows}
}

// valueText writes a value of a chart in its unit.
func valueText(v float64, unit string) string {
	if unit == "bytes" {
		return format.Bytes(v)
	}
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
