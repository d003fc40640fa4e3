// Package flame builds flame-graph trees from the stacks of a leakscope
// bundle: pprof samples (the samples table) or the goroutines of a dump (the
// goroutines table). It is a pure library: it reads bundles through
// ingest/bundle and knows nothing of HTTP. The web workbench serves a
// [Tree] as JSON to a JavaScript flame-graph widget; the report embeds the
// static SVG drawn by [SVG].
//
// # Building
//
// [FromBundle] answers one [Query]. A server answering many queries on one
// bundle loads its frame and stack dictionaries once with [LoadStacks] and
// calls [Stacks.Build]. Samples are streamed batch by batch; only the per
// stack sums of the selected snapshots are kept, in slices indexed by stack
// id.
//
// Which snapshots a query reads:
//
//   - Snapshot = ts: exactly that snapshot (an error wrapping
//     [ErrNoSnapshot] if it does not exist); neither Snapshot nor From/To:
//     the latest snapshot.
//   - From/To (either non-zero; a zero bound is open): every snapshot with
//     From <= ts <= To. For instant values (goroutine, goroutineleak, cpu,
//     heap inuse_*) the snapshots are summed ([Tree.Count] says how many;
//     divide by it for an average). For cumulative values (allocs, heap
//     alloc_*, block, mutex, threadcreate: counters since process start) the
//     result is the latest snapshot in the range minus the earliest, what
//     accumulated in between ([Tree.Delta]); a range holding a single
//     snapshot yields that snapshot's values since process start.
//   - Base = ts: the values of snapshot Base are subtracted (a diff, as
//     pprof's -diff_base): [Node.Total] and [Node.Self] become new minus base
//     and [Node.BaseTotal] holds the base part.
//
// Focus and Ignore filter whole stacks like pprof's -focus and -ignore: a
// regular expression matches a frame when it matches its function name or
// its file name; Focus keeps the stacks with a frame matching any of its
// expressions, Ignore then drops the stacks with a frame matching any of its
// expressions.
//
// # Tree
//
// Nodes are merged by function name along the call path (pprof's default
// "functions" granularity; inlined frames are frames of their own). Children
// are sorted by name. The root is named "root" and holds the total. An
// inverted tree (Query.Invert) starts from the leaves: the root's children
// are the functions samples were taken in, their children their callers.
// [Top] gives pprof's flat and cum per function (cum counts a function once
// per stack, even when it recurses); [Sandwich] gives the callers and
// callees of one function.
//
// # JSON
//
// [Tree.MarshalJSON] writes an envelope whose "root" uses the short keys
// d3-flame-graph reads natively (n, v, c, d):
//
//	{"profile":"heap","sample_type":"inuse_space","unit":"bytes",
//	 "source":"samples","snapshot":1700000000000000000,"first":1700000000000000000,
//	 "count":1,"delta":false,"base":0,"inverted":false,
//	 "total":4096,"base_total":0,
//	 "root":{"n":"root","v":4096,"s":0,"c":[
//	   {"n":"main.leak","f":"/src/main.go","ln":12,"v":4096,"s":4096}]}}
//
// Node keys: n name (function), f file, ln line (the smallest line seen for
// the function at this place, 0 if unknown), v value (total, the width), s
// self, c children (omitted when empty), o 1 when every stack through the
// node is the capture's own machinery ([Own]). In a diff tree (base
// non-zero) v is the new snapshot's total (Total+BaseTotal, never negative
// for runtime profiles), d is the change (Total, new minus base), which is
// what d3-flame-graph's differential mode colours by, b the base's total
// and a the summed size of each stack's change (growth and shrink both
// count), so that a view can lay frames out by the new profile (v), the
// base (b) or the change (a), as pprof's -diff_base and Pyroscope's diff
// do; the envelope's "total" is the change and "base_total" the base's
// total. With Query.HideOwn the envelope's "own_hidden" holds what the
// left-out stacks of the capture's own machinery held ({"total",
// "base_total"}, as the envelope's).
//
// # Tables
//
// [TopTable] is pprof's -top (flat and cum per function, with shares of
// the total), [Peek] its -peek (one function's callers and callees with the
// weight of each call edge) and [Stacks.Lines] its -list (flat and cum per
// source line of one function). Each is computed here once; the workbench
// serves them as they are.
package flame
