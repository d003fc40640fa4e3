// Package ingest turns artifacts a user already has — pprof profiles,
// goroutine dumps and Go execution traces — into a capture bundle.
//
// [Detect] recognises a file's kind from its content (never its name), and
// [File] adds one file to a bundle as a unit: its rows, its original under
// raw/ and its manifest entry land together, or — when the file turns out to
// be corrupt — nothing does, and the bundle keeps what it held before.
//
// The parsers live in subpackages: profiles (pprof), dump (goroutine dumps
// and crash tracebacks) and gotrace (execution traces). The bundle format is
// in bundle and schema.
package ingest
