package schema

import (
	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
)

// TraceGeneration is one row of the trace_generations table.
type TraceGeneration struct {
	Source       string // the raw trace, relative to the bundle (raw/NAME)
	Generation   int64
	Offset       int64 // of the generation's first batch in the raw trace
	Length       int64
	StartTS      int64
	EndTS        int64
	WallOffsetNS int64 // wall time = trace time + WallOffsetNS
	MonoOffsetNS int64 // CLOCK_MONOTONIC = trace time + MonoOffsetNS
	Events       int64
	Goroutines   int64
}

// Frame is one row of the frames table.
type Frame struct {
	ID       int64
	Function string
	File     string
	Line     int64
	Inlined  bool
}

// Stack is one row of the stacks table; FrameIDs are leaf first.
type Stack struct {
	ID       int64
	FrameIDs []int64
}

// Sample is one row of the samples table. Values holds one number per
// entry of [ValueColumns]; only those whose bit is set in Present are
// written, the others are null.
type Sample struct {
	SnapshotTS int64
	Profile    string
	StackID    int64
	Values     [NumValues]int64
	Present    uint16
	Labels     string
	Source     string
}

// Goroutine is one row of the goroutines table.
type Goroutine struct {
	SnapshotTS      int64
	Goid            int64
	State           string
	WaitMinutes     int64
	LockedThread    bool
	StackID         int64
	CreatorGoid     int64
	CreatorFunction string
	CreatorStackID  int64
	Labels          string
	FramesElided    bool
	Source          string
	// FrameArgs has one entry per frame of StackID, leaf first: the
	// argument text printed between the frame's parentheses (see
	// [ColFrameArgs]). Nil writes null: the source printed no frames.
	FrameArgs []string
}

// Race is one row of the races table: one access of a race report.
type Race struct {
	SnapshotTS      int64
	Race            int64
	Access          string
	Addr            int64
	Goid            int64
	StackID         int64
	GoroutineState  string
	CreationStackID int64
	Location        string
	Source          string
}

// TraceGoroutine is one row of the trace_goroutines table.
type TraceGoroutine struct {
	Goid            int64
	ParentGoid      int64
	CreatedTS       int64
	EndedTS         int64
	CreationStackID int64
	StartFunction   string
	LastState       string
	LastReason      string
	LastStackID     int64
}

// Transition is one row of the trace_transitions table.
type Transition struct {
	TS      int64
	MonoNS  int64
	Goid    int64
	From    string
	To      string
	Reason  string
	StackID int64
}

// Span is one row of the spans table.
type Span struct {
	ID       int64
	ParentID int64
	Kind     string
	Name     string
	Goid     int64
	TaskID   int64
	StartTS  int64
	EndTS    int64
	Message  string
}

// Metric is one row of the metrics table.
type Metric struct {
	TS     int64
	Name   string
	Value  float64
	Source string
}

// EBPFEvent is one row of the ebpf_events table.
type EBPFEvent struct {
	TS         int64
	MonoNS     int64
	Kind       string
	PID        int64
	TID        int64
	Goid       int64
	ParentGoid int64
	PC         uint64
	Size       int64
	StackID    int64
}

// ClockSync is one row of the clock_sync table.
type ClockSync struct {
	MonoNS int64
	TS     int64
	Source string
}

// ProbeWindow is one row of the probe_windows table.
type ProbeWindow struct {
	Probes             string
	StartTS, EndTS     int64
	StartMono, EndMono int64
	ToEnd              bool
}

// Row is implemented by every row struct: it appends itself to a record
// builder made from its table's schema.
type Row interface {
	Table() string
	AppendTo(b *array.RecordBuilder)
}

func i64(b *array.RecordBuilder, i int, v int64) { b.Field(i).(*array.Int64Builder).Append(v) }

// optI64 appends v, or null when v is zero.
func optI64(b *array.RecordBuilder, i int, v int64) {
	if v == 0 {
		b.Field(i).AppendNull()
		return
	}
	i64(b, i, v)
}

func ts(b *array.RecordBuilder, i int, v int64) {
	b.Field(i).(*array.TimestampBuilder).Append(arrow.Timestamp(v))
}

func optTS(b *array.RecordBuilder, i int, v int64) {
	if v == 0 {
		b.Field(i).AppendNull()
		return
	}
	ts(b, i, v)
}

func str(b *array.RecordBuilder, i int, v string) { b.Field(i).(*array.StringBuilder).Append(v) }

func dict(b *array.RecordBuilder, i int, v string) {
	// AppendString on a string dictionary builder only fails on a type
	// mismatch, which the fixed schemas rule out.
	_ = b.Field(i).(*array.BinaryDictionaryBuilder).AppendString(v)
}

// strList appends v as a list of strings, or null when v is nil.
func strList(b *array.RecordBuilder, i int, v []string) {
	lb := b.Field(i).(*array.ListBuilder)
	if v == nil {
		lb.AppendNull()
		return
	}
	lb.Append(true)
	lb.ValueBuilder().(*array.StringBuilder).AppendStringValues(v, nil)
}

func boolean(b *array.RecordBuilder, i int, v bool) { b.Field(i).(*array.BooleanBuilder).Append(v) }

// Table implements [Row].
func (Frame) Table() string { return TableFrames }

// AppendTo implements [Row].
func (r Frame) AppendTo(b *array.RecordBuilder) {
	i64(b, 0, r.ID)
	dict(b, 1, r.Function)
	dict(b, 2, r.File)
	i64(b, 3, r.Line)
	boolean(b, 4, r.Inlined)
}

// Table implements [Row].
func (Stack) Table() string { return TableStacks }

// AppendTo implements [Row].
func (r Stack) AppendTo(b *array.RecordBuilder) {
	i64(b, 0, r.ID)
	lb := b.Field(1).(*array.ListBuilder)
	lb.Append(true)
	vb := lb.ValueBuilder().(*array.Int64Builder)
	vb.AppendValues(r.FrameIDs, nil)
}

// Table implements [Row].
func (Sample) Table() string { return TableSamples }

// AppendTo implements [Row].
func (r Sample) AppendTo(b *array.RecordBuilder) {
	ts(b, 0, r.SnapshotTS)
	dict(b, 1, r.Profile)
	i64(b, 2, r.StackID)
	for k := 0; k < NumValues; k++ {
		if r.Present&(1<<k) == 0 {
			b.Field(3 + k).AppendNull()
		} else {
			i64(b, 3+k, r.Values[k])
		}
	}
	str(b, 3+NumValues, r.Labels)
	dict(b, 4+NumValues, r.Source)
}

// Set stores v as the value of column col (one of [ValueColumns]) and
// reports whether col is a known value column.
func (r *Sample) Set(col string, v int64) bool {
	for k, c := range ValueColumns {
		if c == col {
			r.Values[k] = v
			r.Present |= 1 << k
			return true
		}
	}
	return false
}

// Table implements [Row].
func (Goroutine) Table() string { return TableGoroutines }

// AppendTo implements [Row].
func (r Goroutine) AppendTo(b *array.RecordBuilder) {
	ts(b, 0, r.SnapshotTS)
	i64(b, 1, r.Goid)
	dict(b, 2, r.State)
	i64(b, 3, r.WaitMinutes)
	boolean(b, 4, r.LockedThread)
	optI64(b, 5, r.StackID)
	optI64(b, 6, r.CreatorGoid)
	dict(b, 7, r.CreatorFunction)
	optI64(b, 8, r.CreatorStackID)
	str(b, 9, r.Labels)
	boolean(b, 10, r.FramesElided)
	dict(b, 11, r.Source)
	strList(b, 12, r.FrameArgs)
}

// Table implements [Row].
func (TraceGoroutine) Table() string { return TableTraceGoroutines }

// AppendTo implements [Row].
func (r TraceGoroutine) AppendTo(b *array.RecordBuilder) {
	i64(b, 0, r.Goid)
	optI64(b, 1, r.ParentGoid)
	optTS(b, 2, r.CreatedTS)
	optTS(b, 3, r.EndedTS)
	optI64(b, 4, r.CreationStackID)
	dict(b, 5, r.StartFunction)
	dict(b, 6, r.LastState)
	dict(b, 7, r.LastReason)
	optI64(b, 8, r.LastStackID)
}

// Table implements [Row].
func (Transition) Table() string { return TableTraceTransitions }

// AppendTo implements [Row].
func (r Transition) AppendTo(b *array.RecordBuilder) {
	ts(b, 0, r.TS)
	i64(b, 1, r.MonoNS)
	i64(b, 2, r.Goid)
	dict(b, 3, r.From)
	dict(b, 4, r.To)
	dict(b, 5, r.Reason)
	optI64(b, 6, r.StackID)
}

// Table implements [Row].
func (Span) Table() string { return TableSpans }

// AppendTo implements [Row].
func (r Span) AppendTo(b *array.RecordBuilder) {
	i64(b, 0, r.ID)
	optI64(b, 1, r.ParentID)
	dict(b, 2, r.Kind)
	dict(b, 3, r.Name)
	optI64(b, 4, r.Goid)
	optI64(b, 5, r.TaskID)
	optTS(b, 6, r.StartTS)
	optTS(b, 7, r.EndTS)
	str(b, 8, r.Message)
}

// Table implements [Row].
func (Metric) Table() string { return TableMetrics }

// AppendTo implements [Row].
func (r Metric) AppendTo(b *array.RecordBuilder) {
	ts(b, 0, r.TS)
	dict(b, 1, r.Name)
	b.Field(2).(*array.Float64Builder).Append(r.Value)
	dict(b, 3, r.Source)
}

// Table implements [Row].
func (EBPFEvent) Table() string { return TableEBPFEvents }

// AppendTo implements [Row].
func (r EBPFEvent) AppendTo(b *array.RecordBuilder) {
	ts(b, 0, r.TS)
	i64(b, 1, r.MonoNS)
	dict(b, 2, r.Kind)
	i64(b, 3, r.PID)
	i64(b, 4, r.TID)
	optI64(b, 5, r.Goid)
	optI64(b, 6, r.ParentGoid)
	if r.PC == 0 {
		b.Field(7).AppendNull()
	} else {
		b.Field(7).(*array.Uint64Builder).Append(r.PC)
	}
	optI64(b, 8, r.Size)
	optI64(b, 9, r.StackID)
}

// Table implements [Row].
func (ClockSync) Table() string { return TableClockSync }

// AppendTo implements [Row].
func (r ClockSync) AppendTo(b *array.RecordBuilder) {
	i64(b, 0, r.MonoNS)
	ts(b, 1, r.TS)
	dict(b, 2, r.Source)
}

// Table implements [Row].
func (ProbeWindow) Table() string { return TableProbeWindows }

// AppendTo implements [Row].
func (r ProbeWindow) AppendTo(b *array.RecordBuilder) {
	dict(b, 0, r.Probes)
	ts(b, 1, r.StartTS)
	ts(b, 2, r.EndTS)
	i64(b, 3, r.StartMono)
	i64(b, 4, r.EndMono)
	boolean(b, 5, r.ToEnd)
}

// Table implements [Row].
func (Race) Table() string { return TableRaces }

// AppendTo implements [Row].
func (r Race) AppendTo(b *array.RecordBuilder) {
	ts(b, 0, r.SnapshotTS)
	i64(b, 1, r.Race)
	dict(b, 2, r.Access)
	i64(b, 3, r.Addr)
	i64(b, 4, r.Goid)
	optI64(b, 5, r.StackID)
	dict(b, 6, r.GoroutineState)
	optI64(b, 7, r.CreationStackID)
	str(b, 8, r.Location)
	dict(b, 9, r.Source)
}

// SourceCode is one row of the source_code table. StartLine and EndLine
// are 0 (null) unless Status is [SourceOK].
type SourceCode struct {
	File, Function     string
	StartLine, EndLine int64
	Text               string
	FileSHA256         string
	Status, Detail     string
	// Source says where the file was read ("capture", "ingest").
	Source string
}

// Table implements [Row].
func (SourceCode) Table() string { return TableSourceCode }

// AppendTo implements [Row].
func (r SourceCode) AppendTo(b *array.RecordBuilder) {
	dict(b, 0, r.File)
	dict(b, 1, r.Function)
	optI64(b, 2, r.StartLine)
	optI64(b, 3, r.EndLine)
	str(b, 4, r.Text)
	str(b, 5, r.FileSHA256)
	dict(b, 6, r.Status)
	str(b, 7, r.Detail)
	dict(b, 8, r.Source)
}

// Table implements [Row].
func (TraceGeneration) Table() string { return TableTraceGenerations }

// AppendTo implements [Row].
func (r TraceGeneration) AppendTo(b *array.RecordBuilder) {
	dict(b, 0, r.Source)
	i64(b, 1, r.Generation)
	i64(b, 2, r.Offset)
	i64(b, 3, r.Length)
	ts(b, 4, r.StartTS)
	ts(b, 5, r.EndTS)
	i64(b, 6, r.WallOffsetNS)
	i64(b, 7, r.MonoOffsetNS)
	i64(b, 8, r.Events)
	i64(b, 9, r.Goroutines)
}

// SourceCall is one row of the source_calls table.
type SourceCall struct {
	File, Function string
	Line           int64
	Callee, Kind   string
}

// Table implements [Row].
func (SourceCall) Table() string { return TableSourceCalls }

// AppendTo implements [Row].
func (r SourceCall) AppendTo(b *array.RecordBuilder) {
	dict(b, 0, r.File)
	dict(b, 1, r.Function)
	i64(b, 2, r.Line)
	dict(b, 3, r.Callee)
	dict(b, 4, r.Kind)
}

// SourceFile is one row of the source_files table.
type SourceFile struct {
	File, Package string
	Text          string
	FileSHA256    string
	// Source says where the file was read ("capture", "ingest").
	Source string
}

// Table implements [Row].
func (SourceFile) Table() string { return TableSourceFiles }

// AppendTo implements [Row].
func (r SourceFile) AppendTo(b *array.RecordBuilder) {
	dict(b, 0, r.File)
	dict(b, 1, r.Package)
	str(b, 2, r.Text)
	str(b, 3, r.FileSHA256)
	dict(b, 4, r.Source)
}
