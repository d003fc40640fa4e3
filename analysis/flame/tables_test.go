package flame

import (
	"bufio"
	"bytes"
	"math"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/leakscope/leakscope/ingest/schema"
)

// thisPackage is the import path of the test's own functions.
const thisPackage = "github.com/leakscope/leakscope/analysis/flame"

// goPprof runs `go tool pprof` with the flags that keep every node and
// edge, and returns its output.
func goPprof(t *testing.T, args ...string) string {
	t.Helper()
	full := append([]string{"tool", "pprof", "-symbolize=none", "-nodecount=1000000", "-nodefraction=0", "-edgefraction=0"}, args...)
	cmd := exec.Command("go", full...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(full, " "), err, stderr.String())
	}
	return string(out)
}

// pprofPercent parses "12.34%".
func pprofPercent(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil {
		t.Fatalf("pprof percentage %q: %v", s, err)
	}
	return v
}

// samePercent compares a share with pprof's printed one (two decimals).
func samePercent(got, printed float64) bool {
	return math.Abs(got-printed) <= 0.0051
}

// TestTopTableMatchesPprof: flat%, cum% and both sort orders are pprof's
// -top and -top -cum, on real profiles, plain and focused (shares of the
// whole profile, as pprof takes them).
func TestTopTableMatchesPprof(t *testing.T) {
	rp, st, mem := stacksOfThisProcess(t)
	cases := []struct {
		key, profile, value, pprofType string
		focus                          string
	}{
		{"heap2", schema.ProfileHeap, schema.ColInuseSpace, "inuse_space", ""},
		{"heap2", schema.ProfileHeap, schema.ColAllocObjects, "alloc_objects", "flameLeak"},
		{"cpu", schema.ProfileCPU, schema.ColCPUNanosecs, "cpu", ""},
		{"goroutine", schema.ProfileGoroutine, schema.ColCount, "goroutine", ""},
	}
	for _, c := range cases {
		t.Run(c.key+"/"+c.value+"/"+c.focus, func(t *testing.T) {
			q := Query{Profile: c.profile, Value: c.value, Snapshot: rp.ts[c.key]}
			args := []string{"-top", "-sample_index=" + c.pprofType, unitFlag(c.value)}
			if c.focus != "" {
				q.Focus = []string{c.focus}
				args = append(args, "-focus="+c.focus)
			}
			tree, err := st.Build(rp.bundle, mem, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, sortBy := range []string{SortFlat, SortCum} {
				tt, err := NewTopTable(tree, sortBy)
				if err != nil {
					t.Fatal(err)
				}
				a := args
				if sortBy == SortCum {
					a = append(a, "-cum")
				}
				want := pprofTopRows(t, goPprof(t, append(a, rp.files[c.key])...))
				got := map[string]TopRow{}
				for _, r := range tt.Rows {
					got[r.Function] = r
				}
				n := 0
				for _, w := range want {
					g, ok := got[w.name]
					if !ok || g.Flat != w.flat || g.Cum != w.cum || !samePercent(g.FlatPct, w.flatPct) || !samePercent(g.CumPct, w.cumPct) {
						t.Errorf("sort %s: %s: ours %+v, pprof %+v", sortBy, w.name, g, w)
					}
					n++
				}
				if n < 3 {
					t.Fatalf("pprof listed only %d functions", n)
				}
				// Same order wherever pprof's sort key differs (ties are
				// ordered by name in both, but pprof breaks flat ties by cum).
				key := func(r TopRow) int64 { return abs(r.Flat) }
				if sortBy == SortCum {
					key = func(r TopRow) int64 { return abs(r.Cum) }
				}
				for i := 1; i < len(tt.Rows); i++ {
					if key(tt.Rows[i]) > key(tt.Rows[i-1]) {
						t.Fatalf("sort %s: row %d (%s) above row %d (%s)", sortBy, i, tt.Rows[i].Function, i-1, tt.Rows[i-1].Function)
					}
				}
			}
		})
	}
	if _, err := NewTopTable(&Tree{Root: &Node{Name: RootName}}, "size"); err == nil {
		t.Error("sort by an unknown key accepted")
	}
}

type pprofTopRow struct {
	name            string
	flat, cum       int64
	flatPct, cumPct float64
}

func pprofTopRows(t *testing.T, out string) []pprofTopRow {
	t.Helper()
	var rows []pprofTopRow
	header := false
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if !header {
			header = len(f) >= 5 && f[0] == "flat" && f[3] == "cum"
			continue
		}
		name := strings.TrimSuffix(strings.TrimSuffix(strings.Join(f[5:], " "), " (inline)"), " (partial-inline)")
		rows = append(rows, pprofTopRow{name, pprofNumber(t, f[0]), pprofNumber(t, f[3]), pprofPercent(t, f[1]), pprofPercent(t, f[4])})
	}
	return rows
}

// pprofPeek is one function's block of `go tool pprof -peek`.
type pprofPeek struct {
	flat, cum        int64
	callers, callees map[string]int64
	callerPct        map[string]float64
}

func parsePprofPeek(t *testing.T, out, function string) pprofPeek {
	t.Helper()
	p := pprofPeek{callers: map[string]int64{}, callees: map[string]int64{}, callerPct: map[string]float64{}}
	seenNode := false
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		left, right, ok := strings.Cut(sc.Text(), "|")
		f := strings.Fields(left)
		if !ok || len(f) == 0 || f[0] == "flat" || strings.HasPrefix(f[0], "---") {
			continue
		}
		name := strings.TrimSuffix(strings.TrimSpace(right), " (inline)")
		switch {
		case len(f) == 5 && name == function:
			seenNode = true
			p.flat, p.cum = pprofNumber(t, f[0]), pprofNumber(t, f[3])
		case len(f) == 2 && !seenNode:
			p.callers[name] = pprofNumber(t, f[0])
			p.callerPct[name] = pprofPercent(t, f[1])
		case len(f) == 2:
			p.callees[name] = pprofNumber(t, f[0])
		}
	}
	if !seenNode {
		t.Fatalf("pprof -peek has no block for %s:\n%s", function, out)
	}
	return p
}

// TestPeekMatchesPprof: the callers and callees of a function and their
// edge weights are pprof's -peek, on real profiles.
func TestPeekMatchesPprof(t *testing.T) {
	rp, st, mem := stacksOfThisProcess(t)
	cases := []struct{ key, profile, value, pprofType, function string }{
		{"heap2", schema.ProfileHeap, schema.ColInuseSpace, "inuse_space", thisPackage + ".flameLeakAlpha"},
		{"heap2", schema.ProfileHeap, schema.ColInuseSpace, "inuse_space", "runtime.mallocgc"},
		{"goroutine", schema.ProfileGoroutine, schema.ColCount, "goroutine", "runtime.gopark"},
		{"cpu", schema.ProfileCPU, schema.ColCPUNanosecs, "cpu", thisPackage + ".flameSpin"},
	}
	for _, c := range cases {
		t.Run(c.key+"/"+c.function, func(t *testing.T) {
			tree, err := st.Build(rp.bundle, mem, Query{Profile: c.profile, Value: c.value, Snapshot: rp.ts[c.key]})
			if err != nil {
				t.Fatal(err)
			}
			pk, err := Peek(tree, c.function)
			if err != nil {
				if c.function == "runtime.mallocgc" {
					t.Skip("no heap sample holds runtime.mallocgc in this build")
				}
				t.Fatal(err)
			}
			want := parsePprofPeek(t, goPprof(t, "-peek=^"+regexp.QuoteMeta(c.function)+"$", "-sample_index="+c.pprofType, unitFlag(c.value), rp.files[c.key]), c.function)
			if pk.Flat != want.flat || pk.Cum != want.cum {
				t.Errorf("flat/cum %d/%d, pprof %d/%d", pk.Flat, pk.Cum, want.flat, want.cum)
			}
			check := func(dir string, got []Edge, w map[string]int64) {
				if len(got) != len(w) {
					t.Errorf("%s: %d edges, pprof %d: %+v vs %v", dir, len(got), len(w), got, w)
				}
				for _, e := range got {
					if w[e.Function] != e.Value {
						t.Errorf("%s %s: %d, pprof %d", dir, e.Function, e.Value, w[e.Function])
					}
				}
			}
			check("callers", pk.Callers, want.callers)
			check("callees", pk.Callees, want.callees)
			for _, e := range pk.Callers {
				if !samePercent(e.Pct, want.callerPct[e.Function]) {
					t.Errorf("caller %s: %.2f%%, pprof %.2f%%", e.Function, e.Pct, want.callerPct[e.Function])
				}
			}
			if len(pk.Callers)+len(pk.Callees) == 0 {
				t.Errorf("peek of %s has no edges at all", c.function)
			}
		})
	}
	tree, _ := st.Build(rp.bundle, mem, Query{Profile: schema.ProfileHeap, Snapshot: rp.ts["heap2"]})
	if _, err := Peek(tree, "no.such"); err == nil {
		t.Error("peek of a missing function succeeded")
	}
}

var listLine = regexp.MustCompile(`^\s*(\S+)\s+(\S+)\s+(\d+):`)

// TestLinesMatchPprof: flat and cum per source line are pprof's -list.
func TestLinesMatchPprof(t *testing.T) {
	rp, st, mem := stacksOfThisProcess(t)
	cases := []struct{ key, profile, value, pprofType, function string }{
		{"heap2", schema.ProfileHeap, schema.ColInuseSpace, "inuse_space", thisPackage + ".flameLeakAlpha"},
		{"heap2", schema.ProfileHeap, schema.ColInuseSpace, "inuse_space", thisPackage + ".writeHeapProfiles"},
		{"cpu", schema.ProfileCPU, schema.ColCPUNanosecs, "cpu", thisPackage + ".flameSpin"},
		{"goroutine", schema.ProfileGoroutine, schema.ColCount, "goroutine", thisPackage + ".writeGoroutineProfile.func1"},
	}
	for _, c := range cases {
		t.Run(c.key+"/"+c.function, func(t *testing.T) {
			lt, err := st.Lines(rp.bundle, mem, Query{Profile: c.profile, Value: c.value, Snapshot: rp.ts[c.key]}, c.function)
			if err != nil {
				t.Fatal(err)
			}
			out := goPprof(t, "-list=^"+regexp.QuoteMeta(c.function)+"$", "-sample_index="+c.pprofType, unitFlag(c.value), rp.files[c.key])
			want := map[int64][2]int64{}
			num := func(s string) int64 {
				if s == "." {
					return 0
				}
				return pprofNumber(t, s)
			}
			for _, line := range strings.Split(out, "\n") {
				if m := listLine.FindStringSubmatch(line); m != nil {
					n, _ := strconv.ParseInt(m[3], 10, 64)
					if v := [2]int64{num(m[1]), num(m[2])}; v != [2]int64{} {
						want[n] = v
					}
				}
			}
			if len(want) == 0 {
				t.Fatalf("pprof -list shows no line with a value:\n%s", out)
			}
			got := map[int64][2]int64{}
			for _, r := range lt.Rows {
				got[r.Line] = [2]int64{r.Flat, r.Cum}
			}
			for line, w := range want {
				if got[line] != w {
					t.Errorf("line %d: flat/cum %v, pprof %v", line, got[line], w)
				}
			}
			for line, g := range got {
				if _, ok := want[line]; !ok && g != [2]int64{} {
					t.Errorf("line %d (%v) is not in pprof's list", line, g)
				}
			}
			top, _ := st.Build(rp.bundle, mem, Query{Profile: c.profile, Value: c.value, Snapshot: rp.ts[c.key]})
			for _, f := range Top(top) {
				if f.Name == c.function && (f.Flat != lt.Flat || f.Cum != lt.Cum) {
					t.Errorf("function flat/cum %d/%d, top says %d/%d", lt.Flat, lt.Cum, f.Flat, f.Cum)
				}
			}
		})
	}
	if _, err := st.Lines(rp.bundle, mem, Query{Profile: schema.ProfileHeap}, "no.such"); err == nil {
		t.Error("lines of a missing function succeeded")
	}
}

// TestHideOwnMatchesPprofIgnore: leaving out the capture's own machinery
// is pprof's -ignore of those packages; what is left out is said; marked
// nodes hold only such stacks.
func TestHideOwnMatchesPprofIgnore(t *testing.T) {
	rp, st, mem := stacksOfThisProcess(t)
	// The heap profiles were written with MemProfileRate=1, so writing
	// the first one shows in the second: the capture's own allocations.
	q := Query{Profile: schema.ProfileHeap, Value: schema.ColAllocSpace, Snapshot: rp.ts["heap2"]}
	all, err := st.Build(rp.bundle, mem, q)
	if err != nil {
		t.Fatal(err)
	}
	q.HideOwn = true
	hidden, err := st.Build(rp.bundle, mem, q)
	if err != nil {
		t.Fatal(err)
	}
	if hidden.OwnHidden == nil || hidden.OwnHidden.Total <= 0 {
		t.Fatalf("nothing of runtime/pprof left out: %+v", hidden.OwnHidden)
	}
	if hidden.Total()+hidden.OwnHidden.Total != all.Total() || hidden.PercentOf != all.PercentOf {
		t.Errorf("kept %d + left out %d != all %d (percent of %d vs %d)", hidden.Total(), hidden.OwnHidden.Total, all.Total(), hidden.PercentOf, all.PercentOf)
	}
	if all.OwnHidden != nil {
		t.Errorf("a tree without HideOwn says it hid %+v", all.OwnHidden)
	}
	// pprof's -ignore of exactly the functions Own names leaves the same.
	var owned []string
	all.Walk(func(n *Node, _ int) bool {
		if Own(n.Name) && !slices.Contains(owned, regexp.QuoteMeta(n.Name)) {
			owned = append(owned, regexp.QuoteMeta(n.Name))
		}
		return true
	})
	if len(owned) == 0 {
		t.Fatal("the profile has no function of the capture's machinery")
	}
	sameAsPprof(t, hidden, pprofTop(t, "-sample_index=alloc_space", "-unit=B", "-ignore=^("+strings.Join(owned, "|")+")$", rp.files["heap2"]))
	marked := 0
	all.Walk(func(n *Node, _ int) bool {
		if n.Own {
			marked++
			if !anyOwnAbove(all.Root, n) && !allOwnBelow(n) {
				t.Errorf("%s is marked as the capture's own but a stack through it holds no frame of it", n.Name)
			}
		}
		return true
	})
	if marked == 0 {
		t.Error("no node marked as the capture's own")
	}
	for _, fn := range []string{"net/http/pprof.Index", "runtime/pprof.(*profileBuilder).build", "runtime/trace.Start", "runtime.StopTrace"} {
		if !Own(fn) {
			t.Errorf("%s is not the capture's own", fn)
		}
	}
	for _, fn := range []string{"runtime.gopark", "net/http.(*conn).serve", "main.pprofLike", "compress/flate.NewWriter",
		"runtime/pprof.Do", "runtime/pprof.SetGoroutineLabels", "runtime/trace.WithRegion", "runtime/trace.(*Region).End", "runtime/trace.NewTask", "runtime/trace.Logf"} {
		if Own(fn) {
			t.Errorf("%s is the capture's own", fn)
		}
	}
}

// allOwnBelow reports whether every stack from n down holds an Own frame.
func allOwnBelow(n *Node) bool {
	if Own(n.Name) {
		return true
	}
	if n.Self != 0 || len(n.Children) == 0 {
		return false
	}
	for _, c := range n.Children {
		if !allOwnBelow(c) {
			return false
		}
	}
	return true
}

// anyOwnAbove reports whether a caller of n (on its path from root) is Own.
func anyOwnAbove(root, n *Node) bool {
	var path []*Node
	var find func(c *Node) bool
	find = func(c *Node) bool {
		if c == n {
			return true
		}
		path = append(path, c)
		for _, k := range c.Children {
			if find(k) {
				return true
			}
		}
		path = path[:len(path)-1]
		return false
	}
	find(root)
	for _, p := range path {
		if Own(p.Name) {
			return true
		}
	}
	return false
}
