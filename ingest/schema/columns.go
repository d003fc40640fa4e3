package schema

import (
	"github.com/apache/arrow/go/v15/arrow"
)

// Nulls: in the row structs below, a zero id, goid or timestamp stands for
// null. Stack and frame ids start at 1 and real goroutine ids are never 0, so
// the zero value is free to mean "absent"; the Append functions write a
// null there.

// FramesSchema: one row per distinct frame.
var FramesSchema = schemaOf(TableFrames,
	field(ColFrameID, arrow.PrimitiveTypes.Int64, false),
	field(ColFunction, DictString, false),
	field(ColFile, DictString, false),
	field(ColLine, arrow.PrimitiveTypes.Int64, false),
	field(ColInlined, arrow.FixedWidthTypes.Boolean, false),
)

// StacksSchema: one row per distinct stack, frames listed leaf first.
var StacksSchema = schemaOf(TableStacks,
	field(ColStackID, arrow.PrimitiveTypes.Int64, false),
	field(ColFrameIDs, arrow.ListOf(arrow.PrimitiveTypes.Int64), false),
)

// Profile names used in the samples table's profile column.
const (
	ProfileGoroutine     = "goroutine"
	ProfileHeap          = "heap"
	ProfileAllocs        = "allocs"
	ProfileCPU           = "cpu"
	ProfileBlock         = "block"
	ProfileMutex         = "mutex"
	ProfileThreadcreate  = "threadcreate"
	ProfileGoroutineLeak = "goroutineleak"
	// ProfileThreads is a legacy threadz profile: the stacks of threads.
	ProfileThreads = "threads"
)

// Sample value columns, one per pprof sample type the Go runtime writes.
const (
	ColInuseSpace    = "inuse_space"
	ColInuseObjects  = "inuse_objects"
	ColAllocSpace    = "alloc_space"
	ColAllocObjects  = "alloc_objects"
	ColCPUNanosecs   = "cpu_nanoseconds"
	ColSamplesCount  = "samples"
	ColCount         = "count"
	ColContentions   = "contentions"
	ColDelay         = "delay"
	ColProfile       = "profile"
	ColSampleMeta    = "sample_period"
	ColDurationNanos = "duration_ns"
)

// ValueColumns lists the sample value columns in the order of
// [Sample.Values].
var ValueColumns = []string{
	ColInuseSpace, ColInuseObjects, ColAllocSpace, ColAllocObjects,
	ColCPUNanosecs, ColSamplesCount, ColCount, ColContentions, ColDelay,
}

// NumValues is the number of sample value columns.
const NumValues = 9

// SamplesSchema: one row per pprof sample in a snapshot.
var SamplesSchema = schemaOf(TableSamples,
	field(ColSnapshotTS, Timestamp, false),
	field(ColProfile, DictString, false),
	field(ColStackID, arrow.PrimitiveTypes.Int64, false),
	field(ColInuseSpace, arrow.PrimitiveTypes.Int64, true),
	field(ColInuseObjects, arrow.PrimitiveTypes.Int64, true),
	field(ColAllocSpace, arrow.PrimitiveTypes.Int64, true),
	field(ColAllocObjects, arrow.PrimitiveTypes.Int64, true),
	field(ColCPUNanosecs, arrow.PrimitiveTypes.Int64, true),
	field(ColSamplesCount, arrow.PrimitiveTypes.Int64, true),
	field(ColCount, arrow.PrimitiveTypes.Int64, true),
	field(ColContentions, arrow.PrimitiveTypes.Int64, true),
	field(ColDelay, arrow.PrimitiveTypes.Int64, true),
	field(ColLabels, arrow.BinaryTypes.String, false),
	field(ColSource, DictString, false),
)

// Goroutine dump columns.
const (
	ColState           = "state"
	ColWaitMinutes     = "wait_minutes"
	ColLockedThread    = "locked_thread"
	ColCreatorGoid     = "creator_goid"
	ColCreatorFunction = "creator_function"
	ColCreatorStackID  = "creator_stack_id"
	ColFramesElided    = "frames_elided"
	// ColFrameArgs holds, per goroutine, one entry per frame of its stack
	// (leaf first): the argument words the dump printed between the
	// frame's parentheses, as printed ("0xc000012340, 0x1",
	// "0x0?", "{0x5, 0x6}", "..." for an inlined frame, "" for none).
	ColFrameArgs = "frame_args"
)

// GoroutinesSchema: one row per goroutine in a dump snapshot.
var GoroutinesSchema = schemaOf(TableGoroutines,
	field(ColSnapshotTS, Timestamp, false),
	field(ColGoid, arrow.PrimitiveTypes.Int64, false),
	field(ColState, DictString, false),
	field(ColWaitMinutes, arrow.PrimitiveTypes.Int64, false),
	field(ColLockedThread, arrow.FixedWidthTypes.Boolean, false),
	field(ColStackID, arrow.PrimitiveTypes.Int64, true),
	field(ColCreatorGoid, arrow.PrimitiveTypes.Int64, true),
	field(ColCreatorFunction, DictString, false),
	field(ColCreatorStackID, arrow.PrimitiveTypes.Int64, true),
	field(ColLabels, arrow.BinaryTypes.String, false),
	field(ColFramesElided, arrow.FixedWidthTypes.Boolean, false),
	field(ColSource, DictString, false),
	added(field(ColFrameArgs, arrow.ListOf(arrow.BinaryTypes.String), true)),
)

// Trace goroutine columns.
const (
	ColParentGoid      = "parent_goid"
	ColCreatedTS       = "created_ts"
	ColEndedTS         = "ended_ts"
	ColCreationStackID = "creation_stack_id"
	ColStartFunction   = "start_function"
	ColLastState       = "last_state"
	ColLastReason      = "last_reason"
	ColLastStackID     = "last_stack_id"
	// Removed in schema 2 (see Removed); older bundles have them.
	ColCreatedMonoNS = "created_mono_ns"
	ColEndedMonoNS   = "ended_mono_ns"
)

// TraceGoroutinesSchema: one row per goroutine seen in a trace.
var TraceGoroutinesSchema = schemaOf(TableTraceGoroutines,
	field(ColGoid, arrow.PrimitiveTypes.Int64, false),
	field(ColParentGoid, arrow.PrimitiveTypes.Int64, true),
	field(ColCreatedTS, Timestamp, true),
	field(ColEndedTS, Timestamp, true),
	field(ColCreationStackID, arrow.PrimitiveTypes.Int64, true),
	field(ColStartFunction, DictString, false),
	field(ColLastState, DictString, false),
	field(ColLastReason, DictString, false),
	field(ColLastStackID, arrow.PrimitiveTypes.Int64, true),
)

// Transition columns.
const (
	ColFrom   = "from"
	ColTo     = "to"
	ColReason = "reason"
)

// TraceTransitionsSchema: one row per goroutine state change in a trace.
var TraceTransitionsSchema = schemaOf(TableTraceTransitions,
	field(ColTS, Timestamp, false),
	field(ColMonoNS, arrow.PrimitiveTypes.Int64, false),
	field(ColGoid, arrow.PrimitiveTypes.Int64, false),
	field(ColFrom, DictString, false),
	field(ColTo, DictString, false),
	field(ColReason, DictString, false),
	field(ColStackID, arrow.PrimitiveTypes.Int64, true),
)

// Span columns.
const (
	ColSpanID       = "span_id"
	ColParentSpanID = "parent_span_id"
	ColKind         = "kind"
	ColName         = "name"
	ColStartTS      = "start_ts"
	ColEndTS        = "end_ts"
	ColMessage      = "message"
	ColTaskID       = "task_id"
)

// Span kinds.
const (
	SpanTask   = "task"
	SpanRegion = "region"
	SpanLog    = "log"
)

// SpansSchema: one row per task, region or log event of a trace. Logs have
// start_ts = end_ts and carry their category in name and text in message.
var SpansSchema = schemaOf(TableSpans,
	field(ColSpanID, arrow.PrimitiveTypes.Int64, false),
	field(ColParentSpanID, arrow.PrimitiveTypes.Int64, true),
	field(ColKind, DictString, false),
	field(ColName, DictString, false),
	field(ColGoid, arrow.PrimitiveTypes.Int64, true),
	field(ColTaskID, arrow.PrimitiveTypes.Int64, true),
	field(ColStartTS, Timestamp, true),
	field(ColEndTS, Timestamp, true),
	field(ColMessage, arrow.BinaryTypes.String, false),
)

// Metric columns and well-known metric names.
const (
	ColValue = "value"

	MetricHeapLive   = "heap_live_bytes"
	MetricHeapGoal   = "heap_goal_bytes"
	MetricGoroutines = "goroutines"
	MetricGCCycle    = "gc_cycle"
	MetricGCPause    = "gc_pause_ns"
	MetricSTWPause   = "stw_pause_ns"
)

// MetricsSchema: one row per metric sample.
var MetricsSchema = schemaOf(TableMetrics,
	field(ColTS, Timestamp, false),
	field(ColName, DictString, false),
	field(ColValue, arrow.PrimitiveTypes.Float64, false),
	field(ColSource, DictString, false),
)

// eBPF event columns and kinds.
const (
	ColPID  = "pid"
	ColTID  = "tid"
	ColPC   = "pc"
	ColSize = "size"

	EventGoCreate = "go_create"
	EventGoExit   = "go_exit"
	EventAlloc    = "alloc"
	EventGCStart  = "gc_start"
	EventGCEnd    = "gc_end"
)

// EBPFEventsSchema: one row per eBPF event.
var EBPFEventsSchema = schemaOf(TableEBPFEvents,
	field(ColTS, Timestamp, false),
	field(ColMonoNS, arrow.PrimitiveTypes.Int64, false),
	field(ColKind, DictString, false),
	field(ColPID, arrow.PrimitiveTypes.Int64, false),
	field(ColTID, arrow.PrimitiveTypes.Int64, false),
	field(ColGoid, arrow.PrimitiveTypes.Int64, true),
	field(ColParentGoid, arrow.PrimitiveTypes.Int64, true),
	field(ColPC, arrow.PrimitiveTypes.Uint64, true),
	field(ColSize, arrow.PrimitiveTypes.Int64, true),
	field(ColStackID, arrow.PrimitiveTypes.Int64, true),
)

// Columns of the probe_windows table.
const (
	ColProbes      = "probes"
	ColStartMonoNS = "start_mono_ns"
	ColEndMonoNS   = "end_mono_ns"
	ColToEnd       = "to_end"
)

// ProbesGoroutines names the go_create and go_exit probes in probe_windows.
const ProbesGoroutines = "goroutines"

// ProbeWindowsSchema: one row per time a set of eBPF probes was attached,
// from attaching to detaching; to_end says the probes stayed attached
// until the capture ended. A bundle without the table, or with eBPF events
// but no row, had its probes attached throughout.
var ProbeWindowsSchema = schemaOf(TableProbeWindows,
	field(ColProbes, DictString, false),
	field(ColStartTS, Timestamp, false),
	field(ColEndTS, Timestamp, false),
	field(ColStartMonoNS, arrow.PrimitiveTypes.Int64, false),
	field(ColEndMonoNS, arrow.PrimitiveTypes.Int64, false),
	field(ColToEnd, arrow.FixedWidthTypes.Boolean, false),
)

// ClockSyncSchema: (monotonic, wall) clock pairs taken during a capture.
var ClockSyncSchema = schemaOf(TableClockSync,
	field(ColMonoNS, arrow.PrimitiveTypes.Int64, false),
	field(ColTS, Timestamp, false),
	field(ColSource, DictString, false),
)

// Columns of the races table.
const (
	ColRace           = "race"
	ColAccess         = "access"
	ColAddr           = "addr"
	ColGoroutineState = "goroutine_state"
	ColLocation       = "location"
)

// RacesSchema is the races table: the race detector's reports ("WARNING:
// DATA RACE") found in dumps and logs, one row per access a report names.
// race numbers the reports of one source from 1; access is "write",
// "read", "atomic write"... with "previous " before the earlier access;
// stack_id is the access's stack and creation_stack_id where its
// goroutine was created ("Goroutine N (running) created at:"), whose state
// goroutine_state gives; location is what the report says of the memory.
var RacesSchema = schemaOf(TableRaces,
	field(ColSnapshotTS, Timestamp, false),
	field(ColRace, arrow.PrimitiveTypes.Int64, false),
	field(ColAccess, DictString, false),
	field(ColAddr, arrow.PrimitiveTypes.Int64, false),
	field(ColGoid, arrow.PrimitiveTypes.Int64, false),
	field(ColStackID, arrow.PrimitiveTypes.Int64, true),
	field(ColGoroutineState, DictString, false),
	field(ColCreationStackID, arrow.PrimitiveTypes.Int64, true),
	field(ColLocation, arrow.BinaryTypes.String, false),
	field(ColSource, DictString, false),
)

// Columns of the source_code table.
const (
	ColStartLine  = "start_line"
	ColEndLine    = "end_line"
	ColText       = "text"
	ColFileSHA256 = "file_sha256"
	ColStatus     = "status"
	ColDetail     = "detail"
)

// Statuses of a source_code row.
const (
	// SourceOK: the function's declaration was found in the file and its
	// text is kept.
	SourceOK = "ok"
	// SourceChanged: the file was read but holds no declaration of the
	// function (it changed since the build, or the name is not one a
	// declaration has).
	SourceChanged = "changed"
	// SourceUnavailable: the file could not be read (detail says why).
	SourceUnavailable = "unavailable"
)

// SourceCodeSchema: the Go source of a function named by the bundle's
// frames, as read when the bundle was made (capture: the target's files at
// its build paths; ingest: files reachable at the frames' paths), so that
// reports quote what was built rather than what is on disk later. One row
// per (file, function): the declaration's line range and text, the
// SHA-256 of the whole file, and a status.
var SourceCodeSchema = schemaOf(TableSourceCode,
	field(ColFile, DictString, false),
	field(ColFunction, DictString, false),
	field(ColStartLine, arrow.PrimitiveTypes.Int64, true),
	field(ColEndLine, arrow.PrimitiveTypes.Int64, true),
	field(ColText, arrow.BinaryTypes.String, false),
	field(ColFileSHA256, arrow.BinaryTypes.String, false),
	field(ColStatus, DictString, false),
	field(ColDetail, arrow.BinaryTypes.String, false),
	field(ColSource, DictString, false),
)

// Source call columns and kinds.
const (
	ColCallee = "callee"
	// CallKindCall: the function calls Callee, a package-qualified
	// function of another package (sql.Open).
	CallKindCall = "call"
	// CallKindLiteral: the function builds a value of Callee, a
	// package-qualified type (&http.Transport{}, new(http.Client)).
	CallKindLiteral = "literal"
	// CallKindFile: the file was indexed; Callee is its module path and
	// Function is empty.
	CallKindFile = "file"
	// CallKindTruncated: the index of the module Callee stopped at its
	// bounds, so it does not hold every call of the module.
	CallKindTruncated = "truncated"
)

// SourceCallsSchema: the calls of the program's own source into other
// packages, read with go/parser when the bundle was made from the
// directories of the program's main package and every other package of
// its module. One row per call site (the enclosing declaration's symbol,
// as a stack frame names it, and the line), and one row per file indexed.
var SourceCallsSchema = schemaOf(TableSourceCalls,
	field(ColFile, DictString, false),
	field(ColFunction, DictString, false),
	field(ColLine, arrow.PrimitiveTypes.Int64, false),
	field(ColCallee, DictString, false),
	field(ColKind, DictString, false),
)

// Source file columns.
const (
	// ColPackage is the import path of a file's package.
	ColPackage = "package"
)

// SourceFilesSchema: the whole Go files of the program's own packages,
// read when the bundle was made: every file of each directory the frames
// name outside the Go root and the module cache (its _test.go files too
// when the program is a test binary), every non-test file of the other
// packages of its module, and the module's go.mod. One row per file: the
// path as the frames name it, its package's import path ("" for go.mod),
// its text and SHA-256.
var SourceFilesSchema = schemaOf(TableSourceFiles,
	field(ColFile, DictString, false),
	field(ColPackage, DictString, false),
	field(ColText, arrow.BinaryTypes.String, false),
	field(ColFileSHA256, arrow.BinaryTypes.String, false),
	field(ColSource, DictString, false),
)

// Trace generation index columns.
const (
	ColGeneration   = "generation"
	ColOffset       = "offset"
	ColLength       = "length"
	ColWallOffsetNS = "wall_offset_ns"
	ColMonoOffsetNS = "mono_offset_ns"
	ColEvents       = "events"
	ColGoroutines   = "goroutines"
)

// TraceGenerationsSchema: one row per generation of a raw trace: where its
// bytes are in the raw file (offset and length, the file's first 16 bytes
// being the trace header), the wall-clock range of its events, how trace
// time maps to wall and monotonic time in it (time = trace time + offset),
// and how many events and goroutines it holds.
var TraceGenerationsSchema = schemaOf(TableTraceGenerations,
	field(ColSource, DictString, false),
	field(ColGeneration, arrow.PrimitiveTypes.Int64, false),
	field(ColOffset, arrow.PrimitiveTypes.Int64, false),
	field(ColLength, arrow.PrimitiveTypes.Int64, false),
	field(ColStartTS, Timestamp, false),
	field(ColEndTS, Timestamp, false),
	field(ColWallOffsetNS, arrow.PrimitiveTypes.Int64, false),
	field(ColMonoOffsetNS, arrow.PrimitiveTypes.Int64, false),
	field(ColEvents, arrow.PrimitiveTypes.Int64, false),
	field(ColGoroutines, arrow.PrimitiveTypes.Int64, false),
)
