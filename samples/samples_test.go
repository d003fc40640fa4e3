package samples

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := Cleanup(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// testRates are the -rate values used by TestSamplesRun, high enough for
// leaks to show within seconds.
var testRates = map[string]string{
	"ticker-leak":   "100",
	"timeout-send":  "100",
	"sawtooth-heap": "100",
	"operator-sim":  "300",
	// client-go samples: each reconcile starts real library machinery.
	"informer-per-reconcile":         "20",
	"broadcaster-per-reconcile":      "20",
	"watch-filter-not-stopped":       "20",
	"controller-watch-per-reconcile": "20",
	// libs samples: a few leaking calls per second are plenty; the
	// context one leaks ~250 bytes per miss and needs 1 MiB, and at 4000
	// lookups/s the heap profile (a record per 512 KiB) once saw no growth
	// in 4 s beside a CPU hog.
	"http-body-not-closed":      "40",
	"errgroup-early-return":     "20",
	"grpc-conn-per-call":        "20",
	"grpc-stream-not-cancelled": "20",
	"context-cancel-dropped":    "8000",
}

// wantState maps a goroutine pattern to the wait reason of its goroutines.
var wantState = map[string]string{
	PatternChanSendNoReceiver:     "chan send",
	PatternChanReceiveNeverClosed: "chan receive",
	PatternSelectWithoutCancel:    "select",
	PatternTickerNotStopped:       "chan receive",
	PatternWaitGroupNeverDone:     "sync.WaitGroup.Wait",
}

// snapshot is one observation of a running sample.
type snapshot struct {
	gs   []goroutine
	heap map[string]int64 // inuse_space by innermost main-package function
}

// observe takes one goroutine dump and one heap profile.
func observe(ctx context.Context, url string) (snapshot, error) {
	dump, err := fetch(ctx, url+"/debug/pprof/goroutine?debug=2")
	if err != nil {
		return snapshot{}, err
	}
	gs, err := parseDump(bytes.NewReader(dump))
	if err != nil {
		return snapshot{}, err
	}
	raw, err := fetch(ctx, url+"/debug/pprof/heap?gc=1")
	if err != nil {
		return snapshot{}, err
	}
	p, err := profile.ParseData(raw)
	if err != nil {
		return snapshot{}, fmt.Errorf("parse heap profile: %w", err)
	}
	heap, err := inuseByFunction(p)
	return snapshot{gs: gs, heap: heap}, err
}

func fetch(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("get %s: status %s", url, resp.Status)
	}
	return body, nil
}

// inuseByFunction sums inuse_space per innermost main-package function.
func inuseByFunction(p *profile.Profile) (map[string]int64, error) {
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "inuse_space" {
			idx = i
		}
	}
	if idx < 0 {
		return nil, errors.New("heap profile has no inuse_space")
	}
	out := make(map[string]int64)
	for _, s := range p.Sample {
		if fn := topMainFunction(s); fn != "" {
			out[fn] += s.Value[idx]
		}
	}
	return out, nil
}

func topMainFunction(s *profile.Sample) string {
	for _, loc := range s.Location {
		for _, ln := range loc.Line {
			if ln.Function != nil && strings.HasPrefix(ln.Function.Name, "main.") {
				return ln.Function.Name
			}
		}
	}
	return ""
}

// matching returns the goroutines parked in fn and created by creator.
func matching(gs []goroutine, fn, creator string) []goroutine {
	var out []goroutine
	for _, g := range gs {
		if g.parkedIn(fn) && g.Creator == creator {
			out = append(out, g)
		}
	}
	return out
}

// checkStuckGoroutines checks a declared leak of a few goroutines that
// block for good and do not grow (the stuck root cause beside a growing
// queue of waiters): at least min_count_30s of them by the last dump, one
// of them the same goroutine, parked there, in the last two.
func checkStuckGoroutines(t *testing.T, l Leak, obs [3]snapshot) {
	t.Helper()
	b := matching(obs[1].gs, l.Function, l.Creator)
	c := matching(obs[2].gs, l.Function, l.Creator)
	if int64(len(c)) < l.MinCount30s {
		t.Errorf("%s created by %s: %d goroutines at the last dump, want at least %d", l.Function, l.Creator, len(c), l.MinCount30s)
	}
	for _, g := range c {
		for _, h := range b {
			if g.ID == h.ID {
				t.Logf("%s: goroutine %d parked in both of the last dumps", l.Function, g.ID)
				return
			}
		}
	}
	t.Errorf("%s: no goroutine stayed parked there from one dump to the next", l.Function)
}

// persistentNew returns the goroutines of b that are absent from a and
// still present in c, keeping those accepted by keep.
func persistentNew(a, b, c []goroutine, keep func(goroutine) bool) []goroutine {
	inA, inC := make(map[int64]bool), make(map[int64]bool)
	for _, g := range a {
		inA[g.ID] = true
	}
	for _, g := range c {
		inC[g.ID] = true
	}
	var out []goroutine
	for _, g := range b {
		if !inA[g.ID] && inC[g.ID] && keep(g) {
			out = append(out, g)
		}
	}
	return out
}

func mainGoroutines(gs []goroutine) int {
	n := 0
	for _, g := range gs {
		if g.topMain() != "" {
			n++
		}
	}
	return n
}

func sumMain(heap map[string]int64) int64 {
	var n int64
	for _, v := range heap {
		n += v
	}
	return n
}

// observation is the outcome of running one sample.
type observation struct {
	obs  [3]snapshot
	work []byte
	err  error
}

// runSample starts s at rate, calls /work once, then observes it three
// times two seconds apart, and stops it.
func runSample(ctx context.Context, s Sample, rate string) (o observation) {
	p, err := Start(ctx, s.Dir, "-rate", rate)
	if err != nil {
		return observation{err: err}
	}
	defer func() {
		if err := p.Stop(); err != nil && o.err == nil {
			o.err = fmt.Errorf("stop: %w", err)
		}
	}()
	if o.work, o.err = fetch(ctx, p.URL+"/work"); o.err != nil {
		return o
	}
	for i := range o.obs {
		time.Sleep(2 * time.Second)
		if o.obs[i], o.err = observe(ctx, p.URL); o.err != nil {
			return o
		}
	}
	// A heap leak grows with the requests served, which a loaded machine
	// serves fewer of: the last observation is taken again until each
	// heap leak has grown past what checkHeapLeak asks, for a minute at most.
	for deadline := time.Now().Add(time.Minute); !heapShown(s, o.obs) && time.Now().Before(deadline); {
		time.Sleep(2 * time.Second)
		if o.obs[2], o.err = observe(ctx, p.URL); o.err != nil {
			return o
		}
	}
	return o
}

// heapShown reports whether every heap leak of s has grown as
// checkHeapLeak asks between the first observation and the last.
func heapShown(s Sample, obs [3]snapshot) bool {
	for _, l := range s.Truth.Leaks {
		if l.Kind == KindHeap && !heapGrew(l, obs) {
			return false
		}
	}
	return true
}

// heapGrew reports whether heap leak l's in-use bytes rose between the
// first observation and the last, past 1 MiB.
func heapGrew(l Leak, obs [3]snapshot) bool {
	a, c := obs[0].heap[l.Function], obs[2].heap[l.Function]
	return c > a && c >= 1<<20
}

// TestSamplesRun runs every sample at once for a few seconds, then checks
// that the declared leaks are real and the healthy samples stay flat.
func TestSamplesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every sample for several seconds")
	}
	all, err := All(".")
	if err != nil {
		t.Fatal(err)
	}
	results := make([]observation, len(all))
	var wg sync.WaitGroup
	for i, s := range all {
		rate := testRates[s.Name]
		if rate == "" {
			rate = "200"
		}
		wg.Go(func() { results[i] = runSample(t.Context(), s, rate) })
	}
	wg.Wait()
	for i, s := range all {
		t.Run(s.Name, func(t *testing.T) {
			r := results[i]
			if r.err != nil {
				t.Fatal(r.err)
			}
			if len(r.work) == 0 {
				t.Error("/work returned an empty body")
			}
			if s.Truth.Healthy {
				checkHealthy(t, r.obs)
				return
			}
			for _, l := range s.Truth.Leaks {
				switch l.Kind {
				case KindGoroutine:
					checkGoroutineLeak(t, l, r.obs)
				case KindHeap:
					checkHeapLeak(t, l, r.obs)
				}
			}
		})
	}
}

func checkGoroutineLeak(t *testing.T, l Leak, obs [3]snapshot) {
	t.Helper()
	if l.MinCount30s < 20 {
		checkStuckGoroutines(t, l, obs)
		return
	}
	b := matching(obs[1].gs, l.Function, l.Creator)
	c := matching(obs[2].gs, l.Function, l.Creator)
	if len(c) < 20 || len(c) <= len(b) {
		t.Errorf("%s created by %s: %d then %d goroutines, want at least 20 and growing", l.Function, l.Creator, len(b), len(c))
	}
	t.Logf("%s: %d then %d goroutines", l.Function, len(b), len(c))
	keep := func(g goroutine) bool { return g.parkedIn(l.Function) && g.Creator == l.Creator }
	if n := len(persistentNew(obs[0].gs, obs[1].gs, obs[2].gs, keep)); n == 0 {
		t.Errorf("%s: no goroutine born after the first dump survived to the last", l.Function)
	}
	if want, ok := wantState[l.Pattern]; ok {
		parked := 0
		for _, g := range c {
			if g.State == want {
				parked++
			}
		}
		if parked*10 < len(c)*9 {
			t.Errorf("%s: %d of %d goroutines in state %q, want at least 90%%", l.Function, parked, len(c), want)
		}
	}
}

func checkHeapLeak(t *testing.T, l Leak, obs [3]snapshot) {
	t.Helper()
	a, c := obs[0].heap[l.Function], obs[2].heap[l.Function]
	t.Logf("%s: inuse_space %d then %d bytes", l.Function, a, c)
	if !heapGrew(l, obs) {
		t.Errorf("%s: inuse_space %d then %d bytes, want growing past 1 MiB", l.Function, a, c)
	}
}

func checkHealthy(t *testing.T, obs [3]snapshot) {
	t.Helper()
	const slack = 150 // bursty's bursts of 100 short-lived goroutines
	nA, nB, nC := mainGoroutines(obs[0].gs), mainGoroutines(obs[1].gs), mainGoroutines(obs[2].gs)
	t.Logf("main goroutines %d, %d, %d; main inuse_space %d, %d, %d bytes", nA, nB, nC,
		sumMain(obs[0].heap), sumMain(obs[1].heap), sumMain(obs[2].heap))
	if nC > nA+slack || nC > nB+slack {
		t.Errorf("main goroutines %d, %d, %d: grew by more than %d", nA, nB, nC, slack)
	}
	keep := func(g goroutine) bool { return g.topMain() != "" }
	if pn := persistentNew(obs[0].gs, obs[1].gs, obs[2].gs, keep); len(pn) > 2 {
		t.Errorf("%d goroutines born after the first dump survived to the last, first %s in %s",
			len(pn), pn[0].topMain(), pn[0].State)
	}
	for i, o := range obs {
		if n := sumMain(o.heap); n > 64<<20 {
			t.Errorf("observation %d: %d bytes in use from main, want at most 64 MiB", i, n)
		}
	}
}

// TestSamplesMinCount30s checks min_count_30s: every leaky sample runs at
// its default rate for 30 s, then each declared leak must have at least
// that many goroutines (or bytes in use). Set LEAKSCOPE_SAMPLES_LONG=1.
func TestSamplesMinCount30s(t *testing.T) {
	if os.Getenv("LEAKSCOPE_SAMPLES_LONG") == "" {
		t.Skip("set LEAKSCOPE_SAMPLES_LONG=1 to run every sample for 30 s")
	}
	all, err := All(".")
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		snap snapshot
		err  error
	}
	results := make([]result, len(all))
	var wg sync.WaitGroup
	for i, s := range all {
		if s.Truth.Healthy {
			continue
		}
		wg.Go(func() {
			p, err := Start(t.Context(), s.Dir)
			if err != nil {
				results[i].err = err
				return
			}
			defer p.Stop()
			time.Sleep(30 * time.Second)
			results[i].snap, results[i].err = observe(t.Context(), p.URL)
		})
	}
	wg.Wait()
	for i, s := range all {
		if s.Truth.Healthy {
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			r := results[i]
			if r.err != nil {
				t.Fatal(r.err)
			}
			for _, l := range s.Truth.Leaks {
				got := r.snap.heap[l.Function]
				if l.Kind == KindGoroutine {
					got = int64(len(matching(r.snap.gs, l.Function, l.Creator)))
				}
				t.Logf("%s %s: %d after 30 s (min_count_30s %d)", l.Kind, l.Function, got, l.MinCount30s)
				if got < l.MinCount30s {
					t.Errorf("%s %s: %d after 30 s, want at least %d", l.Kind, l.Function, got, l.MinCount30s)
				}
			}
		})
	}
}
