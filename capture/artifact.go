package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/leakscope/leakscope/ingest"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/internal/format"
)

// endpoint is one pprof URL the capture scrapes.
type endpoint struct {
	kind    string // bundle.SourcePprof, SourceDump or SourceTrace
	profile string // goroutine, heap, allocs, goroutineleak, cpu; "" for dump and trace
	path    string // URL path and query below the base URL
	file    string // raw/ file name prefix
	ext     string
	window  time.Duration
}

var (
	epDump      = endpoint{kind: bundle.SourceDump, path: "/debug/pprof/goroutine?debug=2", file: "goroutine-dump", ext: ".txt"}
	epGoroutine = endpoint{kind: bundle.SourcePprof, profile: "goroutine", path: "/debug/pprof/goroutine", file: "goroutine", ext: ".pb.gz"}
	epHeap      = endpoint{kind: bundle.SourcePprof, profile: "heap", path: "/debug/pprof/heap", file: "heap", ext: ".pb.gz"}
	epAllocs    = endpoint{kind: bundle.SourcePprof, profile: "allocs", path: "/debug/pprof/allocs", file: "allocs", ext: ".pb.gz"}
	epLeak      = endpoint{kind: bundle.SourcePprof, profile: "goroutineleak", path: "/debug/pprof/goroutineleak", file: "goroutineleak", ext: ".pb.gz"}
)

func cpuEndpoint(d time.Duration) endpoint {
	return endpoint{kind: bundle.SourcePprof, profile: "cpu", path: fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(d/time.Second)), file: "cpu", ext: ".pb.gz", window: d}
}

func traceEndpoint(d time.Duration) endpoint {
	return endpoint{kind: bundle.SourceTrace, path: fmt.Sprintf("/debug/pprof/trace?seconds=%d", int(d/time.Second)), file: "trace", ext: ".out", window: d}
}

// maxReply is the most of one reply a capture keeps: a profile as large
// as the agent reads one (profileLimits), a dump well past the runtime's
// 64 MiB cap, a trace window of many minutes of a busy service. A target
// cannot fill the disk with an endless reply.
func maxReply(kind string) int64 {
	switch kind {
	case bundle.SourcePprof:
		return profileLimits.MaxBytes
	case bundle.SourceDump:
		return 1 << 30
	}
	return 8 << 30
}

// errTransport marks a fetch that failed below HTTP (connection refused,
// reset, timeout): the target may be gone.
var errTransport = errors.New("target unreachable")

// fetchArtifact scrapes one endpoint, stores the reply under raw/, ingests
// it and records the artifact in the manifest. A reply cut short is kept
// and ingested as far as it goes. The returned error is for the fetch; an
// ingest failure is recorded in the artifact and the progress log.
func (c *capturer) fetchArtifact(ctx context.Context, ep endpoint) (bundle.Artifact, error) {
	start := time.Now()
	body, err := FetchProfile(ctx, c.client, c.base+ep.path, ep.window)
	if err != nil {
		var se *StatusError
		if !errors.As(err, &se) {
			err = fmt.Errorf("%w: %w", errTransport, err)
		}
		return bundle.Artifact{}, err
	}
	name := fmt.Sprintf("%s-%s%s", ep.file, start.UTC().Format("20060102T150405.000Z"), ep.ext)
	f, rel, err := c.w.CreateRaw(name)
	if err != nil {
		body.Close()
		return bundle.Artifact{}, err
	}
	most := maxReply(ep.kind)
	n, copyErr := io.Copy(f, io.LimitReader(body, most))
	if copyErr == nil && n == most {
		if m, _ := body.Read(make([]byte, 1)); m > 0 {
			copyErr = fmt.Errorf("the reply is larger than %s, the most a capture keeps of one; cut there", format.Bytes(float64(most)))
		}
	}
	body.Close()
	if err := f.Close(); err != nil {
		return bundle.Artifact{}, fmt.Errorf("store %s: %w", rel, err)
	}
	a := bundle.Artifact{Name: rel, Kind: ep.kind, Profile: ep.profile, Size: n, Time: start, OriginPath: c.base + ep.path,
		TimeBasis: bundle.TimeCapture, TimeDetail: "the request start"}
	if copyErr != nil {
		if n == 0 {
			os.Remove(filepath.Join(c.w.Dir(), rel))
			return bundle.Artifact{}, fmt.Errorf("%w: read %s: %w", errTransport, ep.path, copyErr)
		}
	}
	if verr := c.validate(ep, &a); verr != nil {
		c.w.Update(func(m *bundle.Manifest) { m.Artifacts = append(m.Artifacts, a) })
		return a, verr
	}
	c.valid.Add(1)
	c.ingest(ep, &a)
	if copyErr != nil {
		// Ingest kept what it could; the artifact itself stays truncated.
		a.Status = bundle.StatusTruncated
		a.Detail = fmt.Sprintf("reply cut after %d bytes: %v", n, copyErr)
		err = fmt.Errorf("%w: read %s: %w", errTransport, ep.path, copyErr)
	}
	c.w.Update(func(m *bundle.Manifest) { m.Artifacts = append(m.Artifacts, a) })
	if ep.kind == bundle.SourceDump && copyErr == nil {
		c.afterDump(a)
	}
	return a, err
}

// validate checks that the stored reply is what the endpoint serves (a
// pprof profile, a goroutine dump, an execution trace). A reply that is not
// is kept under raw/ for inspection, marked failed, and reported as a
// [*NotPprofError].
func (c *capturer) validate(ep endpoint, a *bundle.Artifact) error {
	f, err := os.Open(filepath.Join(c.w.Dir(), a.Name))
	if err != nil {
		return err
	}
	head := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, head)
	f.Close()
	head = head[:n]
	want := map[string]ingest.Kind{bundle.SourceDump: ingest.KindDump, bundle.SourceTrace: ingest.KindTrace, bundle.SourcePprof: ingest.KindPprof}[ep.kind]
	if n > 0 && ingest.Detect(head) == want {
		return nil
	}
	what := map[string]string{bundle.SourceDump: "a goroutine dump", bundle.SourceTrace: "a Go execution trace", bundle.SourcePprof: "a pprof profile"}[ep.kind]
	err = &NotPprofError{URL: c.base + ep.path, Want: what, Got: describeBody("", head)}
	a.Kind = ep.kind
	a.Status, a.Detail = bundle.StatusFailed, err.Error()
	return err
}

// ingest passes the stored raw artifact to its ingest function and fills
// a.Status and a.Detail.
func (c *capturer) ingest(ep endpoint, a *bundle.Artifact) {
	f, err := os.Open(filepath.Join(c.w.Dir(), a.Name))
	if err == nil {
		switch ep.kind {
		case bundle.SourceDump:
			err = ingestDump(c.w, f, a)
		case bundle.SourceTrace:
			err = ingestTrace(c.w, f, a, c.clock.offset())
		default:
			err = ingestProfile(c.w, f, a)
		}
		f.Close()
	}
	if a.Kind == "" {
		a.Kind = ep.kind
	}
	if err != nil {
		a.Status = bundle.StatusFailed
		a.Detail = err.Error()
		c.logf("ingest %s: %v", a.Name, err)
		return
	}
	if a.Status == "" {
		a.Status = bundle.StatusComplete
	}
}
