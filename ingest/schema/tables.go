package schema

import (
	"slices"

	"github.com/apache/arrow/go/v15/arrow"
)

// Table names. Each table is stored as TABLE.arrow in a bundle.
const (
	TableFrames           = "frames"
	TableStacks           = "stacks"
	TableSamples          = "samples"
	TableGoroutines       = "goroutines"
	TableTraceGoroutines  = "trace_goroutines"
	TableTraceTransitions = "trace_transitions"
	TableSpans            = "spans"
	TableMetrics          = "metrics"
	TableEBPFEvents       = "ebpf_events"
	TableClockSync        = "clock_sync"
	TableRaces            = "races"
	TableSourceCode       = "source_code"
	// TableTraceGenerations indexes the generations of each raw trace, so
	// that one goroutine's transitions can be decoded later from raw/.
	TableTraceGenerations = "trace_generations"
	// TableProbeWindows lists when the eBPF goroutine probes were attached:
	// a capture detaches them between windows to stay within its CPU
	// budget, so a goroutine the probes saw created and not exit may have
	// exited in a gap.
	TableProbeWindows = "probe_windows"
	// TableSourceCalls indexes the calls the program's own source makes
	// into other packages, so that an origin can be found where no stack
	// shows it.
	TableSourceCalls = "source_calls"
	// TableSourceFiles keeps the whole files of the program's own
	// packages, so that the analysis reads the program as Go with types.
	TableSourceFiles = "source_files"
)

// Column names shared by several tables.
const (
	ColTS         = "ts"
	ColMonoNS     = "mono_ns"
	ColSnapshotTS = "snapshot_ts"
	ColStackID    = "stack_id"
	ColFrameID    = "frame_id"
	ColFrameIDs   = "frame_ids"
	ColGoid       = "goid"
	ColLabels     = "labels"
	ColSource     = "source"
	ColFunction   = "function"
	ColFile       = "file"
	ColLine       = "line"
	ColInlined    = "inlined"
)

// Timestamp is the type of every wall-clock column: nanoseconds, UTC.
var Timestamp = &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}

// DictString is the type of string columns with few distinct values.
var DictString = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

// Schemas maps each table name to its schema.
var Schemas = map[string]*arrow.Schema{
	TableFrames:           FramesSchema,
	TableStacks:           StacksSchema,
	TableSamples:          SamplesSchema,
	TableGoroutines:       GoroutinesSchema,
	TableTraceGoroutines:  TraceGoroutinesSchema,
	TableTraceTransitions: TraceTransitionsSchema,
	TableSpans:            SpansSchema,
	TableMetrics:          MetricsSchema,
	TableEBPFEvents:       EBPFEventsSchema,
	TableClockSync:        ClockSyncSchema,
	TableRaces:            RacesSchema,
	TableSourceCode:       SourceCodeSchema,
	TableTraceGenerations: TraceGenerationsSchema,
	TableProbeWindows:     ProbeWindowsSchema,
	TableSourceCalls:      SourceCallsSchema,
	TableSourceFiles:      SourceFilesSchema,
}

// TableNames lists every table in a stable order (dictionaries first).
var TableNames = []string{
	TableFrames, TableStacks, TableSamples, TableGoroutines,
	TableTraceGoroutines, TableTraceTransitions, TableSpans,
	TableMetrics, TableEBPFEvents, TableClockSync, TableRaces, TableSourceCode, TableTraceGenerations,
	TableProbeWindows, TableSourceCalls, TableSourceFiles,
}

func field(name string, t arrow.DataType, nullable bool) arrow.Field {
	return arrow.Field{Name: name, Type: t, Nullable: nullable}
}

// addedKey is the field metadata key marking a column added to its table
// after bundles without it were written.
const addedKey = "leakscope.added"

// added marks f as a column that older bundles lack: a table may end
// before it, and readers take such a missing column as null.
func added(f arrow.Field) arrow.Field {
	f.Metadata = arrow.NewMetadata([]string{addedKey}, []string{"true"})
	return f
}

// Added reports whether the column f was added to its table after the
// first bundles were written, so that a table may lack it.
func Added(f arrow.Field) bool {
	return f.Metadata.FindKey(addedKey) >= 0
}

// removed lists, per table, the columns older bundles have and the table
// no longer does.
var removed = map[string][]string{
	// Schema 2: the monotonic times repeat created_ts and ended_ts less
	// the generation's offsets, which trace_generations holds.
	TableTraceGoroutines: {ColCreatedMonoNS, ColEndedMonoNS},
}

// Removed reports whether column name was dropped from table: an older
// bundle's table may still hold it, and readers leave it out.
func Removed(table, name string) bool { return slices.Contains(removed[table], name) }

const tableKey = "leakscope.table"

// TableOf returns the table a schema of this package describes.
func TableOf(sc *arrow.Schema) string {
	md := sc.Metadata()
	if i := md.FindKey(tableKey); i >= 0 {
		return md.Values()[i]
	}
	return ""
}

func schemaOf(table string, fields ...arrow.Field) *arrow.Schema {
	md := arrow.NewMetadata([]string{tableKey, "leakscope.schema_version"}, []string{table, SchemaVersion})
	return arrow.NewSchema(fields, &md)
}

// SchemaVersion is bumped whenever a column is removed, changes type or
// changes how it is stored. Adding a column keeps the version: columns
// are only added at the end of a table, marked [Added], and readers look
// columns up by name. Schema 3 stores some columns of spans and
// trace_goroutines as deltas ([Encodings]); schema 4 splits the deltas of
// their times into high and low bits; schema 5 stores a span's start less
// its end; bundles of schema 2 hold them as they are, and readers take
// all four.
const SchemaVersion = "5"
