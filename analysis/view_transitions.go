package analysis

import (
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// TransitionSource returns the state changes of the goroutines goids in a
// bundle's execution traces between from and to (wall-clock Unix
// nanoseconds, 0 leaving that end open), sorted by goroutine, then time:
// what a per-goroutine state view (running, runnable, waiting with the
// reason, syscall; the stack of each change) is drawn from.
//
// ingest.Transitions is the implementation (ingest/gotrace.TransitionsFrom,
// with the decompressor for raw traces kept compressed): it decodes them
// on demand from the raw traces, since ingest does not store them.
// Analysis and the web server never import the parsers, so the command
// wires it in (web.Options.Transitions); a view of a suspect asks for its
// member goids and their creators ([AncestryTree.Chain]).
type TransitionSource func(b *bundle.Bundle, goids []int64, from, to int64) ([]schema.Transition, error)
