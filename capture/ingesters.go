package capture

import (
	"io"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/dump"
	"github.com/leakscope/leakscope/ingest/gotrace"
	"github.com/leakscope/leakscope/ingest/profiles"
)

// profileLimits bound each profile a capture (and the agent's watch)
// reads from its target, tighter than a file's: a target may serve what
// it likes, and the agent reads it every watch.
var profileLimits = profiles.Limits{MaxBytes: 64 << 20, MaxMemory: 512 << 20}

// The ingest functions each artifact is passed to as it arrives.
var (
	ingestProfile = func(w *bundle.Writer, r io.Reader, a *bundle.Artifact) error {
		return profiles.IngestWith(w, r, a, profiles.Options{Limits: profileLimits})
	}
	ingestDump  = dump.Ingest
	ingestTrace = func(w *bundle.Writer, r io.Reader, a *bundle.Artifact, wallOffsetNS int64) error {
		// a.Time is the request start; the trace ends about one window
		// later, but with an offset (or the trace's own clock snapshots)
		// Now is only a last resort.
		return gotrace.Ingest(w, r, a, gotrace.Options{WallOffsetNS: wallOffsetNS, Now: time.Now()})
	}
)
