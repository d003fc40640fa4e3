package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
)

// epFlight is the flight recorder's endpoint (package
// github.com/leakscope/leakscope/flight): the target's execution trace of
// the seconds before the request.
var epFlight = endpoint{kind: bundle.SourceTrace, path: "/debug/pprof/flight", file: "trace-flight", ext: ".out"}

// flightTimeout bounds the flight recording's request.
const flightTimeout = 30 * time.Second

// startFlight downloads the target's flight recording, when it serves
// one, as the capture starts, and ingests it beside the first round: the
// download (a few MiB over the network) comes before the round, so the
// recording ends before the capture's own first trace window begins; the
// ingest does not hold up the first dump, and so the first answer. The
// bundle's first trace then covers the time before the capture began.
func (c *capturer) startFlight(ctx context.Context) {
	if c.opts.TraceWindow <= 0 || c.base == "" {
		return
	}
	a, err := c.downloadFlight(ctx)
	if a == nil {
		if err != nil {
			c.log.Notef("flight recording: %v", err)
		}
		return
	}
	c.windows.Go(func() {
		if err := c.ingestFlight(a); err != nil {
			c.log.Notef("flight recording: %v", err)
			return
		}
		c.log.Notef("flight recording: the target's trace from %s to %s (%s), before the capture", a.Start.UTC().Format("15:04:05.000"), a.End.UTC().Format("15:04:05.000"), a.End.Sub(a.Start).Round(time.Millisecond))
	})
}

// downloadFlight stores the flight recording under raw/. A target without
// one (404) gives nil and no error: it is an optional import.
func (c *capturer) downloadFlight(ctx context.Context) (*bundle.Artifact, error) {
	ctx, cancel := context.WithTimeout(ctx, flightTimeout)
	defer cancel()
	start := time.Now()
	body, err := FetchProfile(ctx, c.client, c.base+epFlight.path, 0)
	var se *StatusError
	if errors.As(err, &se) && se.Code == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("%s-%s%s", epFlight.file, start.UTC().Format("20060102T150405.000Z"), epFlight.ext)
	f, rel, err := c.w.CreateRaw(name)
	if err != nil {
		body.Close()
		return nil, err
	}
	n, err := io.Copy(f, body)
	body.Close()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", rel, err)
	}
	return &bundle.Artifact{Name: rel, Kind: bundle.SourceTrace, Size: n, Time: start, OriginPath: c.base + epFlight.path,
		TimeBasis: bundle.TimeCapture, TimeDetail: "the request start: the flight recorder's trace ends there"}, nil
}

// ingestFlight ingests a stored flight recording, dated by its own clock,
// and records it in the manifest and the trace source's settings.
func (c *capturer) ingestFlight(a *bundle.Artifact) error {
	if err := c.validate(epFlight, a); err != nil {
		c.w.Update(func(m *bundle.Manifest) { m.Artifacts = append(m.Artifacts, *a) })
		return err
	}
	c.ingest(epFlight, a)
	if !a.Start.IsZero() {
		a.Time, a.TimeBasis, a.TimeDetail = a.Start, bundle.TimeContent, "the flight recorder's trace: its first event"
	}
	c.w.Update(func(m *bundle.Manifest) {
		m.Artifacts = append(m.Artifacts, *a)
		s := m.Source(bundle.SourceTrace)
		if s.Settings == nil {
			s.Settings = map[string]string{}
		}
		s.Settings["flight"] = fmt.Sprintf("the target's flight recorder (%s): %s of trace before the capture", epFlight.path, a.End.Sub(a.Start).Round(time.Millisecond))
	})
	if a.Status == bundle.StatusFailed {
		return errors.New(a.Detail)
	}
	return nil
}
