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
// [Analyze] (entry.go) runs a pipeline read top-down (analyze): load →
// evidence → verdicts → attribution → assembly. Each stage is entered by
// one short function in the file named after it, and its helpers live in
// files with the stage's prefix. A file uses names only from its own stage
// and earlier ones (dev/archtest's TestStageOrder, whose allowlist is
// empty and may only stay so).
//
//   - load (load.go: load, with the options' defaults, what the inputs
//     allow and the capture's start): the tables → one population. The
//     rows are read by analysis/internal/tables (the goroutines table's
//     columns, profile samples, trace and eBPF goroutines with the
//     probes' windows, spans, a frame's argument words, the kept
//     source's rows, metrics and race rows); the load stage folds them
//     and decides what they mean. load_stacks.go frames and stacks
//     (with wait kinds and the runtime's own stacks);
//     load_code.go whose code a frame is; load_groups.go dump rows folded
//     into groups by wait, and the goroutine taking the dump;
//     load_detail.go the latest snapshot goroutine by goroutine (state,
//     wait, words and where each was read, since when); load_sites.go goroutine sites;
//     load_history.go the agent's earlier profiles; load_metrics.go
//     runtime metrics and race reports; load_tracegroups.go trace
//     goroutines by creator and the spans open on a goroutine;
//     load_population.go goroutines by creator for the ancestry tree;
//     load_source.go the kept source; load_program.go the program and its
//     libraries read as Go (analysis/internal/gosrc).
//   - evidence (evidence.go: gatherEvidence, with series fits and the
//     stuck channel's log-odds weights): what each source says about
//     each site. evidence_rules.go leak patterns; evidence_heap.go heap
//     trends and where a site's stacks part; evidence_waitfor.go and
//     evidence_edges.go the wait-for graph; evidence_holders.go possible
//     holders; evidence_progress.go the runtime's counters (Cond tickets,
//     wait minutes); evidence_stuck.go the graph summed up by site;
//     evidence_split.go parts a site whose members are partly stuck;
//     evidence_reach.go and evidence_wake.go who can still wake a wait,
//     evidence_bound.go how many of a class's waiters the goroutines
//     that can run can wake at most, evidence_instances.go the waiters
//     a release bounded to a few objects wakes;
//     the kept source read as Go: evidence_source.go (parsing, what a
//     line allocates), evidence_stmt.go (the statement at a frame, timer
//     cases, locks held by the waiter, loops with no way out),
//     evidence_stmt_sema.go (a send that takes a channel semaphore's
//     slot), evidence_resolve.go (values and parameters by name).
//   - verdicts (verdict.go: judge): verdict_score.go the one scoring
//     function and the stuck channel's evidence weighed; verdict_index.go
//     the best-ranked candidate by function; verdict_heaphold.go heap credited to the
//     goroutine groups whose goroutines hold it, and what the heap
//     profiles can see.
//   - attribution (attribute.go: attribute): where a reported group comes
//     from. attribute_callers.go origins on other stacks, from the
//     server that starts them and from the program's own call index;
//     attribute_onset.go when it began; attribute_release.go the release
//     a library object needs (in the user's code too);
//     attribute_libsource.go library source (a Go root checked against
//     the frames) and the library object leaked per call.
//   - assembly (assemble.go: assemble, with source coverage): the report.
//     assemble_suspects.go suspects and heap per call;
//     assemble_incidents.go root causes and their text;
//     assemble_fitfix.go the fix that fits a site; assemble_timeline.go
//     the leak-cause timeline and the sentence naming what started the
//     capture. Assembly decides nothing: every number comes from the
//     stages before it.
//
// The views served beside the report: view_lifetimes.go ([Lifetimes],
// its groups and the state changes from the raw trace), view_lanes.go
// (state lanes), view_ancestry.go ([Ancestry] and a suspect's members,
// by query). The types of the report and views: api_report.go,
// api_suspect.go, api_views.go. Shared leaves: common.go (rates and
// times in words, rounding, a min-heap of ints); budget.go the deadline
// and heap budget every stage checks.
// Output never depends on map order: load_sites.go's siteCmp is the total
// order every sort that can tie ends in.
//
// Leak patterns come from rules (see [Rule]): a built-in set embedded from
// rules/default.json, extended by a user file named in LEAKSCOPE_RULES or
// passed as [Options.Rules].
package analysis
