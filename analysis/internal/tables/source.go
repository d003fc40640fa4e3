package tables

import (
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// ReadSourceCode calls each with every row of the source_code table
// (none when the bundle has no such table). The row's strings point
// into Arrow memory: each copies what it keeps.
func ReadSourceCode(b *bundle.Bundle, mem memory.Allocator, each func(schema.SourceCode)) error {
	return readRows(b, mem, schema.TableSourceCode, "source code", func(k cols, rows int) {
		file, fn, status := k.str(schema.ColFile), k.str(schema.ColFunction), k.str(schema.ColStatus)
		start, end, text := k.i64(schema.ColStartLine), k.i64(schema.ColEndLine), k.str(schema.ColText)
		sha, detail := k.str(schema.ColFileSHA256), k.str(schema.ColDetail)
		for r := 0; r < rows; r++ {
			each(schema.SourceCode{File: file(r), Function: fn(r), StartLine: start(r), EndLine: end(r), Text: text(r),
				FileSHA256: sha(r), Status: status(r), Detail: detail(r)})
		}
	})
}

// ReadSourceCalls calls each with every row of the source_calls table
// (none when the bundle has no such table); strings point into Arrow
// memory.
func ReadSourceCalls(b *bundle.Bundle, mem memory.Allocator, each func(schema.SourceCall)) error {
	return readRows(b, mem, schema.TableSourceCalls, schema.TableSourceCalls, func(k cols, rows int) {
		file, fn, line := k.str(schema.ColFile), k.str(schema.ColFunction), k.i64(schema.ColLine)
		callee, kind := k.str(schema.ColCallee), k.str(schema.ColKind)
		for r := 0; r < rows; r++ {
			each(schema.SourceCall{File: file(r), Function: fn(r), Line: line(r), Callee: callee(r), Kind: kind(r)})
		}
	})
}

// ReadSourceFiles calls each with every row of the source_files table
// (its file, package and text; none when the bundle has no such table);
// strings point into Arrow memory.
func ReadSourceFiles(b *bundle.Bundle, mem memory.Allocator, each func(schema.SourceFile)) error {
	return readRows(b, mem, schema.TableSourceFiles, schema.TableSourceFiles, func(k cols, rows int) {
		file, pkg, text := k.str(schema.ColFile), k.str(schema.ColPackage), k.str(schema.ColText)
		for r := 0; r < rows; r++ {
			each(schema.SourceFile{File: file(r), Package: pkg(r), Text: text(r)})
		}
	})
}
