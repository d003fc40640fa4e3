package flame

import (
	"errors"
	"regexp"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/google/pprof/profile"
	"github.com/leakscope/leakscope/ingest/schema"
)

func TestSnapshotSelection(t *testing.T) {
	rp, st, mem := stacksOfThisProcess(t)
	c := snapshotChecks{
		rp: rp, st: st, mem: mem,
		h1: rp.parsed["heap1"], h2: rp.parsed["heap2"],
		ts1: rp.ts["heap1"], ts2: rp.ts["heap2"],
	}
	t.Run("latest by default", c.latestByDefault)
	t.Run("instant range sums", c.instantRangeSums)
	t.Run("cumulative range subtracts", c.cumulativeRangeSubtracts)
	t.Run("missing snapshots", c.missingSnapshots)
	t.Run("bad queries", c.badQueries)
	t.Run("snapshots listed", c.snapshotsListed)
}

// snapshotChecks is what the snapshot selection checks share: this
// process's bundle, its two heap snapshots as pprof parses them and their
// times.
type snapshotChecks struct {
	rp       *realProfiles
	st       *Stacks
	mem      memory.Allocator
	h1, h2   *profile.Profile
	ts1, ts2 int64
}

// sum is the total of sample type typ over all of p's samples.
func (c snapshotChecks) sum(t *testing.T, p *profile.Profile, typ string) int64 {
	return sumWhere(p, sampleIndex(t, p, typ), nil)
}

// latestByDefault: a query without a time takes the latest snapshot and
// the profile's default value.
func (c snapshotChecks) latestByDefault(t *testing.T) {
	tree, err := c.st.Build(c.rp.bundle, c.mem, Query{Profile: schema.ProfileHeap})
	if err != nil {
		t.Fatal(err)
	}
	if tree.Snapshot != c.ts2 || tree.Total() != c.sum(t, c.h2, "inuse_space") || tree.Value != schema.ColInuseSpace || tree.Unit != "bytes" {
		t.Fatalf("got snapshot %d total %d value %s; want %d %d inuse_space", tree.Snapshot, tree.Total(), tree.Value, c.ts2, c.sum(t, c.h2, "inuse_space"))
	}
}

// instantRangeSums: a range over an instant value sums its snapshots.
func (c snapshotChecks) instantRangeSums(t *testing.T) {
	ts1, ts2 := c.ts1, c.ts2
	tree, err := c.st.Build(c.rp.bundle, c.mem, Query{Profile: schema.ProfileHeap, From: ts1, To: ts2})
	if err != nil {
		t.Fatal(err)
	}
	want := c.sum(t, c.h1, "inuse_space") + c.sum(t, c.h2, "inuse_space")
	if tree.Total() != want || tree.Count != 2 || tree.First != ts1 || tree.Snapshot != ts2 || tree.Delta {
		t.Fatalf("total %d count %d first %d last %d delta %v; want %d 2 %d %d false", tree.Total(), tree.Count, tree.First, tree.Snapshot, tree.Delta, want, ts1, ts2)
	}
	// An open upper bound starting after heap1 holds heap2 only.
	tree, err = c.st.Build(c.rp.bundle, c.mem, Query{Profile: schema.ProfileHeap, From: ts1 + 1})
	if err != nil {
		t.Fatal(err)
	}
	if tree.Total() != c.sum(t, c.h2, "inuse_space") || tree.Count != 1 {
		t.Fatalf("open range: total %d count %d", tree.Total(), tree.Count)
	}
}

// cumulativeRangeSubtracts: a range over a cumulative value is the last
// snapshot less the first.
func (c snapshotChecks) cumulativeRangeSubtracts(t *testing.T) {
	ts1, ts2 := c.ts1, c.ts2
	tree, err := c.st.Build(c.rp.bundle, c.mem, Query{Profile: schema.ProfileHeap, Value: schema.ColAllocSpace, From: ts1, To: ts2})
	if err != nil {
		t.Fatal(err)
	}
	want := c.sum(t, c.h2, "alloc_space") - c.sum(t, c.h1, "alloc_space")
	if tree.Total() != want || !tree.Delta || tree.First != ts1 || tree.Snapshot != ts2 {
		t.Fatalf("total %d delta %v; want %d true", tree.Total(), tree.Delta, want)
	}
	// Beta's allocations all happened in between.
	beta := regexp.MustCompile("flameLeakBeta")
	idx := sampleIndex(t, c.h2, "alloc_space")
	tree, err = c.st.Build(c.rp.bundle, c.mem, Query{Profile: schema.ProfileHeap, Value: schema.ColAllocSpace, From: ts1, To: ts2, Focus: []string{"flameLeakBeta"}})
	if err != nil {
		t.Fatal(err)
	}
	if w := sumWhere(c.h2, idx, func(s *profile.Sample) bool { return anyFrame(s, beta) }); tree.Total() != w || w == 0 {
		t.Fatalf("beta allocated %d in range, want %d", tree.Total(), w)
	}
	// A range with one snapshot gives its values since process start.
	tree, err = c.st.Build(c.rp.bundle, c.mem, Query{Profile: schema.ProfileHeap, Value: schema.ColAllocSpace, To: ts1})
	if err != nil {
		t.Fatal(err)
	}
	if tree.Total() != c.sum(t, c.h1, "alloc_space") || tree.Delta {
		t.Fatalf("single-snapshot range: total %d delta %v", tree.Total(), tree.Delta)
	}
}

// missingSnapshots: a query naming no snapshot the bundle has is
// ErrNoSnapshot.
func (c snapshotChecks) missingSnapshots(t *testing.T) {
	for _, q := range []Query{
		{Profile: schema.ProfileHeap, Snapshot: c.ts1 + 1},
		{Profile: schema.ProfileHeap, Base: c.ts1 + 1},
		{Profile: schema.ProfileHeap, From: c.ts2 + 1},
		{Profile: schema.ProfileThreadcreate},
	} {
		if _, err := c.st.Build(c.rp.bundle, c.mem, q); !errors.Is(err, ErrNoSnapshot) {
			t.Errorf("%+v: err %v, want ErrNoSnapshot", q, err)
		}
	}
}

// badQueries: a malformed query is an error and no tree.
func (c snapshotChecks) badQueries(t *testing.T) {
	for _, q := range []Query{
		{Profile: "nope"},
		{Profile: schema.ProfileHeap, Value: "bogus"},
		{Profile: schema.ProfileHeap, Snapshot: c.ts1, From: c.ts1},
		{Profile: schema.ProfileHeap, From: c.ts2, To: c.ts1},
		{Profile: schema.ProfileHeap, Focus: []string{"("}},
		{Profile: schema.ProfileHeap, Source: SourceGoroutines},
		{Source: "elsewhere"},
		{Source: SourceSamples, Goids: []int64{1}},
	} {
		if tree, err := c.st.Build(c.rp.bundle, c.mem, q); err == nil || tree != nil {
			t.Errorf("%+v: no error", q)
		}
	}
}

// snapshotsListed: Profiles and DumpSnapshots list the times the bundle
// holds.
func (c snapshotChecks) snapshotsListed(t *testing.T) {
	rp, mem := c.rp, c.mem
	all, err := Profiles(rp.bundle, mem)
	if err != nil {
		t.Fatal(err)
	}
	if got := all[schema.ProfileHeap]; !slices.Equal(got, []int64{c.ts1, c.ts2}) {
		t.Fatalf("heap snapshots %v, want %v", got, []int64{c.ts1, c.ts2})
	}
	for _, p := range []string{"allocs", "goroutine", "block", "mutex", "cpu"} {
		if !slices.Equal(all[p], []int64{rp.ts[p]}) {
			t.Errorf("%s snapshots %v, want [%d]", p, all[p], rp.ts[p])
		}
	}
	dumps, err := DumpSnapshots(rp.bundle, mem)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(dumps, []int64{rp.ts["goroutine"]}) {
		t.Fatalf("dump snapshots %v", dumps)
	}
}

func TestGoroutineDumpSource(t *testing.T) {
	rp, st, mem := stacksOfThisProcess(t)
	g := rp.parsed["goroutine"]
	fromDump, err := st.Build(rp.bundle, mem, Query{Source: SourceGoroutines})
	if err != nil {
		t.Fatal(err)
	}
	fromProfile, err := st.Build(rp.bundle, mem, Query{})
	if err != nil {
		t.Fatal(err)
	}
	if fromDump.Total() != sumWhere(g, 0, nil) || fromProfile.Total() != fromDump.Total() || fromDump.Source != SourceGoroutines {
		t.Fatalf("dump total %d, profile total %d, want %d", fromDump.Total(), fromProfile.Total(), sumWhere(g, 0, nil))
	}
	// Same stacks, one row per goroutine: the trees agree everywhere.
	if a, b := Top(fromDump), Top(fromProfile); !slices.Equal(a, b) {
		t.Fatalf("top of dump and profile differ:\n%v\n%v", a, b)
	}

	// A subset of goroutines: those parked in flameParkedSelect.
	sel := regexp.MustCompile(`flameParkedSelect`)
	var want []int64
	for goid, sid := range rp.goids {
		frames, _ := st.frames(sid)
		for _, f := range frames {
			if sel.MatchString(st.funcs[st.fn(f)]) {
				want = append(want, goid)
				break
			}
		}
	}
	expect := sumWhere(g, 0, func(s *profile.Sample) bool { return anyFrame(s, sel) })
	if int64(len(want)) != expect || expect < 11 {
		t.Fatalf("%d goroutines in flameParkedSelect among the rows, profile says %d (at least 11 started)", len(want), expect)
	}
	sub, err := st.Build(rp.bundle, mem, Query{Goids: want})
	if err != nil {
		t.Fatal(err)
	}
	if sub.Total() != expect || sub.Source != SourceGoroutines {
		t.Fatalf("subset total %d, want %d", sub.Total(), expect)
	}
	none, err := st.Build(rp.bundle, mem, Query{Goids: []int64{1 << 40}})
	if err != nil || none.Total() != 0 {
		t.Fatalf("unknown goid: total %v err %v, want an empty tree", none, err)
	}
}

func TestSandwichOfRealTree(t *testing.T) {
	rp := profilesOfThisProcess(t)
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	tree, err := FromBundle(rp.bundle, mem, Query{Profile: schema.ProfileHeap})
	if err != nil {
		t.Fatal(err)
	}
	cum := map[string]int64{}
	for _, f := range Top(tree) {
		cum[f.Name] = f.Cum
	}
	alpha := "github.com/leakscope/leakscope/analysis/flame.flameLeakAlpha"
	if cum[alpha] == 0 || cum["testing.tRunner"] == 0 {
		t.Fatalf("heap tree lacks %s or testing.tRunner", alpha)
	}
	for _, fn := range []string{"testing.tRunner", "runtime/pprof.(*Profile).WriteTo", alpha} {
		if cum[fn] == 0 {
			continue
		}
		callers, callees, err := Sandwich(tree, fn)
		if err != nil {
			t.Fatal(err)
		}
		if callers.Total() != cum[fn] || callees.Total() != cum[fn] || !callers.Inverted || callees.Inverted {
			t.Errorf("%s: callers %d callees %d, cum %d", fn, callers.Total(), callees.Total(), cum[fn])
		}
		// The callers' values end at the stacks' roots.
		var ends int64
		callers.Walk(func(n *Node, _ int) bool { ends += n.Self; return true })
		if ends != cum[fn] {
			t.Errorf("%s: callers selfs sum to %d, want %d", fn, ends, cum[fn])
		}
	}
	if _, _, err := Sandwich(tree, "no.such.function"); !errors.Is(err, ErrNoFunction) {
		t.Fatalf("missing function: %v", err)
	}
	inv := *tree
	inv.Inverted = true
	if _, _, err := Sandwich(&inv, "main.main"); err == nil {
		t.Fatal("sandwich of an inverted tree: no error")
	}
}
