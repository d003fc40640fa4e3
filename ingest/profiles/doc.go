// Package profiles ingests pprof profiles — every profile the Go runtime
// writes (goroutine, heap, allocs, cpu, block, mutex, threadcreate,
// goroutineleak), gzipped or not — into a bundle's samples table, with
// stacks and frames interned in the bundle's shared dictionaries.
//
// Parsing is github.com/google/pprof/profile's: a profile is validated in
// full before the first row is written, so a corrupt profile adds nothing.
package profiles
