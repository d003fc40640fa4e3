package capture

import (
	"io"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/dump"
	"github.com/leakscope/leakscope/ingest/gotrace"
	"github.com/leakscope/leakscope/ingest/profiles"
)

// The ingest functions each artifact is passed to as it arrives.
var (
	ingestProfile = profiles.Ingest
	ingestDump    = dump.Ingest
	ingestTrace   = func(w *bundle.Writer, r io.Reader, a *bundle.Artifact, wallOffsetNS int64) error {
		// a.Time is the request start; the trace ends about one window
		// later, but with an offset (or the trace's own clock snapshots)
		// Now is only a last resort.
		return gotrace.Ingest(w, r, a, gotrace.Options{WallOffsetNS: wallOffsetNS, Now: time.Now()})
	}
)
