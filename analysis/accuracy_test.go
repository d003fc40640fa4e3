package analysis_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/samples"
)

// sampleResult is the verdict on one sample.
type sampleResult struct {
	name          string
	healthy       bool
	leaks, found  int
	tp, fp        int
	patternsRight int
	missed, extra []string
	suspects      int
	top           string
}

// evaluate matches a report against a sample's ground truth: a planted
// leak is found when a suspect of its kind names its function as location
// (and, for goroutine leaks, its creator) within the top max(2, leaks)
// ranks. Every suspect matching no planted leak is a false positive.
func evaluate(name string, truth samples.Truth, rep *analysis.Report) sampleResult {
	r := sampleResult{name: name, healthy: truth.Healthy, leaks: len(truth.Leaks), suspects: len(rep.Suspects)}
	// A leak in library goroutines (l.Origin set) is found as an
	// incident: its origin is the user's frame, its pattern the library
	// shape, its fix says what the truth says; every member suspect of
	// that incident is a true positive.
	incident := map[string]*analysis.Incident{}
	for i := range rep.Incidents {
		incident[rep.Incidents[i].ID] = &rep.Incidents[i]
	}
	incidentMatches := func(inc *analysis.Incident, l samples.Leak) bool {
		return inc != nil && l.Origin != "" && inc.Origin != nil && inc.Origin.Function == l.Origin &&
			inc.Pattern == l.Pattern && strings.Contains(inc.Fix, l.Fix)
	}
	matches := func(s analysis.Suspect, l samples.Leak) bool {
		if l.Origin != "" {
			return incidentMatches(incident[s.Incident], l)
		}
		return s.Kind == l.Kind && s.Location == l.Function && (l.Kind == samples.KindHeap || s.Creator == l.Creator)
	}
	topN := max(2, len(truth.Leaks))
	for _, l := range truth.Leaks {
		ok := false
		for i := range rep.Incidents {
			if i < topN && incidentMatches(&rep.Incidents[i], l) {
				ok = true
				r.patternsRight++
				break
			}
		}
		for i, s := range rep.Suspects {
			if !ok && l.Origin == "" && i < topN && matches(s, l) {
				ok = true
				if s.Pattern == l.Pattern {
					r.patternsRight++
				}
				break
			}
		}
		if ok {
			r.found++
		} else {
			r.missed = append(r.missed, l.Function)
		}
	}
	for _, s := range rep.Suspects {
		hit := false
		for _, l := range truth.Leaks {
			hit = hit || matches(s, l)
		}
		if hit {
			r.tp++
		} else {
			r.fp++
			r.extra = append(r.extra, fmt.Sprintf("%s %s@%s(%.0f)", s.ID, s.Pattern, s.Location, s.Score))
		}
	}
	if len(rep.Suspects) > 0 {
		s := rep.Suspects[0]
		r.top = fmt.Sprintf("%s %s %.0f", s.Pattern, s.Location, s.Score)
	}
	return r
}

// measure records, analyses and evaluates the named samples, at most
// parallel at a time.
func measure(t *testing.T, names []string, d, interval time.Duration, parallel int) []sampleResult {
	root, err := samples.Root()
	if err != nil {
		t.Fatal(err)
	}
	all, err := samples.All(root)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var mu sync.Mutex
	var out []sampleResult
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for _, s := range all {
		if len(names) > 0 && !want[s.Name] {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			t.Run(s.Name, func(t *testing.T) {
				dir := recordUntil(t, s.Dir, d, 4*d, interval, libraryLeak(s.Truth), heapReady(s.Truth))
				b, err := bundle.Open(dir)
				if err != nil {
					t.Fatal(err)
				}
				mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
				defer mem.AssertSize(t, 0)
				rep, err := analysis.Analyze(b, mem, analysis.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if dst := os.Getenv("LEAKSCOPE_ACCURACY_KEEP"); dst != "" {
					os.MkdirAll(dst, 0o755)
					os.Rename(dir, filepath.Join(dst, s.Name+".lsb"))
				}
				mu.Lock()
				out = append(out, evaluate(s.Name, s.Truth, rep))
				mu.Unlock()
			})
		}()
	}
	wg.Wait()
	return out
}

// summary prints the per-sample table and the totals and returns
// precision and recall.
func summary(t *testing.T, res []sampleResult) (precision, recall float64) {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "sample\thealthy\tplanted\tfound(top2)\tpattern ok\tsuspects\tfalse pos.\ttop suspect")
	var tp, fp, planted, found int
	for _, r := range res {
		fmt.Fprintf(tw, "%s\t%v\t%d\t%d\t%d\t%d\t%d\t%s\n", r.name, r.healthy, r.leaks, r.found, r.patternsRight, r.suspects, r.fp, r.top)
		tp += r.tp
		fp += r.fp
		planted += r.leaks
		found += r.found
	}
	tw.Flush()
	precision, recall = 1, 1
	if tp+fp > 0 {
		precision = float64(tp) / float64(tp+fp)
	}
	if planted > 0 {
		recall = float64(found) / float64(planted)
	}
	fmt.Fprintf(&b, "TOTAL: %d samples, %d planted leaks, %d found in the top two, %d suspects (%d false): precision %.2f recall %.2f\n",
		len(res), planted, found, tp+fp, fp, precision, recall)
	t.Log("\n" + b.String())
	// What fails is a figure below docs/ACCURACY.md's claim (TestAccuracy);
	// here each miss and extra suspect is named.
	for _, r := range res {
		if len(r.missed) > 0 {
			t.Logf("%s: missed %v", r.name, r.missed)
		}
		if len(r.extra) > 0 {
			t.Logf("%s: false positives %v", r.name, r.extra)
		}
	}
	return precision, recall
}

// TestAccuracy runs every sample for 25 s, scraping a dump and a heap
// profile every 2.5 s, reports precision and recall against each sample's
// leak.json, and checks docs/ACCURACY.md's claim about them (the
// samples-accuracy block, its one source): the number of planted-leak
// samples and healthy controls, and precision and recall at least as
// claimed. make test runs it; make accuracy prints its table.
func TestAccuracy(t *testing.T) {
	liveTest(t, "runs every sample program for 25 s")
	claim := readmeClaim(t)
	// Six at a time: each sample mostly waits for its 25 s to pass.
	res := measure(t, nil, 25*time.Second, 2500*time.Millisecond, 6)
	precision, recall := summary(t, res)
	leaky, healthy := 0, 0
	for _, r := range res {
		if r.healthy {
			healthy++
			if r.suspects > 0 {
				t.Errorf("docs/ACCURACY.md claims no suspect on the healthy controls; %s has %d", r.name, r.suspects)
			}
		} else {
			leaky++
		}
	}
	if leaky != claim.leaky || healthy != claim.healthy {
		t.Errorf("docs/ACCURACY.md claims %d planted-leak samples and %d healthy controls; samples/ has %d and %d", claim.leaky, claim.healthy, leaky, healthy)
	}
	if precision < claim.precision || recall < claim.recall {
		t.Errorf("docs/ACCURACY.md claims precision %.2f, recall %.2f; measured %.2f, %.2f", claim.precision, claim.recall, precision, recall)
	}
}

// accuracyClaim is what docs/ACCURACY.md says about the samples.
type accuracyClaim struct {
	leaky, healthy    int
	precision, recall float64
}

// readmeClaim reads the samples-accuracy block of docs/ACCURACY.md.
func readmeClaim(t *testing.T) accuracyClaim {
	t.Helper()
	data, err := os.ReadFile("../docs/ACCURACY.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?s)<!-- samples-accuracy:begin[^>]*-->(.*?)<!-- samples-accuracy:end -->`).FindSubmatch(data)
	if block == nil {
		t.Fatal("docs/ACCURACY.md has no samples-accuracy block")
	}
	text := strings.Join(strings.Fields(string(block[1])), " ")
	m := regexp.MustCompile(`\((\d+) planted-leak services, (\d+) healthy controls[^)]*\).*precision ([0-9.]+), recall ([0-9.]+)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("docs/ACCURACY.md's samples-accuracy block does not say how many samples and what precision and recall: %q", text)
	}
	var c accuracyClaim
	c.leaky, _ = strconv.Atoi(m[1])
	c.healthy, _ = strconv.Atoi(m[2])
	c.precision, _ = strconv.ParseFloat(m[3], 64)
	c.recall, _ = strconv.ParseFloat(m[4], 64)
	return c
}

// libraryLeak reports whether a sample plants a leak in library
// goroutines (its truth names an origin): those are recorded with a trace
// window, whose creation stacks lead to the user's frame.
// heapReady, for a sample with a planted heap leak that counts its own
// heap, records past d until that heap rose by eight samples' worth of
// the runtime's default heap sampling (512 KiB): a loaded machine serves
// the sample fewer calls in d. nil (stop at d) for other samples.
func heapReady(t samples.Truth) func(progress) bool {
	for _, l := range t.Leaks {
		if l.Kind == samples.KindHeap {
			return func(p progress) bool { return !p.counts || p.heapRise >= 4<<20 }
		}
	}
	return nil
}

func libraryLeak(t samples.Truth) bool {
	for _, l := range t.Leaks {
		if l.Origin != "" {
			return true
		}
	}
	return false
}
