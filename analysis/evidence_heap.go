package analysis

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/leakscope/leakscope/analysis/flame"
	"github.com/leakscope/leakscope/analysis/internal/tables"

	"github.com/leakscope/leakscope/internal/format"
)

// maxGrowers bounds the growers a report lists.
const maxGrowers = 20

// defaultMemProfileRate is the runtime's heap sampling period, assumed for
// profiles that do not state theirs.
const defaultMemProfileRate = 512 << 10

// heapStack is one allocation stack's in-use bytes across heap snapshots.
// Goroutine groups are credited with the heap their code allocates stack by
// stack (see attributeHeap); the report shows heap by allocating line
// ([heapSite]).
type heapStack struct {
	id      int64
	frames  []Frame
	funcs   []string
	loc     Frame
	bytes   []float64 // per heap snapshot
	objs    []float64
	growing bool // rose from the first snapshot to the last, on a rising fit
}

// last is the stack's bytes in the last snapshot.
func (h *heapStack) last() int64 { return int64(h.bytes[len(h.bytes)-1]) }

// heapStacks reads every heap stack's series, leaving out the capture's
// own allocations in the target ([ownStack]: profile and trace writers,
// their compressors, the pprof handlers), as the flame graph and the
// heap diff leave them out.
func heapStacks(p *tables.ProfileData, st *stackTable) []*heapStack {
	ts := p.HeapTS
	if len(ts) < 2 {
		return nil
	}
	idx := map[int64]int{}
	for i, t := range ts {
		idx[t] = i
	}
	var out []*heapStack
	for stack, m := range p.Heap {
		frames := st.framesOf(stack)
		funcs := functions(frames)
		if ownStack(frames) {
			continue
		}
		h := &heapStack{id: stack, frames: frames, funcs: funcs, loc: heapLocation(frames),
			bytes: make([]float64, len(ts)), objs: make([]float64, len(ts))}
		for t, v := range m {
			h.bytes[idx[t]] = float64(v[0])
			h.objs[idx[t]] = float64(v[1])
		}
		h.growing = h.bytes[len(ts)-1] > h.bytes[0] && fitSeries(ts, h.bytes).Slope > 0
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool {
		di, dj := out[i].bytes[len(ts)-1]-out[i].bytes[0], out[j].bytes[len(ts)-1]-out[j].bytes[0]
		if di != dj {
			return di > dj
		}
		return out[i].id < out[j].id
	})
	return out
}

// heapLocation is the line an allocation is reported at: the first frame
// outside the standard library, or for goroutine structures the runtime
// frame that makes them.
func heapLocation(frames []Frame) Frame {
	loc, _ := locationFrame(frames)
	funcs := functions(frames)
	if runtimeOnly(funcs) && goroutineCreation(funcs) {
		for _, f := range frames {
			if f.Function == "runtime.malg" || f.Function == "runtime.newproc1" {
				return f // goroutine structures, not an allocation of user code
			}
		}
	}
	return loc
}

// growing reports whether a site's bytes rose on a rising fit.
func (hs *heapSite) growing() bool { return hs.rise > 0 && hs.grower.Fit.Slope > 0 }

// growingStacks returns the stacks that grow, largest growth first.
func growingStacks(all []*heapStack) []*heapStack {
	var out []*heapStack
	for _, h := range all {
		if h.growing {
			out = append(out, h)
		}
	}
	return out
}

// heapSite is one allocating line, over every call path to it, for one
// goroutine suspect (the stacks attributed to it) or for none. It is the
// unit of the report's heap figures: a grower row and a heap suspect show
// exactly its values.
type heapSite struct {
	grower HeapGrower
	owner  *candidate // nil: no goroutine group explains it
	funcs  []string   // of its largest stack
	frames []Frame
	rise   float64
	weight float64 // bytes one heap sample stands for at this site
	conf   float64
	score  float64
}

// siteKey of a heap stack: its allocating line.
func heapLineKey(f Frame) string { return fmt.Sprintf("%s\x00%s:%d", f.Function, f.File, f.Line) }

// heapSites sums the stacks of each allocating line (per owner) into one
// series, fits it once and scores it against the floor its sampling rate
// and noise allow. It returns every site, largest rise first.
func heapSites(p *tables.ProfileData, stacks []*heapStack, owner map[*heapStack]*candidate, periods map[int64]int64, src *sourceCode) []*heapSite {
	ts := p.HeapTS
	if len(ts) < 2 {
		return nil
	}
	type key struct {
		line  string
		owner *candidate
	}
	by := map[key]*heapSite{}
	var order []key
	members := map[key][]*heapStack{}
	for _, h := range stacks {
		k := key{heapLineKey(h.loc), owner[h]}
		if by[k] == nil {
			by[k] = &heapSite{owner: k.owner}
			order = append(order, k)
		}
		members[k] = append(members[k], h)
	}
	period := samplingPeriod(ts, periods)
	var out []*heapSite
	for _, k := range order {
		hs := by[k]
		hs.build(ts, members[k], period, src)
		out = append(out, hs)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].rise != out[j].rise {
			return out[i].rise > out[j].rise
		}
		return out[i].grower.StackID < out[j].grower.StackID
	})
	return out
}

// build sums the site's stacks and computes every figure of the site once.
func (hs *heapSite) build(ts []int64, stacks []*heapStack, period int64, src *sourceCode) {
	n := len(ts)
	bytes, objs := make([]float64, n), make([]float64, n)
	rep := stacks[0]
	var ids []int64
	for _, h := range stacks {
		for i := range ts {
			bytes[i] += h.bytes[i]
			objs[i] += h.objs[i]
		}
		if h.last() > rep.last() {
			rep = h
		}
		ids = append(ids, h.id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	hs.funcs, hs.frames = rep.funcs, rep.frames
	// Heap sites are fitted over every snapshot: a site at 0 bytes was not
	// absent, only not sampled yet.
	f := fitSeries(ts, bytes)
	rng := seriesRange(ts, bytes)
	rng.Floor, rng.FloorBasis = heapFloor(ts, bytes, objectSize(bytes, objs), period)
	hs.weight = sampleWeight(objectSize(bytes, objs), period)
	hs.rise = rng.Rise
	perMin := round(f.Slope, 1)
	if rng.Trend != TrendSteady {
		perMin = 0 // a level change, not a rate
	}
	loc := rep.loc
	hs.grower = HeapGrower{
		StackID: rep.id, Location: loc.Function, File: loc.File, Line: loc.Line, Stack: rep.frames,
		InuseBytes: int64(bytes[n-1]), InuseObjects: int64(objs[n-1]),
		BytesPerMin: perMin, ObjectsPerMin: round(fitSeries(ts, objs).Slope, 2), Fit: f,
		CountAt: tsTime(ts[n-1]), Range: &rng, Object: heapObject(rep.frames, src, loc), StackIDs: ids,
		Paths: callPaths(stacks),
	}
	for i, t := range ts {
		hs.grower.Series = append(hs.grower.Series, Point{TS: time.Unix(0, t).UTC(), Value: bytes[i]})
	}
	hs.conf, hs.score = heapScore(f, rng)
}

// objectSize is the mean size of a site's objects at its peak (the heap
// profile scales bytes and objects alike, so their ratio is unbiased), or
// 0 when no snapshot has objects.
func objectSize(bytes, objs []float64) float64 {
	at := -1
	for i := range bytes {
		if objs[i] > 0 && (at < 0 || bytes[i] > bytes[at]) {
			at = i
		}
	}
	if at < 0 {
		return 0
	}
	return bytes[at] / objs[at]
}

// seriesRange describes a series over its snapshots: rise, steps up and
// the trend they make.
func seriesRange(ts []int64, v []float64) Range {
	n := len(v)
	r := Range{From: tsTime(ts[0]), To: tsTime(ts[n-1]), Points: n, Rise: v[n-1] - v[0]}
	for i := 1; i < n; i++ {
		if v[i] > v[i-1] {
			r.Steps++
		}
	}
	switch {
	case r.Rise < 0:
		r.Trend = TrendFalling
	case r.Rise == 0 || r.Steps == 0:
		r.Trend = TrendFlat
	case r.Steps == 1:
		r.Trend = TrendStep
	default:
		r.Trend = TrendSteady
	}
	return r
}

// heapSigmas is how many standard errors of sampling the fitted rise of a
// heap site must clear. At two, a steady window of 16 × 64 KiB at the
// default rate reads as growth in about 1 of 100 captures of 3–6
// snapshots (binomial model). The other side of that bar: a site that
// rose by 2.6 MB of 8 KiB objects over 5 snapshots (five samples) has a
// floor of 2.2 MB, so a leak of a handful of samples is found in some
// captures and not others; samples/cache-pin plants about 30.
const heapSigmas = 2.0

// heapFloor is the smallest rise of a heap series taken as growth, and
// why. A heap profile records an allocation of size s with probability
// p = 1 − exp(−s/rate) and scales each record up to s/p bytes (a sample's
// weight), so a site holding v bytes reads as a binomial count of such
// weights: its variance is about v·(s/p)·(1−p) (≈ v·rate for small
// objects; for 64 KiB objects at the default rate each record is worth
// 557 KB, and 1 MiB of them is two records more or less). The floor is
// the largest of two samples' weight, heapSigmas standard errors of the
// rise the fit gives over the snapshots (each snapshot's variance from
// its own bytes, at least one sample's weight), and twice the largest
// fall the series shows (its measured noise).
func heapFloor(ts []int64, v []float64, objSize float64, period int64) (float64, string) {
	rate := float64(period)
	if objSize <= 0 {
		objSize = rate
	}
	p := -math.Expm1(-objSize / rate)
	weight := sampleWeight(objSize, period)
	fall := 0.0
	for i := 1; i < len(v); i++ {
		fall = math.Max(fall, v[i-1]-v[i])
	}
	steps, noise := 2*weight, 2*fall
	sampling := heapSigmas * fittedRiseError(ts, v, weight, p)
	floor := math.Max(steps, math.Max(sampling, noise))
	sample := fmt.Sprintf("MemProfileRate %s, objects of %s: one sample weighs %s", format.Bytes(rate), format.Bytes(objSize), format.Bytes(weight))
	why := "2 samples"
	switch floor {
	case sampling:
		why = fmt.Sprintf("%.0f standard errors of the fitted rise from sampling", heapSigmas)
	case noise:
		why = fmt.Sprintf("twice the largest fall the series shows (%s)", format.Bytes(fall))
	}
	why += "; " + sample
	return round(floor, 0), why
}

// fittedRiseError is the standard error, from sampling alone, of the rise
// a least-squares line through (ts, v) gives from the first snapshot to
// the last: each snapshot's bytes are a count of samples of the weight,
// with variance max(v, weight)·weight·(1−p).
func fittedRiseError(ts []int64, v []float64, weight, p float64) float64 {
	n := len(ts)
	if n < 2 {
		return 0
	}
	mean := 0.0
	for _, t := range ts {
		mean += float64(t - ts[0])
	}
	mean /= float64(n)
	var sxx, num float64
	for i, t := range ts {
		d := float64(t-ts[0]) - mean
		sxx += d * d
		num += d * d * math.Max(v[i], weight) * weight * (1 - p)
	}
	if sxx == 0 {
		return 0
	}
	return float64(ts[n-1]-ts[0]) * math.Sqrt(num) / sxx
}

// samplingPeriod is the largest MemProfileRate of the heap snapshots (the
// default when a profile states none).
func samplingPeriod(ts []int64, periods map[int64]int64) int64 {
	var p int64
	for _, t := range ts {
		p = max(p, periods[t])
	}
	if p <= 0 {
		return defaultMemProfileRate
	}
	return p
}

// heapObject names what an allocation stack makes: what keeps growing
// when the site grows. It reads the runtime frames between the allocator
// and the first frame outside the standard library when the stack has
// them (the runtime's own goroutine structures, eBPF stacks); heap
// profiles drop them, so otherwise it reads the allocating line kept in
// the bundle (cache[key] = v writes a map, append grows a slice).
func heapObject(frames []Frame, src *sourceCode, loc Frame) string {
	var rt []string
	for _, f := range frames {
		if !isStd(f) {
			break
		}
		rt = append(rt, f.Function)
	}
	for _, fn := range rt {
		if strings.Contains(fn, "mapassign") || strings.HasPrefix(fn, "internal/runtime/maps.") || fn == "runtime.hashGrow" || fn == "runtime.makeBucketArray" || strings.HasPrefix(fn, "runtime.makemap") {
			return "map"
		}
	}
	for _, fn := range rt {
		switch {
		case fn == "runtime.growslice":
			return "slice grown by append"
		case fn == "runtime.makeslice" || fn == "runtime.makeslicecopy":
			return "slices made with make"
		case fn == "runtime.makechan":
			return "channel buffers"
		case fn == "runtime.malg" || fn == "runtime.newproc1":
			return "goroutine stacks"
		case strings.HasPrefix(fn, "runtime.concatstring") || strings.HasPrefix(fn, "runtime.rawstring") || fn == "runtime.slicebytetostring":
			return "strings"
		case strings.HasPrefix(fn, "bytes.(*Buffer)") || fn == "bytes.growSlice":
			return "bytes.Buffer contents"
		case strings.HasPrefix(fn, "strings.(*Builder)"):
			return "strings.Builder contents"
		case fn == "runtime.newobject":
			return "new objects"
		}
	}
	return src.allocObject(loc)
}

// heapTotals sums inuse bytes per heap snapshot.
func heapTotals(p *tables.ProfileData) []Point {
	sum := map[int64]float64{}
	for _, m := range p.Heap {
		for t, v := range m {
			sum[t] += float64(v[0])
		}
	}
	out := make([]Point, 0, len(p.HeapTS))
	for _, t := range p.HeapTS {
		out = append(out, Point{TS: time.Unix(0, t).UTC(), Value: sum[t]})
	}
	return out
}

// diffHeap compares two heap snapshots by stack, largest growth first.
func diffHeap(p *tables.ProfileData, st *stackTable, base, target int64, limit int) (out []HeapDiffEntry, own int64) {
	for stack, m := range p.Heap {
		a, b := m[base], m[target]
		if a == b {
			continue
		}
		// The capture's own allocations (profile writers, the trace
		// writer, their compressors) are left out, as the flame graph
		// leaves them out: they are not the program's.
		if ownStack(st.framesOf(stack)) {
			own += b[0] - a[0]
			continue
		}
		loc, _ := locationFrame(st.framesOf(stack))
		out = append(out, HeapDiffEntry{StackID: stack, Location: loc.Function, BaseBytes: a[0], Bytes: b[0],
			DeltaBytes: b[0] - a[0], DeltaObjects: b[1] - a[1]})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].DeltaBytes != out[j].DeltaBytes {
			return out[i].DeltaBytes > out[j].DeltaBytes
		}
		return out[i].StackID < out[j].StackID
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	for i := range out {
		out[i].Stack = st.framesOf(out[i].StackID)
	}
	return out, own
}

// ownStack reports whether a stack runs the capture's own machinery in
// the target ([flame.Own]).
func ownStack(frames []Frame) bool {
	for _, f := range frames {
		if flame.Own(f.Function) {
			return true
		}
	}
	return false
}

// sampleWeight is the bytes one heap profile sample of objects of
// objSize stands for at sampling period: s/p with p = 1 − exp(−s/rate)
// (the period itself for objects unknown or much smaller).
func sampleWeight(objSize float64, period int64) float64 {
	rate := float64(period)
	if objSize <= 0 {
		objSize = rate
	}
	return objSize / -math.Expm1(-objSize/rate)
}

// runtimeOnly reports whether every frame is in the runtime: nothing a
// user can act on.
func runtimeOnly(funcs []string) bool {
	for _, fn := range funcs {
		if !strings.HasPrefix(fn, "runtime.") && !strings.HasPrefix(fn, "internal/runtime/") {
			return false
		}
	}
	return true
}

// goroutineCreation reports whether an allocation stack is the runtime
// making a new goroutine.
func goroutineCreation(funcs []string) bool {
	for _, fn := range funcs {
		if fn == "runtime.malg" || fn == "runtime.newproc1" {
			return true
		}
	}
	return false
}

// heapScore weighs a growing heap site as the goroutine score does: confidence from the
// fit, impact from the growth rate in bytes per minute. A rise below the
// site's floor (sampling error and measured noise, see heapFloor) is no
// evidence at all.
//
// Heap series are not discounted for a flat end: heap profiles sample one
// allocation per MemProfileRate bytes, so a steady leak shows up in steps.
// A series that rose once and stayed level (a warm-up, a one-off
// allocation) is weak evidence and its impact is the rise, not a rate.
func heapScore(f Fit, r Range) (conf, score float64) {
	if f.Points < 3 || f.Slope <= 0 || r.Rise <= 0 || r.Rise < r.Floor {
		return 0, 0
	}
	conf = clamp01(f.R2) * f.Monotone
	if f.R2 < 0.5 || f.Monotone < 0.6 {
		conf *= 0.5
	}
	impact := clamp01(math.Log10(1+f.Slope/1024) / 5)
	if r.Trend == TrendStep {
		conf *= 0.4
		impact = clamp01(math.Log10(1+r.Rise/1024) / 5)
	}
	return conf, round(100*conf*(0.4+0.6*impact), 1)
}

// callPaths names, for an allocating line reached by several stacks,
// where each stack's call path parts from the others: the frame at which
// it parts from the stack nearest it (the one sharing the most frames
// from the leaf), with its line when both have the same function there;
// largest stack first, each name once. A single stack has no paths to
// tell apart: nil.
func callPaths(stacks []*heapStack) []string {
	if len(stacks) < 2 {
		return nil
	}
	byBytes := append([]*heapStack(nil), stacks...)
	sort.SliceStable(byBytes, func(i, j int) bool {
		if a, b := byBytes[i].last(), byBytes[j].last(); a != b {
			return a > b
		}
		return byBytes[i].id < byBytes[j].id
	})
	var out []string
	seen := map[string]bool{}
	for _, h := range byBytes {
		name := partingFrame(h, byBytes)
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// partingFrame names the frame of h at which it parts from the stacks of
// others nearest it; with its line when one of the nearest has the same
// function there.
func partingFrame(h *heapStack, others []*heapStack) string {
	at := -1
	for _, g := range others {
		if g != h {
			at = max(at, sharedFrames(h.frames, g.frames))
		}
	}
	if at >= len(h.frames) {
		return "(the allocating frame itself)"
	}
	f := h.frames[at]
	for _, g := range others {
		if g != h && sharedFrames(h.frames, g.frames) == at && at < len(g.frames) && g.frames[at].Function == f.Function {
			return fmt.Sprintf("%s:%d", f.Function, f.Line) // the paths part at a line
		}
	}
	return f.Function
}

// sharedFrames is how many frames, from the leaf, a and b have alike
// (function, file and line).
func sharedFrames(a, b []Frame) int {
	n := 0
	for n < len(a) && n < len(b) && a[n].Function == b[n].Function && a[n].File == b[n].File && a[n].Line == b[n].Line {
		n++
	}
	return n
}
