package flame

import (
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// SourceLine is one line of a function's kept source.
type SourceLine struct {
	Line int64  `json:"line"`
	Text string `json:"text"`
}

// AttachSource adds the function's source as the bundle kept it (the
// source_code table, written at capture or ingest) to the line table, as
// pprof -list prints it beside the values: Text holds every line of the
// declaration, SourceStatus is "ok", "changed" or "unavailable" and
// SourceDetail says why when it is not ok. Nothing is read from this
// machine's disk.
func (t *LineTable) AttachSource(b *bundle.Bundle, mem memory.Allocator) error {
	var found, anyFile bool
	err := b.ReadTable(schema.TableSourceCode, mem, func(rec arrow.Record) error {
		if found {
			return nil
		}
		cf, err := column(rec, schema.TableSourceCode, schema.ColFile)
		if err != nil {
			return err
		}
		cfn, err := column(rec, schema.TableSourceCode, schema.ColFunction)
		if err != nil {
			return err
		}
		files, fns := bundle.NewStrings(cf), bundle.NewStrings(cfn)
		for r := 0; r < int(rec.NumRows()); r++ {
			if fns.Value(r) != t.Function || (t.File != "" && files.Value(r) != t.File) {
				continue
			}
			found = true
			return t.fillSource(rec, r)
		}
		anyFile = anyFile || rec.NumRows() > 0
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return fmt.Errorf("read %s: %w", schema.TableSourceCode, err)
	}
	if !found {
		t.SourceStatus = schema.SourceUnavailable
		t.SourceDetail = "the bundle keeps no source of " + t.Function + ": it was captured or ingested without it"
		if !anyFile {
			t.SourceDetail = "the bundle keeps no source code (captured or ingested without the program's source beside it)"
		}
	}
	return nil
}

// fillSource copies row r of a source_code batch into t.
func (t *LineTable) fillSource(rec arrow.Record, r int) error {
	str := func(name string) (string, error) {
		c, err := column(rec, schema.TableSourceCode, name)
		if err != nil {
			return "", err
		}
		return bundle.NewStrings(c).Value(r), nil
	}
	status, err := str(schema.ColStatus)
	if err != nil {
		return err
	}
	detail, _ := str(schema.ColDetail)
	t.SourceStatus, t.SourceDetail = status, detail
	if status != schema.SourceOK {
		return nil
	}
	text, err := str(schema.ColText)
	if err != nil {
		return err
	}
	_, starts, err := int64Column(rec, schema.TableSourceCode, schema.ColStartLine)
	if err != nil {
		return err
	}
	start := starts[r]
	for i, l := range strings.Split(text, "\n") {
		t.Text = append(t.Text, SourceLine{Line: start + int64(i), Text: l})
	}
	return nil
}
