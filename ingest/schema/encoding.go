package schema

import (
	"github.com/apache/arrow/go/v15/arrow"
)

// Encoding is how a bundle stores an int64 or timestamp column in a form
// its compression packs tighter than the values themselves: an int64
// column under another name, in the column's place, holding
//
//   - with Base "", deltas: each row's value less the previous row's in
//     the same record batch (the first row's less 0), taken over the whole
//     value buffer, null slots included, with wrapping arithmetic, so that
//     decoding gives back every value exactly;
//   - with Base a column of the same table (stored as it is, or decoded
//     first), each row's value less Base's in that row, 0 in a null slot
//     (decoded as 0).
//
// With Low set, that stored value is split in two: its low 16 bits in a
// uint16 column named Low (not nullable), after the table's columns in
// the order of the encodings, and the rest (the value shifted right by
// 16 bits, sign kept) in the int64 column Stored; the value is
// Stored<<16 | Low.
//
// The validity bitmap is stored as it is, on the Stored column. Readers of
// a bundle (bundle.ReadTable) see the column as the schema declares it;
// only the table file holds the stored form.
type Encoding struct {
	Column string // the column readers see
	Stored string // the name of the stored column, which takes its place
	Base   string // "" for deltas, else the column subtracted in each row
	Low    string // the stored column of the low 16 bits, "" for none
	// Former are the stored forms of the column in earlier schemas,
	// newest first, which readers still decode (their Column and Former
	// are unset).
	Former []Encoding
}

// encodings lists, per table, the columns stored as differences, in the
// order decoding needs them (a Base before a column stored less it).
// spans and trace_goroutines hold millions of rows per trace, ids that
// rise by small steps and times close to each other; stored as they are,
// those took 1.3 times the size of the trace they came from. The times'
// differences are mostly under 2^16 ns but vary in their low bits, which
// LZ4 leaves at about 2 bytes a row within int64 values; as a uint16
// column of their own they take about 1 (schema 4). Spans are written as
// they end, so their ends rise by small steps, and a span's start is
// stored less its end: a duration is smaller than the step between two
// spans' starts, which end in another order (schema 5: spans tables of
// span-heavy traces 8-10 % smaller).
var encodings = map[string][]Encoding{
	TableSpans: {
		{Column: ColSpanID, Stored: "span_id_delta"},
		{Column: ColGoid, Stored: "goid_delta"},
		{Column: ColTaskID, Stored: "task_id_delta"},
		// A region's parent is mostly its task; a task's is mostly null.
		{Column: ColParentSpanID, Stored: "parent_span_id_less_task_id", Base: ColTaskID},
		{Column: ColEndTS, Stored: "end_ts_delta_high", Low: "end_ts_delta_low", Former: schema3Delta("end_ts_delta")},
		{Column: ColStartTS, Stored: "start_ts_less_end_ts_high", Base: ColEndTS, Low: "start_ts_less_end_ts_low",
			Former: append([]Encoding{{Stored: "start_ts_delta_high", Low: "start_ts_delta_low"}}, schema3Delta("start_ts_delta")...)},
	},
	TableTraceGoroutines: {
		{Column: ColGoid, Stored: "goid_delta"},
		{Column: ColCreatedTS, Stored: "created_ts_delta_high", Low: "created_ts_delta_low", Former: schema3Delta("created_ts_delta")},
		{Column: ColEndedTS, Stored: "ended_ts_delta_high", Low: "ended_ts_delta_low", Former: schema3Delta("ended_ts_delta")},
	},
}

// schema3Delta is the schema-3 form of a time column: its deltas whole,
// in one int64 column.
func schema3Delta(stored string) []Encoding { return []Encoding{{Stored: stored}} }

// Encodings returns the stored encodings of table's columns (nil for a
// table stored as it is read).
func Encodings(table string) []Encoding { return encodings[table] }

// storedSchemas caches StoredSchema's results.
var storedSchemas = map[string]*arrow.Schema{}

func init() {
	for table := range encodings {
		storedSchemas[table] = storedSchema(Schemas[table], encodings[table])
	}
}

// StoredSchema returns the schema table is written with: the table's
// schema with each encoded column replaced by its stored int64 column,
// then the uint16 columns of the split ones.
func StoredSchema(table string) *arrow.Schema {
	if sc, ok := storedSchemas[table]; ok {
		return sc
	}
	return Schemas[table]
}

func storedSchema(sc *arrow.Schema, encs []Encoding) *arrow.Schema {
	fields := append([]arrow.Field(nil), sc.Fields()...)
	for _, e := range encs {
		i := sc.FieldIndices(e.Column)[0]
		fields[i] = arrow.Field{Name: e.Stored, Type: arrow.PrimitiveTypes.Int64, Nullable: fields[i].Nullable, Metadata: fields[i].Metadata}
	}
	for _, e := range encs {
		if e.Low != "" {
			fields = append(fields, arrow.Field{Name: e.Low, Type: arrow.PrimitiveTypes.Uint16})
		}
	}
	md := sc.Metadata()
	return arrow.NewSchema(fields, &md)
}
