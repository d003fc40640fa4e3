package srclines

import (
	"fmt"
	"path/filepath"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// ForBundle reads, without changing the bundle, the source of the
// functions b's frames name that b holds no readable source of (no row,
// or one unavailable or changed), as [Snapshot] would record it with
// opts: what `leakscope report --source-root` gives the analysis.
func ForBundle(b *bundle.Bundle, mem memory.Allocator, opts Options) ([]schema.SourceCode, Stats, error) {
	var st Stats
	frames, err := bundleFrames(b, mem)
	if err != nil {
		return nil, st, err
	}
	have, err := recordedOK(b, mem)
	if err != nil {
		return nil, st, err
	}
	s := New(opts)
	var rows []schema.SourceCode
	for _, fn := range wanted(frames, have) {
		if s.n >= s.opts.MaxFunctions || s.text >= s.opts.MaxText {
			break
		}
		row := s.row(fn)
		rows = append(rows, row)
		st.count(row)
	}
	return rows, st, nil
}

// CallsForBundle indexes, without changing the bundle, the calls of the
// program's source as [Snapshot] would with opts, for each module of the
// program's own code b's frames name that b holds no index of: what
// `leakscope report --source-root` gives the analysis.
func CallsForBundle(b *bundle.Bundle, mem memory.Allocator, opts Options) ([]schema.SourceCall, error) {
	frames, err := bundleFrames(b, mem)
	if err != nil {
		return nil, err
	}
	s := New(opts)
	own := map[string]bool{}
	for _, d := range s.programDirs(frames) {
		own[d] = true
	}
	for _, f := range frames {
		if own[filepath.Dir(f.File)] && s.files[f.File] == nil {
			s.files[f.File] = readFile(f.File, Candidates(f.File, s.opts))
		}
	}
	var rows []schema.SourceCall
	err = s.indexCalls(b.Dir, frames, func(r schema.SourceCall) error { rows = append(rows, r); return nil })
	return rows, err
}

// bundleFrames reads the frames table.
func bundleFrames(b *bundle.Bundle, mem memory.Allocator) ([]bundle.StackFrame, error) {
	var out []bundle.StackFrame
	err := b.ReadTable(schema.TableFrames, mem, func(rec arrow.Record) error {
		idx := func(name string) int { return rec.Schema().FieldIndices(name)[0] }
		fns := bundle.NewStrings(rec.Column(idx(schema.ColFunction)))
		files := bundle.NewStrings(rec.Column(idx(schema.ColFile)))
		lines, ok := rec.Column(idx(schema.ColLine)).(interface{ Value(int) int64 })
		if !ok {
			return fmt.Errorf("frames: line column is not int64")
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			out = append(out, bundle.StackFrame{Function: fns.Value(i), File: files.Value(i), Line: lines.Value(i)})
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return nil, fmt.Errorf("read %s: %w", schema.TableFrames, err)
	}
	return out, nil
}

// recordedOK returns the (file, function) pairs whose source the
// bundle's source_code table holds readable.
func recordedOK(b *bundle.Bundle, mem memory.Allocator) (map[[2]string]bool, error) {
	have := map[[2]string]bool{}
	err := b.ReadTable(schema.TableSourceCode, mem, func(rec arrow.Record) error {
		idx := func(name string) int { return rec.Schema().FieldIndices(name)[0] }
		files := bundle.NewStrings(rec.Column(idx(schema.ColFile)))
		fns := bundle.NewStrings(rec.Column(idx(schema.ColFunction)))
		status := bundle.NewStrings(rec.Column(idx(schema.ColStatus)))
		for i := 0; i < int(rec.NumRows()); i++ {
			if status.Value(i) == schema.SourceOK {
				have[[2]string{files.Value(i), fns.Value(i)}] = true
			}
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return nil, fmt.Errorf("read %s: %w", schema.TableSourceCode, err)
	}
	return have, nil
}
