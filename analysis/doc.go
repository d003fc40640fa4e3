// Package analysis finds goroutine and heap leaks in a leakscope capture
// bundle. It is a library: it reads bundles through ingest/bundle, does no
// HTTP and no capture, and returns plain values that the CLI renders
// (analysis/report) and the web UI serves as JSON.
//
// The entry points are [Analyze] (the whole leak report), [Ancestry] (the
// goroutine creation tree) and [Lifetimes] (goroutine and span bars for a
// timeline). Each reads the tables it needs once, batch by batch, and keeps
// only aggregates: goroutine rows are folded into groups keyed by where they
// are parked, heap samples into per-stack series.
//
// # The pipeline
//
// [Analyze] is a pipeline read top-down (analyze.go), one stage per file,
// each entered by one short function:
//
//   - load (load.go: load): the tables → one population. Stacks and frames
//     (stacks.go), dump rows folded into groups (groups.go), profile samples
//     (samples.go), metrics, trace and eBPF goroutines (trace.go,
//     ancestry.go), spans; the goroutine sites from the richest source
//     (sites.go, tracegroups.go) on the bundle's snapshot times.
//   - evidence (evidence.go: gatherEvidence): what each source says about
//     each site: its leak pattern (rules.go), the runtime's goroutineleak
//     profile (leakprofile.go), the trace windows, and the heap trends of
//     the profiles (heap.go; heappaths.go names where a site's stacks
//     part).
//   - verdicts (verdict.go: judge): one scoring function over the evidence
//     (score.go), heap growth attributed to the goroutine groups whose
//     goroutines hold it (heaphold.go), and the cut at [Options.MinScore].
//   - attribution (attribution.go: attribute): where a reported group comes
//     from: creator file and line, creator chain, trace span.
//   - report assembly (assemble.go: assemble, suspects.go): suspects with
//     ids, heap section, leak-profile cross-check, spans, series, bundle
//     summary and timeline (timeline.go). Assembly decides nothing: every
//     number comes from the stages before it.
//
// Leak patterns come from rules (see [Rule]): a built-in set embedded from
// rules/default.json, extended by a user file named in LEAKSCOPE_RULES or
// passed as [Options.Rules].
package analysis
