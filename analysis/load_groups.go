package analysis

import (
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis/internal/tables"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// snapStat is one group's membership in one snapshot.
type snapStat struct {
	count    int64
	maxGoid  int64
	survived int64 // members whose goid is <= the previous snapshot's maxGoid
}

// rawGroup accumulates one groupKey over every snapshot.
type rawGroup struct {
	key            groupKey
	rawState       string
	snaps          map[int64]*snapStat // by snapshot_ts
	maxWait        int64
	maxWaitTS      int64 // the snapshot maxWait was seen in (the latest such)
	leaked         int64 // rows the runtime marked "(leaked)"
	creatorStackID int64
	goids          []int64 // sample, from the latest snapshot seen
	goidsTS        int64
	// spread is a uniform sample of that snapshot's members (the
	// bottom-k of a hash of the goid), so that some of them were created
	// during a trace window and attribution can follow their creation
	// stacks; goids alone holds the oldest.
	spread []int64
	// spreadHi is the index in spread of its highest hash once spread
	// is full (keepSpread), -1 before.
	spreadHi     int
	creatorGoids map[int64]int64
	labels       string
}

// goRec is what the analysis remembers about one goroutine id.
type goRec struct {
	creator      int64
	creatorFn    string
	creatorStack int64 // the dump's "created by" frame
	stackID      int64
	lastTS       int64
	firstTS      int64
}

// dumpData is everything read from the goroutines table.
type dumpData struct {
	snapshots []int64 // sorted distinct snapshot times
	totals    map[int64]int64
	groups    map[groupKey]*rawGroup
	// goroutine holds every goid (readDumps with all) or only the goids
	// that created other goroutines (enough for creator chains).
	goroutine map[int64]*goRec
	creators  map[int64]bool
	rows      int64
	partial   error
	// cut are the dumps left out, by snapshot time: cut short while the
	// bundle has whole ones (see cutDumps).
	cut map[int64]*bundle.Artifact
}

// cutDumps returns the dumps that were cut short (status truncated: a
// reply cut at the capture's size cap or by its end, a file that ends
// mid-goroutine) by snapshot time, when the bundle also holds whole
// dumps. A cut dump lists only the goroutines before the cut, so as a
// snapshot it reads as a fall in every group after it and breaks the
// growth fits; it is left out, with a warning (see cutWarnings). When
// every dump is cut they are all there is and stay in.
func cutDumps(m bundle.Manifest) map[int64]*bundle.Artifact {
	cut, whole := map[int64]*bundle.Artifact{}, false
	for i, a := range m.Artifacts {
		if a.Kind != bundle.SourceDump {
			continue
		}
		switch a.Status {
		case bundle.StatusTruncated:
			cut[a.Time.UnixNano()] = &m.Artifacts[i]
		case bundle.StatusComplete:
			whole = true
		}
	}
	if !whole {
		return nil
	}
	return cut
}

const goidSample = 64

// spreadSample bounds the uniform member sample kept per group.
const spreadSample = 48

// readDumps folds the goroutines table into groups: one pass for counts,
// one for survival between consecutive snapshots. With all, it remembers
// every goroutine id; otherwise only those that created others, so memory
// follows the number of groups and creators, not of goroutines.
func readDumps(b *bundle.Bundle, mem memory.Allocator, all bool) (*dumpData, error) {
	d := &dumpData{totals: map[int64]int64{}, groups: map[groupKey]*rawGroup{}, goroutine: map[int64]*goRec{}, creators: map[int64]bool{}}
	d.cut = cutDumps(b.Manifest)
	if err := d.countPass(b, mem, all); err != nil {
		if pe, ok := err.(*bundle.PartialError); ok {
			d.partial = pe
		} else {
			return nil, fmt.Errorf("read goroutines: %w", err)
		}
	}
	for ts := range d.totals {
		d.snapshots = append(d.snapshots, ts)
	}
	sort.Slice(d.snapshots, func(i, j int) bool { return d.snapshots[i] < d.snapshots[j] })
	if len(d.snapshots) < 2 && all {
		return d, nil
	}
	if err := d.survivalPass(b, mem, all); err != nil {
		if _, ok := err.(*bundle.PartialError); !ok {
			return nil, fmt.Errorf("read goroutines: %w", err)
		}
	}
	return d, nil
}

// dumpRow is one goroutines row as the count pass reads it.
type dumpRow struct {
	ts, goid, wait, creatorGoid, creatorStack int64
	labels                                    string // read only while the group has none
}

// countPass reads every row into its group: counts per snapshot, the
// longest wait, creators, labels and the goid samples.
func (d *dumpData) countPass(b *bundle.Bundle, mem memory.Allocator, all bool) error {
	in := tables.Interner{}
	return tables.ReadGoroutines(b, mem, func(c tables.GoroutineCols) {
		tsCol, goidCol := c.SnapshotTS, c.Goid
		stateCol, waitCol := c.State, c.WaitMinutes
		stackCol, cgCol := c.Stack, c.CreatorGoid
		cfCol, csCol := c.CreatorFunction, c.CreatorStack
		labCol := c.Labels
		var last *rawGroup
		for r := 0; r < c.Rows; r++ {
			ts := tsCol(r)
			if d.cut[ts] != nil {
				continue
			}
			d.rows++
			rawState, stack, creator := stateCol(r), stackCol(r), cfCol(r)
			g := last
			if g == nil || g.key.stackID != stack || g.rawState != rawState || g.key.creator != creator {
				g = d.group(&in, rawState, stack, creator)
				last = g
			}
			row := dumpRow{ts: ts, goid: goidCol(r), wait: waitCol(r), creatorGoid: cgCol(r), creatorStack: csCol(r)}
			if g.labels == "" {
				row.labels = labCol(r)
			}
			d.add(g, row, rawState, &in)
			if all {
				d.note(row.goid, row.creatorGoid, g, stack, ts)
			}
		}
	})
}

// group returns the group of a state, stack and creator, made on first
// sight.
func (d *dumpData) group(in *tables.Interner, rawState string, stack int64, creator string) *rawGroup {
	rs := in.Get(rawState)
	k := groupKey{state: in.Get(normState(rs)), stackID: stack, creator: in.Get(creator)}
	g := d.groups[k]
	if g == nil {
		g = &rawGroup{key: k, rawState: rs, snaps: map[int64]*snapStat{}, creatorGoids: map[int64]int64{}, spreadHi: -1}
		d.groups[k] = g
	}
	return g
}

// add counts one row into its group.
func (d *dumpData) add(g *rawGroup, row dumpRow, rawState string, in *tables.Interner) {
	ts, goid := row.ts, row.goid
	if strings.Contains(rawState, "(leaked)") {
		g.leaked++
	}
	s := g.snaps[ts]
	if s == nil {
		s = &snapStat{}
		g.snaps[ts] = s
	}
	s.count++
	s.maxGoid = max(s.maxGoid, goid)
	d.totals[ts]++
	if w := row.wait; w > g.maxWait || w == g.maxWait && w > 0 && ts > g.maxWaitTS {
		g.maxWait, g.maxWaitTS = w, ts
	}
	if g.creatorStackID == 0 {
		g.creatorStackID = row.creatorStack
	}
	if g.labels == "" {
		if l := row.labels; l != "" {
			g.labels = in.Get(l)
		}
	}
	cg := row.creatorGoid
	if cg != 0 && len(g.creatorGoids) < goidSample {
		g.creatorGoids[cg]++
	}
	if ts > g.goidsTS {
		g.goidsTS = ts
		g.goids, g.spread, g.spreadHi = g.goids[:0], g.spread[:0], -1
	}
	if ts == g.goidsTS {
		g.spread, g.spreadHi = keepSpread(g.spread, g.spreadHi, goid)
		if len(g.goids) < goidSample {
			g.goids = append(g.goids, goid)
		}
	}
	if cg != 0 {
		d.creators[cg] = true
	}
}

// survivalPass counts, per group and snapshot, the members that were
// already there (by goid) in the snapshot before; without all it also
// notes the creators' own rows.
func (d *dumpData) survivalPass(b *bundle.Bundle, mem memory.Allocator, all bool) error {
	prev := map[int64]int64{}
	for i := 1; i < len(d.snapshots); i++ {
		prev[d.snapshots[i]] = d.snapshots[i-1]
	}
	return tables.ReadGoroutines(b, mem, func(c tables.GoroutineCols) {
		tsCol, goidCol := c.SnapshotTS, c.Goid
		stateCol, stackCol, cfCol := c.State, c.Stack, c.CreatorFunction
		var last *rawGroup
		cgCol := c.CreatorGoid
		for r := 0; r < c.Rows; r++ {
			ts := tsCol(r)
			if d.cut[ts] != nil {
				continue
			}
			p, ok := prev[ts]
			goid := goidCol(r)
			creatorRow := !all && d.creators[goid]
			if !ok && !creatorRow {
				continue
			}
			rawState, stack, creator := stateCol(r), stackCol(r), cfCol(r)
			g := last
			if g == nil || g.key.stackID != stack || g.rawState != rawState || g.key.creator != creator {
				g = d.groups[groupKey{state: normState(rawState), stackID: stack, creator: creator}]
				last = g
			}
			if g == nil {
				continue
			}
			if creatorRow {
				d.note(goid, cgCol(r), g, stack, ts)
			}
			if ps := g.snaps[p]; ok && ps != nil && goid <= ps.maxGoid {
				g.snaps[ts].survived++
			}
		}
	})
}

// note remembers one sighting of a goroutine.
func (d *dumpData) note(goid, creator int64, g *rawGroup, stack, ts int64) {
	gr := d.goroutine[goid]
	if gr == nil {
		gr = &goRec{creator: creator, creatorFn: g.key.creator, creatorStack: g.creatorStackID, stackID: stack, firstTS: ts, lastTS: ts}
		d.goroutine[goid] = gr
	}
	if ts > gr.lastTS {
		gr.lastTS, gr.stackID = ts, stack
	}
	gr.firstTS = min(gr.firstTS, ts)
}

// keepSpread adds goid to a sample of at most spreadSample goids, those
// with the lowest hash: the same uniform sample whatever the row order.
// hi is the index of the sample's highest hash once it is full (-1
// before); it is returned with the sample, so a goid that hashes higher
// costs one comparison.
func keepSpread(s []int64, hi int, goid int64) ([]int64, int) {
	if len(s) < spreadSample {
		return append(s, goid), -1
	}
	if hi < 0 {
		hi = highestMix(s)
	}
	if mix(goid) < mix(s[hi]) {
		s[hi] = goid
		hi = highestMix(s)
	}
	return s, hi
}

// highestMix returns the index of the first goid of s with the highest
// hash.
func highestMix(s []int64) int {
	hi := 0
	for i, g := range s {
		if mix(g) > mix(s[hi]) {
			hi = i
		}
	}
	return hi
}

// mix is splitmix64's finaliser: a fixed, well-spread hash of a goid.
func mix(x int64) uint64 {
	z := uint64(x) + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// normState strips decorations the runtime adds to a wait reason:
// " (leaked)", " (scan)", " (durable)", ", locked to thread", ", N minutes".
func normState(s string) string {
	if i := strings.IndexByte(s, ','); i >= 0 {
		s = s[:i]
	}
	for _, suf := range []string{" (scan)", " (leaked)", " (durable)"} {
		s = strings.TrimSuffix(s, suf)
	}
	return strings.TrimSpace(s)
}

// sigFrames are the calls a goroutine sending a signal is in, with the
// position of the signal among their printed words (-1: not printed as a
// word, an interface).
var sigFrames = map[string]int{
	"syscall.Kill":                          1,
	"syscall.Tgkill":                        2,
	"os.(*Process).pidfdSendSignal":         1,
	"internal/syscall/unix.PidFDSendSignal": 1,
	"os.(*Process).signal":                  -1,
	"os.(*Process).Signal":                  -1,
}

// sigQuit is SIGQUIT's number on the platforms Go prints tracebacks for.
const sigQuit = 3

// dumpingFrame reports, for one frame's printed arguments, whether the
// goroutine is sending the process the signal that makes the runtime
// print its traceback: SIGQUIT when the signal is printed, any signal
// when it is not (the traceback was printed meanwhile). It returns the
// basis, "" when the frame is no such call.
func dumpingFrame(fn, args string) string {
	pos, ok := sigFrames[fn]
	if !ok {
		return ""
	}
	if pos < 0 {
		return fmt.Sprintf("it is in %s as the dump is taken", fn)
	}
	if v, ok := tables.WordAt(args, pos); ok {
		if v != sigQuit {
			return ""
		}
		return fmt.Sprintf("it is in %s sending signal %d (SIGQUIT)", fn, v)
	}
	return fmt.Sprintf("it is in %s as the dump is taken", fn)
}

// isDumpingStack reports the goroutines that take the dump rather than
// do the program's work, by their frames alone: the test runner's alarm
// (testing.(*M).startAlarm's timer, which panics with "test timed out"
// and prints every goroutine).
func isDumpingStack(frames []Frame) bool {
	for _, f := range frames {
		if f.Function == "testing.(*M).startAlarm.func1" {
			return true
		}
	}
	return false
}

// allAsleepMessage is the runtime's fatal error when its deadlock check
// (checkdead) finds no goroutine able to run, no thread in a system call
// or in the network poller, and no timer pending on any P. Only then
// does it print every goroutine and exit, so in that traceback a select
// or receive has no timer case that could still fire, whatever its
// source says or does not say.
const allAsleepMessage = "all goroutines are asleep - deadlock!"

// allAsleepCrash names the dump of snapshot ts whose traceback follows
// the runtime's all-asleep fatal error; "" when there is none.
func allAsleepCrash(m bundle.Manifest, ts int64) string {
	for _, a := range m.Artifacts {
		if a.Kind != bundle.SourceDump || !strings.HasPrefix(a.Fatal, allAsleepMessage) {
			continue
		}
		if at := a.Time; (at.IsZero() && ts == 0) || (!at.IsZero() && at.UnixNano() == ts) {
			return a.Name
		}
	}
	return ""
}
