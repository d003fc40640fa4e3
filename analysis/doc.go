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
// Leak patterns come from rules (see [Rule]): a built-in set embedded from
// rules/default.json, extended by a user file named in LEAKSCOPE_RULES or
// passed as [Options.Rules].
package analysis
