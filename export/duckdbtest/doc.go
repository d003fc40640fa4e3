// Package duckdbtest queries leakscope's Parquet export with a real engine,
// DuckDB. It is a module of its own so that the leakscope binary and the
// main module's dependencies never include DuckDB (a cgo build of the
// engine); `make test` runs it.
package duckdbtest
