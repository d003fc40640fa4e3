// Package bundle reads and writes leakscope capture bundles: a directory
// NAME.lsb/ holding manifest.json, one Arrow IPC stream file per table
// (TABLE.arrow, zstd-compressed) and raw/ with the original artifacts.
//
// A [Writer] appends rows in record batches and flushes every table at least
// once a second, so a writer killed with SIGKILL leaves a readable prefix of
// every table. Adding to an existing bundle copies each touched table to
// TABLE.arrow.tmp and renames it over the original on Close, so a failed
// ingest never loses what the bundle already held.
//
// A [Bundle] opened for reading streams each table batch by batch; a table
// cut short by a crash yields its complete batches followed by a
// [*PartialError].
package bundle
