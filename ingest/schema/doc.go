// Package schema is the leaf package that names every table and column of a
// leakscope capture bundle and builds their Arrow schemas.
//
// It imports only arrow-go. Every other package (ingest, capture, analysis,
// web) refers to columns through the constants declared here, so the bundle
// format is written down in exactly one place; docs/DESIGN.md describes it in
// prose.
//
// Each table has a row struct (for example [Goroutine]) and an Append
// function that adds one row to an [array.RecordBuilder] made from the
// table's schema. Row structs are plain values: producers fill them, the
// bundle writer batches them.
package schema
