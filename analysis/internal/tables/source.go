package tables

import (
	"fmt"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// ReadSourceCode calls each with every row of the source_code table
// (none when the bundle has no such table). The row's strings point
// into Arrow memory: each copies what it keeps.
func ReadSourceCode(b *bundle.Bundle, mem memory.Allocator, each func(schema.SourceCode)) error {
	err := b.ReadTable(schema.TableSourceCode, mem, func(rec arrow.Record) error {
		k := cols{rec: rec}
		file, fn, status := k.str(schema.ColFile), k.str(schema.ColFunction), k.str(schema.ColStatus)
		start, end, text := k.i64(schema.ColStartLine), k.i64(schema.ColEndLine), k.str(schema.ColText)
		sha, detail := k.str(schema.ColFileSHA256), k.str(schema.ColDetail)
		for r := 0; r < int(rec.NumRows()); r++ {
			each(schema.SourceCode{File: file(r), Function: fn(r), StartLine: start(r), EndLine: end(r), Text: text(r),
				FileSHA256: sha(r), Status: status(r), Detail: detail(r)})
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return fmt.Errorf("read source code: %w", err)
	}
	return nil
}

// ReadSourceCalls calls each with every row of the source_calls table
// (none when the bundle has no such table); strings point into Arrow
// memory.
func ReadSourceCalls(b *bundle.Bundle, mem memory.Allocator, each func(schema.SourceCall)) error {
	err := b.ReadTable(schema.TableSourceCalls, mem, func(rec arrow.Record) error {
		k := cols{rec: rec}
		file, fn, line := k.str(schema.ColFile), k.str(schema.ColFunction), k.i64(schema.ColLine)
		callee, kind := k.str(schema.ColCallee), k.str(schema.ColKind)
		for r := 0; r < int(rec.NumRows()); r++ {
			each(schema.SourceCall{File: file(r), Function: fn(r), Line: line(r), Callee: callee(r), Kind: kind(r)})
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return fmt.Errorf("read %s: %w", schema.TableSourceCalls, err)
	}
	return nil
}

// ReadSourceFiles calls each with every row of the source_files table
// (its file, package and text; none when the bundle has no such table);
// strings point into Arrow memory.
func ReadSourceFiles(b *bundle.Bundle, mem memory.Allocator, each func(schema.SourceFile)) error {
	err := b.ReadTable(schema.TableSourceFiles, mem, func(rec arrow.Record) error {
		k := cols{rec: rec}
		file, pkg, text := k.str(schema.ColFile), k.str(schema.ColPackage), k.str(schema.ColText)
		for r := 0; r < int(rec.NumRows()); r++ {
			each(schema.SourceFile{File: file(r), Package: pkg(r), Text: text(r)})
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return fmt.Errorf("read %s: %w", schema.TableSourceFiles, err)
	}
	return nil
}
