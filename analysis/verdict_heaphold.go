package analysis

import (
	"fmt"
	"go/ast"
	"go/token"
	"math"
	"time"

	"github.com/leakscope/leakscope/internal/format"
)

// What a goroutine group holds of the heap. A group is credited with an
// allocation site only when its goroutines hold what the site allocates:
// their own frames allocate it, they are the goroutines being made
// (runtime.malg under newproc1), or their creator allocates it into a
// value the go statement hands them, as the kept source shows. A site
// the creator fills for itself (a handler appending to a package-level
// slice beside the goroutine it leaks) grows on its own and is judged
// as a heap site of its own. A site one heap sample shows, or one
// snapshot, is held by nothing the profiles can show.

// minHeldSamples is how many heap samples a site's in-use bytes must
// stand for, at the last snapshot, before any goroutine group is said to
// hold it: one sample is one allocation seen once.
const minHeldSamples = 2

// heldStacks returns the growing stacks whose allocating line more than
// one heap snapshot shows, with bytes at the last snapshot standing for
// at least minHeldSamples heap samples (summed over the line's growing
// stacks, as its site is).
func heldStacks(ts []int64, growing []*heapStack, period int64) map[*heapStack]bool {
	byLine := map[string][]*heapStack{}
	for _, h := range growing {
		k := heapLineKey(h.loc)
		byLine[k] = append(byLine[k], h)
	}
	out := map[*heapStack]bool{}
	for _, hs := range byLine {
		n := len(ts)
		bytes, objs := make([]float64, n), make([]float64, n)
		for _, h := range hs {
			for i := range ts {
				bytes[i] += h.bytes[i]
				objs[i] += h.objs[i]
			}
		}
		if !held(bytes, sampleWeight(objectSize(bytes, objs), period)) {
			continue
		}
		for _, h := range hs {
			out[h] = true
		}
	}
	return out
}

// held reports whether a site's series shows it held: more than one
// snapshot has bytes there, and the last stands for at least
// minHeldSamples samples of weight (half a sample of slack for mixed
// object sizes).
func held(bytes []float64, weight float64) bool {
	shown := 0
	for _, v := range bytes {
		if v > 0 {
			shown++
		}
	}
	if shown < 2 || len(bytes) == 0 {
		return false
	}
	return bytes[len(bytes)-1] >= (minHeldSamples-0.5)*weight
}

// handedToGoroutine reports whether the kept source shows the statement
// at frame f (an allocating line of a creator) giving what it allocates
// to a goroutine the function starts: the line is part of a go
// statement (its arguments, its closure), or the statement assigns a
// local variable that a go statement of the function passes or
// captures. Without readable source nothing is shown, and it is false.
func (c *sourceCode) handedToGoroutine(f Frame) bool {
	p, _ := c.funcAt(f)
	if p == nil || p.decl == nil {
		return false
	}
	var gos []*ast.GoStmt
	var at ast.Stmt
	ast.Inspect(p.decl.Body, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.GoStmt:
			gos = append(gos, s)
		case *ast.AssignStmt, *ast.DeclStmt, *ast.ExprStmt, *ast.IncDecStmt, *ast.SendStmt, *ast.ReturnStmt:
			st := s.(ast.Stmt)
			if p.line(st.Pos()) <= f.Line && f.Line <= p.line(st.End()) && (at == nil || st.Pos() >= at.Pos()) {
				at = st
			}
		}
		return true
	})
	for _, g := range gos {
		if p.line(g.Pos()) <= f.Line && f.Line <= p.line(g.End()) {
			return true
		}
	}
	names := assignedLocals(p.decl, at)
	for _, g := range gos {
		if mentionsAny(g.Call, names) {
			return true
		}
	}
	return false
}

// assignedLocals are the names a statement assigns that the function
// declares (parameters, results, the receiver, := and var): the base
// name of each assigned expression (buf for buf, s.buf or buf[i]).
func assignedLocals(d *ast.FuncDecl, st ast.Stmt) map[string]bool {
	out := map[string]bool{}
	if st == nil {
		return out
	}
	locals := declaredNames(d)
	add := func(e ast.Expr) {
		if n := rootName(e); n != "" && n != "_" && locals[n] {
			out[n] = true
		}
	}
	switch s := st.(type) {
	case *ast.AssignStmt:
		for _, l := range s.Lhs {
			add(l)
		}
	case *ast.DeclStmt:
		if g, ok := s.Decl.(*ast.GenDecl); ok && g.Tok == token.VAR {
			for _, sp := range g.Specs {
				for _, n := range sp.(*ast.ValueSpec).Names {
					add(n)
				}
			}
		}
	}
	return out
}

// rootName is the variable at the root of an assigned expression: x for
// x, x.f, x[i], *x; "" for anything else.
func rootName(e ast.Expr) string {
	for {
		switch x := unparen(e).(type) {
		case *ast.Ident:
			return x.Name
		case *ast.SelectorExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		default:
			return ""
		}
	}
}

// declaredNames are the names a function declares: receiver, parameters,
// results, and every := or var inside it.
func declaredNames(d *ast.FuncDecl) map[string]bool {
	out := map[string]bool{}
	fields := func(fl *ast.FieldList) {
		if fl == nil {
			return
		}
		for _, f := range fl.List {
			for _, n := range f.Names {
				out[n.Name] = true
			}
		}
	}
	fields(d.Recv)
	fields(d.Type.Params)
	fields(d.Type.Results)
	ast.Inspect(d.Body, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.AssignStmt:
			if s.Tok == token.DEFINE {
				for _, l := range s.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						out[id.Name] = true
					}
				}
			}
		case *ast.ValueSpec:
			for _, id := range s.Names {
				out[id.Name] = true
			}
		}
		return true
	})
	return out
}

// mentionsAny reports whether n refers to one of names.
func mentionsAny(n ast.Node, names map[string]bool) bool {
	if len(names) == 0 {
		return false
	}
	found := false
	ast.Inspect(n, func(x ast.Node) bool {
		if id, ok := x.(*ast.Ident); ok && names[id.Name] {
			found = true
		}
		return !found
	})
	return found
}

// heapSight is the slowest heap growth the bundle's heap profiles can
// name: the rise a site growing steadily over their snapshots needs to
// clear its floor (heapFloor, at the profiles' sampling rate, for small
// objects), over their span; nil with fewer than three heap snapshots.
func heapSight(ts []int64, periods map[int64]int64) *HeapSight {
	if len(ts) < 3 || ts[len(ts)-1] <= ts[0] {
		return nil
	}
	rate := samplingPeriod(ts, periods)
	span := float64(ts[len(ts)-1]-ts[0]) / 1e9
	rise := func(r float64) []float64 {
		v := make([]float64, len(ts))
		for i, t := range ts {
			v[i] = r * float64(t-ts[0]) / float64(ts[len(ts)-1]-ts[0])
		}
		return v
	}
	// The floor grows more slowly than the rise: the least rise that
	// clears it, by bisection between one sample's weight and a bound
	// that always does.
	lo, hi := float64(rate), float64(rate)
	for f, _ := heapFloor(ts, rise(hi), float64(rate), rate); f > hi; f, _ = heapFloor(ts, rise(hi), float64(rate), rate) {
		lo, hi = hi, 2*hi
	}
	for range 40 {
		mid := (lo + hi) / 2
		if f, _ := heapFloor(ts, rise(mid), float64(rate), rate); f > mid {
			lo = mid
		} else {
			hi = mid
		}
	}
	hs := &HeapSight{MemProfileRate: rate, Seconds: round(span, 1), MinRise: math.Ceil(hi), MinPerMin: round(hi/span*60, 0)}
	hs.Text = sightText(hs)
	return hs
}

// sightText says what a capture's heap profiles cannot see, and what
// would show it: a longer capture (the rise needed grows with the rate,
// not the time) or a finer MemProfileRate (the rise needed shrinks with
// it), for a site growing a quarter as fast as the slowest seen.
func sightText(hs *HeapSight) string {
	g := hs.MinPerMin / 4
	longer := time.Duration(hs.MinRise / g * float64(time.Minute)).Round(time.Second)
	finer := int64(float64(hs.MemProfileRate) / 4)
	return fmt.Sprintf("heap profiles at MemProfileRate %s over %s name a site only once it has risen about %s (its sampling floor): one growing slower than %s stays unseen. A site growing %s needs a capture of %s at this rate, or runtime.MemProfileRate %d (%s) for one this long",
		format.Bytes(float64(hs.MemProfileRate)), format.Duration(time.Duration(hs.Seconds*1e9)), format.Bytes(hs.MinRise), FormatRate(hs.MinPerMin, KindHeap),
		FormatRate(g, KindHeap), format.Duration(longer), finer, format.Bytes(float64(finer)))
}
