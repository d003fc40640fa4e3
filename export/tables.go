package export

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// Columns every exported table of this package shares with the captures
// table, so the suspects table alone answers fleet questions. The node and
// capture id come from the hive path (node=…/capture=…).
var serviceFields = []arrow.Field{
	{Name: "capture_id", Type: arrow.BinaryTypes.String},
	{Name: "service", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "exe", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "module", Type: arrow.BinaryTypes.String, Nullable: true},
}

// SuspectsSchema is the schema of the suspects table: the fields of
// [analysis.Suspect] that are one value per suspect. A value the report
// does not know (no retained heap measured, no fit, no origin or onset
// found, a heap suspect's wait) is null, never 0.
var SuspectsSchema = arrow.NewSchema(append(append([]arrow.Field{}, serviceFields...),
	arrow.Field{Name: "id", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "kind", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "pattern", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "title", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "verdict", Type: arrow.BinaryTypes.String, Nullable: true},
	arrow.Field{Name: "state", Type: arrow.BinaryTypes.String, Nullable: true},
	arrow.Field{Name: "location", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "file", Type: arrow.BinaryTypes.String, Nullable: true},
	arrow.Field{Name: "line", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	arrow.Field{Name: "creator", Type: arrow.BinaryTypes.String, Nullable: true},
	arrow.Field{Name: "ancestry", Type: arrow.ListOf(arrow.BinaryTypes.String)},
	arrow.Field{Name: "origin", Type: arrow.BinaryTypes.String, Nullable: true},
	arrow.Field{Name: "origin_file", Type: arrow.BinaryTypes.String, Nullable: true},
	arrow.Field{Name: "origin_line", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	arrow.Field{Name: "origin_basis", Type: arrow.BinaryTypes.String, Nullable: true},
	arrow.Field{Name: "incident", Type: arrow.BinaryTypes.String, Nullable: true},
	arrow.Field{Name: "count", Type: arrow.PrimitiveTypes.Int64},
	arrow.Field{Name: "count_at", Type: schema.Timestamp, Nullable: true},
	arrow.Field{Name: "growth_per_min", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	arrow.Field{Name: "fit_r2", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	arrow.Field{Name: "first_seen", Type: schema.Timestamp, Nullable: true},
	arrow.Field{Name: "onset", Type: schema.Timestamp, Nullable: true},
	arrow.Field{Name: "onset_earliest", Type: schema.Timestamp, Nullable: true},
	arrow.Field{Name: "onset_latest", Type: schema.Timestamp, Nullable: true},
	arrow.Field{Name: "onset_basis", Type: arrow.BinaryTypes.String, Nullable: true},
	arrow.Field{Name: "max_wait_minutes", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	arrow.Field{Name: "retained_bytes", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	arrow.Field{Name: "score", Type: arrow.PrimitiveTypes.Float64},
	arrow.Field{Name: "confidence", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	arrow.Field{Name: "goroutineleak", Type: arrow.BinaryTypes.String, Nullable: true},
	arrow.Field{Name: "stack_id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
), nil)

// CapturesSchema is the schema of the one-row captures table.
var CapturesSchema = arrow.NewSchema(append(append([]arrow.Field{}, serviceFields...),
	arrow.Field{Name: "pid", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	arrow.Field{Name: "url", Type: arrow.BinaryTypes.String, Nullable: true},
	arrow.Field{Name: "go_version", Type: arrow.BinaryTypes.String, Nullable: true},
	arrow.Field{Name: "start", Type: schema.Timestamp, Nullable: true},
	arrow.Field{Name: "end", Type: schema.Timestamp, Nullable: true},
	arrow.Field{Name: "sources", Type: arrow.ListOf(arrow.BinaryTypes.String)},
	arrow.Field{Name: "suspects", Type: arrow.PrimitiveTypes.Int64},
	arrow.Field{Name: "goroutine_snapshots", Type: arrow.PrimitiveTypes.Int64},
	arrow.Field{Name: "peak_goroutines", Type: arrow.PrimitiveTypes.Int64},
	arrow.Field{Name: "tool", Type: arrow.BinaryTypes.String},
	// The build (bundle.Target.Build) and its parts from the build info.
	arrow.Field{Name: "build", Type: arrow.BinaryTypes.String, Nullable: true},
	arrow.Field{Name: "module_version", Type: arrow.BinaryTypes.String, Nullable: true},
	arrow.Field{Name: "vcs_revision", Type: arrow.BinaryTypes.String, Nullable: true},
	// What started the capture (the manifest's trigger): its source
	// (alert, rule), the sentence every view shows, and for an alert its
	// name, labels (sorted key=value) and when it began firing.
	arrow.Field{Name: "trigger", Type: arrow.BinaryTypes.String, Nullable: true},
	arrow.Field{Name: "trigger_text", Type: arrow.BinaryTypes.String, Nullable: true},
	arrow.Field{Name: "trigger_at", Type: schema.Timestamp, Nullable: true},
	arrow.Field{Name: "alert", Type: arrow.BinaryTypes.String, Nullable: true},
	arrow.Field{Name: "alert_labels", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	arrow.Field{Name: "alert_fired_at", Type: schema.Timestamp, Nullable: true},
), nil)

// rowBuilder appends values column by column in schema order.
type rowBuilder struct {
	b *array.RecordBuilder
	i int
}

func (r *rowBuilder) next() array.Builder { f := r.b.Field(r.i); r.i++; return f }

func (r *rowBuilder) str(s string) { r.next().(*array.StringBuilder).Append(validUTF8(s)) }

// optStr appends s, or null when it is empty.
func (r *rowBuilder) optStr(s string) {
	b := r.next().(*array.StringBuilder)
	if s == "" {
		b.AppendNull()
		return
	}
	b.Append(validUTF8(s))
}

func (r *rowBuilder) i64(v int64) { r.next().(*array.Int64Builder).Append(v) }

// optI64 appends v, or null when it is zero.
func (r *rowBuilder) optI64(v int64) {
	b := r.next().(*array.Int64Builder)
	if v == 0 {
		b.AppendNull()
		return
	}
	b.Append(v)
}

// optI64Known appends v, or null when known is false.
func (r *rowBuilder) optI64Known(v int64, known bool) {
	b := r.next().(*array.Int64Builder)
	if !known {
		b.AppendNull()
		return
	}
	b.Append(v)
}

func (r *rowBuilder) f64(v float64) { r.next().(*array.Float64Builder).Append(v) }

// optF64 appends v, or null when known is false.
func (r *rowBuilder) optF64(v float64, known bool) {
	b := r.next().(*array.Float64Builder)
	if !known {
		b.AppendNull()
		return
	}
	b.Append(v)
}

// time appends t, or null for the zero time.
func (r *rowBuilder) time(t time.Time) { r.ts(t.UnixNano(), t.IsZero()) }

// ts appends a time, or null for the zero time.
func (r *rowBuilder) ts(unixNano int64, zero bool) {
	b := r.next().(*array.TimestampBuilder)
	if zero {
		b.AppendNull()
		return
	}
	b.Append(arrow.Timestamp(unixNano))
}

func (r *rowBuilder) strs(ss []string) {
	b := r.next().(*array.ListBuilder)
	b.Append(true)
	vb := b.ValueBuilder().(*array.StringBuilder)
	for _, s := range ss {
		vb.Append(validUTF8(s))
	}
}

func (r *rowBuilder) service(m bundle.Manifest) {
	r.str(m.CaptureID)
	r.optStr(m.Target.Service())
	r.optStr(m.Target.Exe)
	r.optStr(m.Target.ModulePath)
}

// suspectsRecord is the suspects table of a report.
func suspectsRecord(rep *analysis.Report, m bundle.Manifest, mem memory.Allocator) arrow.Record {
	b := array.NewRecordBuilder(mem, SuspectsSchema)
	defer b.Release()
	for _, s := range rep.Suspects {
		r := rowBuilder{b: b}
		r.service(m)
		r.str(s.ID)
		r.str(s.Kind)
		r.str(s.Pattern)
		r.str(s.Title)
		r.optStr(s.Verdict)
		r.optStr(s.State)
		r.str(s.Location)
		r.optStr(s.File)
		r.optI64(int64(s.Line))
		r.optStr(s.Creator)
		r.strs(s.Ancestry)
		var o analysis.Origin
		if s.Origin != nil {
			o = *s.Origin
		}
		r.optStr(o.Function)
		r.optStr(o.File)
		r.optI64(int64(o.Line))
		r.optStr(o.Basis)
		r.optStr(s.Incident)
		r.i64(s.Count)
		r.time(s.CountAt)
		r.optF64(s.GrowthPerMin, s.Range != nil)
		r.optF64(s.Fit.R2, s.Range != nil)
		r.time(s.FirstSeen)
		var on analysis.Onset
		if s.Onset != nil {
			on = *s.Onset
		}
		r.time(on.At)
		r.time(on.Earliest)
		r.time(on.Latest)
		r.optStr(on.Basis)
		r.optI64Known(s.MaxWaitMinutes, s.Kind != analysis.KindHeap)
		r.optI64(s.RetainedBytes)
		r.f64(s.Score)
		r.optF64(s.Confidence, s.Confidence != 0)
		r.optStr(s.LeakProfile)
		r.optI64(s.StackID)
	}
	return b.NewRecord()
}

// capturesRecord is the one-row captures table of a bundle.
func capturesRecord(m bundle.Manifest, rep *analysis.Report, mem memory.Allocator) arrow.Record {
	b := array.NewRecordBuilder(mem, CapturesSchema)
	defer b.Release()
	r := rowBuilder{b: b}
	r.service(m)
	r.optI64(int64(m.Target.PID))
	r.optStr(m.Target.URL)
	r.optStr(m.Target.GoVersion)
	r.ts(m.Start.UnixNano(), m.Start.IsZero())
	r.ts(m.End.UnixNano(), m.End.IsZero())
	r.strs(rep.Bundle.Sources)
	r.i64(int64(len(rep.Suspects)))
	r.i64(int64(rep.Bundle.GoroutineSnapshots))
	r.i64(rep.Bundle.PeakGoroutines)
	r.str(strings.TrimSpace(m.Tool))
	r.optStr(m.Target.Build())
	r.optStr(m.Target.ModuleVersion)
	r.optStr(m.Target.VCSRevision)
	triggerColumns(&r, m.Trigger, rep.Bundle.TriggerText)
	return b.NewRecord()
}

// triggerColumns appends the trigger's columns of the captures table,
// null where the capture has no trigger or no alert.
func triggerColumns(r *rowBuilder, t *bundle.Trigger, text string) {
	var al bundle.Alert
	var src string
	var at time.Time
	if t != nil {
		src, at = t.Source, t.At
		if t.Alert != nil {
			al = *t.Alert
		}
	}
	r.optStr(src)
	r.optStr(text)
	r.time(at)
	r.optStr(al.Name)
	labels := r.next().(*array.ListBuilder)
	if al.Labels == nil {
		labels.AppendNull()
	} else {
		labels.Append(true)
		vb := labels.ValueBuilder().(*array.StringBuilder)
		for _, k := range slices.Sorted(maps.Keys(al.Labels)) {
			vb.Append(validUTF8(k + "=" + al.Labels[k]))
		}
	}
	r.time(al.StartsAt)
}
