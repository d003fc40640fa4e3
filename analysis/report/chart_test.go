package report

import (
	"strings"
	"testing"
	"time"

	"github.com/leakscope/leakscope/analysis"
)

// TestChartGaps: a series sampled in two trace windows is drawn as two
// pieces, not joined across the time between them; without windows it is
// one line.
func TestChartGaps(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	var pts []analysis.Point
	for _, s := range []float64{0, 0.5, 1, 1.5, 2, 15, 15.5, 16, 16.5, 17} {
		pts = append(pts, analysis.Point{TS: at(s), Value: 1e6 + s*1e4})
	}
	windows := []analysis.Window{{Start: at(0), End: at(2)}, {Start: at(15), End: at(17)}}
	got := line{points: pts, windows: windows}.segments()
	if len(got) != 2 || len(got[0]) != 5 || len(got[1]) != 5 {
		t.Fatalf("segments %v", got)
	}
	svg := chartSVG("heap", "bytes", []line{{name: "live heap", points: pts, windows: windows}})
	if n := strings.Count(svg, "<polyline"); n != 2 {
		t.Errorf("%d polylines for two windows", n)
	}
	if n := strings.Count(chartSVG("heap", "bytes", []line{{name: "heap", points: pts}}), "<polyline"); n != 1 {
		t.Errorf("%d polylines without windows", n)
	}
	// A point outside every window stands alone.
	lone := line{points: append(pts[:2:2], analysis.Point{TS: at(8), Value: 1}), windows: windows}.segments()
	if len(lone) != 2 || len(lone[1]) != 1 {
		t.Errorf("a point between windows is joined: %v", lone)
	}
	if s := sparkline(pts); len([]rune(s)) != len(pts) || !strings.HasPrefix(s, "▁") || !strings.HasSuffix(s, "█") {
		t.Errorf("sparkline %q", s)
	}
	if s := sparkline(make([]analysis.Point, 100)); len([]rune(s)) != maxSparkline || strings.Trim(s, "▁") != "" {
		t.Errorf("flat long sparkline %q", s)
	}
}
