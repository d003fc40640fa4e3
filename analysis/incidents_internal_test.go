package analysis

import (
	"math"
	"strings"
	"testing"
)

func TestPerCall(t *testing.T) {
	for _, c := range []struct {
		name        string
		rates       []float64
		calls, each float64
	}{
		// An informer: eight groups created once per call, fits a little apart.
		{"once each", []float64{9.5, 10, 10, 10.1, 10.2, 9.9, 10, 10.3}, 10, 8},
		// errgroup: three blocked members and one waiter per call.
		{"three and one", []float64{30, 10}, 10, 4},
		// A gRPC channel: three serializers, a reader and a writer per call.
		{"three, one, one", []float64{30.5, 10.2, 9.8}, 10, 5},
		// One group: its rate is the call rate.
		{"one group", []float64{12}, 12, 1},
	} {
		total := 0.0
		for _, r := range c.rates {
			total += r
		}
		calls, each := perCall(c.rates, total)
		if calls != c.calls || each != c.each {
			t.Errorf("%s: perCall(%v) = %v calls, %v each; want %v, %v", c.name, c.rates, calls, each, c.calls, c.each)
		}
	}
}

// TestHeapOwnerCreator checks that a heap suspect allocated by the code
// that started an incident's goroutines joins it (net/http's dialConn
// allocates a connection's buffers and starts the readLoop holding them),
// but not one allocated in a goroutine whose entry is that creator (a
// loop that starts goroutines allocates much else).
func TestHeapOwnerCreator(t *testing.T) {
	fr := func(fns ...string) []Frame {
		out := make([]Frame, len(fns))
		for i, f := range fns {
			out[i] = Frame{Function: f}
		}
		return out
	}
	sus := []Suspect{
		{Kind: KindGoroutine, Location: "net/http.(*persistConn).readLoop", Creator: "net/http.(*Transport).dialConn",
			Stack: fr("net/http.(*persistConn).readLoop", "runtime.goexit")},
		{Kind: KindGoroutine, Location: "main.wait", Creator: "main.loop", Stack: fr("main.wait", "runtime.goexit")},
	}
	groups := [][]int{{0}, {1}}
	buf := Suspect{Kind: KindHeap, Stack: fr("bufio.NewReaderSize", "net/http.(*Transport).dialConn",
		"net/http.(*Transport).dialConnFor", "net/http.(*Transport).startDialConnForLocked.func1", "runtime.goexit")}
	if got := newHeapOwners(sus, groups).owner(buf); got != 0 {
		t.Errorf("connection buffers: owner %d, want the readLoop incident (0)", got)
	}
	inLoop := Suspect{Kind: KindHeap, Stack: fr("main.record", "main.loop", "runtime.goexit")}
	if got := newHeapOwners(sus, groups).owner(inLoop); got != -1 {
		t.Errorf("allocation in the creator's own goroutine: owner %d, want none", got)
	}
}

// TestHeapPerCall checks heap per call from an in-use rise: below ten
// samples' worth it declines and says why; above, the figure is the rise
// over the calls and the bound two standard errors of a count of
// samples, shrinking as the rise grows.
func TestHeapPerCall(t *testing.T) {
	w := sampleWeight(1024, defaultMemProfileRate) // small objects: one sample ≈ the period
	if w < defaultMemProfileRate || w > defaultMemProfileRate+1024 {
		t.Fatalf("sample weight %.0f, want about %d", w, defaultMemProfileRate)
	}
	if pc, _, text := heapPerCall(heapRise{bytes: 5 * w, weight: w, minutes: 1, sites: 2}, 600); pc != 0 || !strings.Contains(text, "< 10 heap samples") {
		t.Errorf("5 samples: %.0f B/call, %q; want none and why", pc, text)
	}
	pc, bound, text := heapPerCall(heapRise{bytes: 100 * w, weight: w, minutes: 2, sites: 1}, 600)
	if want := math.Round(100 * w / 1200); pc != want || bound != math.Round(2*10*w/1200) {
		t.Errorf("100 samples over 1200 calls: %.0f ± %.0f B/call, want %.0f ± %.0f (%s)", pc, bound, want, math.Round(2*10*w/1200), text)
	}
	if _, b4, _ := heapPerCall(heapRise{bytes: 400 * w, weight: w, minutes: 2, sites: 1}, 600); math.Abs(b4-2*bound) > 1 {
		t.Errorf("bound for 4× the rise %.0f, want twice %.0f (√4)", b4, bound)
	}
	if _, _, text := heapPerCall(heapRise{}, 600); !strings.HasPrefix(text, "heap per call unknown") {
		t.Errorf("no site: %q", text)
	}
}

// TestLiteral: a function literal's or a go or defer statement
// wrapper's symbol has no statements of its own at its lines; a
// declaration and a numbered init are not literals.
func TestLiteral(t *testing.T) {
	for fn, want := range map[string]bool{
		"main.(*issuer).Token.func1": true, "main.(*issuer).Token.func1.2": true, "main.F.gowrap1": true,
		"pkg.Map[...].Get.func1": true, "main.F": false, "main.init.0": false, "main.F.deferwrap1": true,
	} {
		if got := literal(fn); got != want {
			t.Errorf("literal(%q) = %v, want %v", fn, got, want)
		}
	}
}
