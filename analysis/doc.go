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
// [Analyze] (entry.go) runs a pipeline read top-down (analyze.go): load →
// evidence → verdicts → attribution → assembly. Each stage is entered by
// one short function in the file named after it, and its helpers live in
// files with the stage's prefix. A file uses names only from its own stage
// and earlier ones (dev/archtest's TestStageOrder, whose allowlist of
// older exceptions only shrinks).
//
//   - load (load.go: load): the tables → one population.
//     load_stacks.go frames and stacks; load_columns.go column lookup by
//     name; load_groups.go dump rows folded into groups; load_detail.go
//     the latest snapshot goroutine by goroutine (state, wait, words,
//     since when); load_args.go argument words; load_dumping.go the
//     goroutine taking the dump; load_samples.go profile samples;
//     load_metrics.go runtime metrics; load_trace.go trace and eBPF
//     goroutines; load_coverage.go eBPF probe windows; load_spans.go
//     spans; load_sites.go goroutine sites; load_tracegroups.go trace
//     goroutines by creator; load_history.go the agent's earlier profiles;
//     load_source.go the kept source; load_code.go the user's code;
//     load_races.go race reports; load_inputs.go what the inputs allow;
//     load_population.go goroutines by creator for the ancestry tree;
//     load_config.go the options with their defaults.
//   - evidence (evidence.go: gatherEvidence): what each source says about
//     each site. evidence_rules.go leak patterns; evidence_fit.go series
//     fits; evidence_leakprofile.go
//     the runtime's goroutineleak profile; evidence_heap.go heap trends
//     (evidence_heappaths.go: where a site's stacks part);
//     evidence_waitfor.go the wait-for graph; evidence_holders.go possible
//     holders; evidence_progress.go the runtime's counters (Cond tickets,
//     wait minutes); evidence_stuck.go the graph summed up by site;
//     evidence_asleep.go the runtime's all-asleep crash; the kept source
//     read as Go: evidence_source.go (parsing), evidence_stmt.go (the
//     statement at a frame), evidence_resolve.go (values by name),
//     evidence_timer.go (timer cases), evidence_lock.go (locks held by
//     the waiter, loops with no way out), evidence_alloc.go (what a line
//     allocates), evidence_params.go (parameter names);
//     evidence_weights.go the stuck channel's log-odds weights.
//   - verdicts (verdict.go: judge): verdict_score.go the one scoring
//     function; verdict_weights.go the stuck channel's evidence weighed;
//     verdict_heaphold.go heap credited to
//     the goroutine groups whose goroutines hold it.
//   - attribution (attribute.go: attribute): where a reported group comes
//     from. attribute_callers.go origins on other stacks;
//     attribute_srccalls.go origins from the program's own call index;
//     attribute_onset.go when it began; attribute_release.go,
//     attribute_releaseuser.go, attribute_libsource.go (with
//     attribute_libmatch.go, a Go root checked against the frames) and
//     attribute_libincident.go the library object leaked per call and its
//     release.
//   - assembly (assemble.go: assemble): the report. assemble_suspects.go
//     suspects; assemble_incidents.go root causes; assemble_heapcall.go
//     heap per call; assemble_source.go source coverage;
//     assemble_timeline.go the leak-cause timeline; assemble_trigger.go
//     the sentence naming what started the capture. Assembly decides
//     nothing: every number comes from the stages before it.
//
// The views served beside the report: view_lifetimes.go and
// view_lifegroups.go ([Lifetimes]), view_lanes.go (state lanes),
// view_members.go (a suspect's members, by query), view_ancestry.go
// ([Ancestry]), view_transitions.go (state changes from the raw trace).
// The types of the report and views: api_report.go, api_suspect.go,
// api_views.go. Shared leaves: common_words.go (rates and times in
// words), common_num.go (rounding), common_heap.go (a min-heap of ints).
// Output never depends on map order: load_sites.go's siteCmp is the total
// order every sort that can tie ends in.
//
// Leak patterns come from rules (see [Rule]): a built-in set embedded from
// rules/default.json, extended by a user file named in LEAKSCOPE_RULES or
// passed as [Options.Rules].
package analysis
