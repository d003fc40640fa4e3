package analysis_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/samples"
)

// quoteBytes is what map-cache-grows caches per call: one rendered
// quote (strings.Builder.Grow(2048)).
const quoteBytes = 2048

// TestHeapOnsetNotSampled records a map cache that starts growing 8 s
// into the capture (the sample says when its first quote was cached),
// with heap profiles at the runtime's default sampling rate: the site
// is left out of the profiles for a while after it begins, which is
// "not sampled", not "absent", so the onset's bounds must contain the
// true start.
func TestHeapOnsetNotSampled(t *testing.T) {
	liveTest(t, "runs a sample for 24 s to a minute")
	root, err := samples.Root()
	if err != nil {
		t.Fatal(err)
	}
	// Go on until the sample's own live heap rose by eight samples'
	// worth, well above the floor (on a loaded machine it gets less done
	// in 24 s).
	enough := func(p progress) bool { return p.heapRise >= 4<<20 }
	rec := recordCounted(t, filepath.Join(root, "map-cache-grows"), 24*time.Second, time.Minute, 2*time.Second, false, enough, "-rate", "80", "-leak-after", "8s")
	ns, err := strconv.ParseInt(strings.TrimSpace(string(rec.work)), 10, 64)
	if err != nil || ns == 0 {
		t.Fatalf("the sample did not say when it began caching: %q", rec.work)
	}
	truth := time.Unix(0, ns).UTC()
	rep := analyzeRecording(t, rec.dir)
	s := suspectAt(rep, "main.render")
	if s == nil || s.Onset == nil {
		t.Fatalf("no heap suspect with an onset at main.render: %d suspects", len(rep.Suspects))
	}
	o := s.Onset
	t.Logf("true start %s; onset %s in [%s, %s] (%s): %s", truth.Format(time.StampMilli), o.At.Format(time.StampMilli), o.Earliest.Format(time.StampMilli), o.Latest.Format(time.StampMilli), o.Basis, o.Detail)
	if o.Latest.IsZero() || o.Latest.Before(truth) || !o.Earliest.IsZero() && o.Earliest.After(truth) {
		t.Errorf("onset bounds [%s, %s] do not contain the true start %s", o.Earliest.Format(time.StampMilli), o.Latest.Format(time.StampMilli), truth.Format(time.StampMilli))
	}
	if o.Earliest.IsZero() {
		t.Errorf("no lower bound on the onset of a site growing %s", analysis.FormatRate(s.GrowthPerMin, analysis.KindHeap))
	}
}

// TestHeapSight records the map cache growing a few hundred KiB a
// minute for 16 s at the default heap sampling rate: too slow to name,
// so the report must say what these profiles can see (a floor above the
// program's own growth) in its inputs. Then, at the MemProfileRate that
// statement implies would show the program's growth over as long a
// capture (a quarter of it, for margin), the site must be named.
func TestHeapSight(t *testing.T) {
	liveTest(t, "runs a sample twice for 16 s")
	root, err := samples.Root()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "map-cache-grows")
	rec := recordCounted(t, dir, 16*time.Second, 16*time.Second, 2*time.Second, false, nil, "-rate", "2")
	rep := analyzeRecording(t, rec.dir)
	growth := rec.callsPerMin() * quoteBytes
	sight := rep.Heap.Sight
	if sight == nil {
		t.Fatal("no heap sight with six heap snapshots")
	}
	t.Logf("program grows %s; %s", analysis.FormatRate(growth, analysis.KindHeap), sight.Text)
	if s := suspectAt(rep, "main.render"); s != nil {
		t.Logf("named at the default rate after all (%s): nothing to say", analysis.FormatRate(s.GrowthPerMin, analysis.KindHeap))
		return
	}
	if sight.MinPerMin <= growth {
		t.Errorf("the report says a site growing %s/min is seen, the program grows %.0f B/min and was not named", analysis.FormatRate(sight.MinPerMin, analysis.KindHeap), growth)
	}
	if !strings.Contains(strings.Join(rep.Inputs.Next, "\n"), sight.Text) {
		t.Errorf("the inputs do not say what would show slower heap growth: %q", rep.Inputs.Next)
	}
	// The rise needed scales with MemProfileRate: for the program's
	// growth over this span, MinRise × rate' / rate ≤ growth × span.
	rate := float64(sight.MemProfileRate) * growth * sight.Seconds / 60 / sight.MinRise / 4
	fine := recordCounted(t, dir, 16*time.Second, 16*time.Second, 2*time.Second, false, nil, "-rate", "2", "-memprofilerate", fmt.Sprint(int64(rate)))
	again := analyzeRecording(t, fine.dir)
	if s := suspectAt(again, "main.render"); s == nil {
		t.Errorf("at MemProfileRate %.0f (a quarter of what the report implies) main.render is still not named: %d suspects", rate, len(again.Suspects))
	}
}
