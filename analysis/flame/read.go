package flame

import (
	"fmt"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// column returns the named column of rec, or an error naming the table.
func column(rec arrow.Record, table, name string) (arrow.Array, error) {
	idx := rec.Schema().FieldIndices(name)
	if len(idx) == 0 {
		return nil, fmt.Errorf("table %s has no column %s", table, name)
	}
	return rec.Column(idx[0]), nil
}

// int64Values returns the values of an int64 or timestamp column.
// int64Column returns a column of rec and its values as int64 (int64 or
// timestamp columns).
func int64Column(rec arrow.Record, table, name string) (arrow.Array, []int64, error) {
	a, err := column(rec, table, name)
	if err != nil {
		return nil, nil, err
	}
	v, err := int64Values(a, table, name)
	return a, v, err
}

func int64Values(a arrow.Array, table, name string) ([]int64, error) {
	switch c := a.(type) {
	case *array.Int64:
		return c.Int64Values(), nil
	case *array.Timestamp:
		v := c.TimestampValues()
		return arrowTimestamps(v), nil
	}
	return nil, fmt.Errorf("table %s: column %s has type %s, want int64", table, name, a.DataType())
}

// profileMatcher tells, row by row, whether a dictionary or plain string
// column equals want, comparing dictionary indices rather than strings.
type profileMatcher struct {
	want    string
	idx     []int32 // dictionary indices, when int32-indexed
	dict    *array.Dictionary
	wantIdx int
	plain   bundle.Strings
	isPlain bool
}

func newProfileMatcher(a arrow.Array, want string) (profileMatcher, error) {
	m := profileMatcher{want: want, wantIdx: -1}
	switch c := a.(type) {
	case *array.Dictionary:
		vals, ok := c.Dictionary().(*array.String)
		if !ok {
			return m, fmt.Errorf("samples: profile column has dictionary of %s, want string", c.Dictionary().DataType())
		}
		for i := 0; i < vals.Len(); i++ {
			if vals.IsValid(i) && vals.Value(i) == want {
				m.wantIdx = i
				break
			}
		}
		m.dict = c
		if ix, ok := c.Indices().(*array.Int32); ok {
			m.idx = ix.Int32Values()
		}
	case *array.String:
		m.plain = bundle.NewStrings(c)
		m.isPlain = true
	default:
		return m, fmt.Errorf("samples: profile column has type %s, want string", a.DataType())
	}
	return m, nil
}

// none reports whether no row of the batch can match.
func (m *profileMatcher) none() bool { return !m.isPlain && m.wantIdx < 0 }

func (m *profileMatcher) match(i int) bool {
	switch {
	case m.isPlain:
		return m.plain.Value(i) == m.want
	case m.dict.IsNull(i):
		return false
	case m.idx != nil:
		return int(m.idx[i]) == m.wantIdx
	default:
		return m.dict.GetValueIndex(i) == m.wantIdx
	}
}

// addSamples feeds the rows of one samples batch to sel.
func addSamples(rec arrow.Record, sel *selector) error {
	t := schema.TableSamples
	n := int(rec.NumRows())
	if n == 0 {
		return nil
	}
	pc, err := column(rec, t, schema.ColProfile)
	if err != nil {
		return err
	}
	pm, err := newProfileMatcher(pc, sel.q.Profile)
	if err != nil {
		return err
	}
	if pm.none() {
		return nil
	}
	_, tss, err := int64Column(rec, t, schema.ColSnapshotTS)
	if err != nil {
		return err
	}
	stCol, sts, err := int64Column(rec, t, schema.ColStackID)
	if err != nil {
		return err
	}
	vCol, vs, err := int64Column(rec, t, sel.q.Value)
	if err != nil {
		return err
	}
	vNulls := vCol.NullN() > 0
	stNulls := stCol.NullN() > 0
	for i := 0; i < n; i++ {
		if !pm.match(i) {
			continue
		}
		st := sts[i]
		if stNulls && stCol.IsNull(i) {
			st = 0
		}
		v := vs[i]
		if !sel.q.keepStack(st) {
			v = 0
		}
		sel.row(tss[i], st, v, !vNulls || vCol.IsValid(i))
	}
	return nil
}

// addGoroutines feeds the rows of one goroutines batch to sel, one unit per
// goroutine.
func addGoroutines(rec arrow.Record, sel *selector) error {
	t := schema.TableGoroutines
	n := int(rec.NumRows())
	if n == 0 {
		return nil
	}
	_, tss, err := int64Column(rec, t, schema.ColSnapshotTS)
	if err != nil {
		return err
	}
	stCol, sts, err := int64Column(rec, t, schema.ColStackID)
	if err != nil {
		return err
	}
	_, gs, err := int64Column(rec, t, schema.ColGoid)
	if err != nil {
		return err
	}
	stNulls := stCol.NullN() > 0
	for i := 0; i < n; i++ {
		st := sts[i]
		if stNulls && stCol.IsNull(i) {
			st = 0
		}
		v := int64(1)
		if sel.q.goids != nil {
			// Goroutines outside the subset still take part in choosing
			// the snapshot, with weight zero.
			if _, ok := sel.q.goids[gs[i]]; !ok {
				v = 0
			}
		}
		if !sel.q.keepStack(st) {
			v = 0
		}
		sel.row(tss[i], st, v, true)
	}
	return nil
}
