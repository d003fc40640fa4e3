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

// fetchFlight fetches the target's flight recording, when it serves one,
// before the first round: the bundle's first trace window then covers the
// time before the capture began. A target without one (404) is passed
// over in silence; it is an optional import.
func (c *capturer) fetchFlight(ctx context.Context) {
	if c.opts.TraceWindow <= 0 || c.base == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, flightTimeout)
	defer cancel()
	body, err := FetchProfile(ctx, c.client, c.base+epFlight.path, 0)
	var se *StatusError
	if errors.As(err, &se) && se.Code == http.StatusNotFound {
		return
	}
	if err != nil {
		c.log.Notef("flight recording: %v", err)
		return
	}
	a, err := c.storeFlight(body)
	if err != nil {
		c.log.Notef("flight recording: %v", err)
		return
	}
	c.log.Notef("flight recording: the target's trace from %s to %s (%s), before the capture", a.Start.UTC().Format("15:04:05.000"), a.End.UTC().Format("15:04:05.000"), a.End.Sub(a.Start).Round(time.Millisecond))
}

// storeFlight stores and ingests a flight recording, dated by its own
// clock, and records it in the manifest and the trace source's settings.
func (c *capturer) storeFlight(body io.ReadCloser) (bundle.Artifact, error) {
	start := time.Now()
	name := fmt.Sprintf("%s-%s%s", epFlight.file, start.UTC().Format("20060102T150405.000Z"), epFlight.ext)
	f, rel, err := c.w.CreateRaw(name)
	if err != nil {
		body.Close()
		return bundle.Artifact{}, err
	}
	n, err := io.Copy(f, body)
	body.Close()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return bundle.Artifact{}, fmt.Errorf("store %s: %w", rel, err)
	}
	a := bundle.Artifact{Name: rel, Kind: bundle.SourceTrace, Size: n, Time: start, OriginPath: c.base + epFlight.path,
		TimeBasis: bundle.TimeCapture, TimeDetail: "the request end: the flight recorder's trace ends there"}
	if err := c.validate(epFlight, &a); err != nil {
		c.w.Update(func(m *bundle.Manifest) { m.Artifacts = append(m.Artifacts, a) })
		return a, err
	}
	c.ingest(epFlight, &a)
	if !a.Start.IsZero() {
		a.Time, a.TimeBasis, a.TimeDetail = a.Start, bundle.TimeContent, "the flight recorder's trace: its first event"
	}
	c.w.Update(func(m *bundle.Manifest) {
		m.Artifacts = append(m.Artifacts, a)
		s := m.Source(bundle.SourceTrace)
		if s.Settings == nil {
			s.Settings = map[string]string{}
		}
		s.Settings["flight"] = fmt.Sprintf("the target's flight recorder (%s): %s of trace before the capture", epFlight.path, a.End.Sub(a.Start).Round(time.Millisecond))
	})
	if a.Status == bundle.StatusFailed {
		return a, errors.New(a.Detail)
	}
	return a, nil
}
