package capture

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/profiles"
)

// Snapshot is one rolling-watch sample: the totals and the profiles they
// were read from, as the target served them (gzipped protobuf).
type Snapshot struct {
	Totals
	Goroutine []byte
	Heap      []byte
}

// ReadSnapshot is [ReadTotals] that keeps the two profiles it read, for a
// history of earlier snapshots (the node agent's).
func ReadSnapshot(ctx context.Context, c *http.Client, base string) (Snapshot, error) {
	base = normalizeURL(base)
	s := Snapshot{Totals: Totals{TS: time.Now()}}
	var err error
	if s.Goroutine, s.Goroutines, err = fetchTotal(ctx, c, base+epGoroutine.path, "goroutine", "count"); err != nil {
		return s, err
	}
	if s.Heap, s.HeapInuse, err = fetchTotal(ctx, c, base+epHeap.path, "inuse_space", "bytes"); err != nil {
		return s, err
	}
	return s, nil
}

// fetchTotal fetches one profile and returns its bytes and the total of
// sample type typ/unit.
func fetchTotal(ctx context.Context, c *http.Client, url, typ, unit string) ([]byte, int64, error) {
	body, err := FetchProfile(ctx, c, url, 0)
	if err != nil {
		return nil, 0, err
	}
	data, err := io.ReadAll(io.LimitReader(body, maxTotalsProfile+1))
	body.Close()
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", url, err)
	}
	if len(data) > maxTotalsProfile {
		return nil, 0, fmt.Errorf("%s: profile larger than %d bytes", url, maxTotalsProfile)
	}
	p, err := profiles.ParseLimits(bytes.NewReader(data), profileLimits)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", url, err)
	}
	n, err := sampleTotal(p, typ, unit)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", url, err)
	}
	return data, n, nil
}

// HistoryFile is one earlier profile of the target, recorded before the
// capture (by the node agent's rolling watch), that the capture puts at
// the start of its bundle ([Options.History]).
type HistoryFile struct {
	// Path is the stored profile (gzipped protobuf).
	Path string
	// Profile is "goroutine" or "heap".
	Profile string
	// Time is when it was requested; the profile's own time wins.
	Time time.Time
}

// historyBasis is the detail every history artifact carries.
const historyBasis = "history (%s profile): recorded by the node agent's rolling watch before the capture was triggered"

// ingestHistory copies the history files into raw/ and ingests them as
// earlier snapshots, oldest first, marked [bundle.RoleHistory]. A file that
// is gone or unreadable (pruned meanwhile, torn by a crash) is left out
// with a notice; it never stops the capture.
func (c *capturer) ingestHistory() {
	hs := append([]HistoryFile(nil), c.opts.History...)
	if len(hs) == 0 {
		return
	}
	sort.SliceStable(hs, func(i, j int) bool { return hs[i].Time.Before(hs[j].Time) })
	var kept, skipped int
	for _, h := range hs {
		if err := c.ingestHistoryFile(h); err != nil {
			skipped++
			c.logf("history %s: %v; left out", h.Path, err)
			continue
		}
		kept++
	}
	c.w.Update(func(m *bundle.Manifest) {
		s := m.Source(bundle.SourcePprof)
		if s.Settings == nil {
			s.Settings = map[string]string{}
		}
		s.Settings["history"] = fmt.Sprintf("%d earlier profiles from %s to %s (%d left out)", kept,
			hs[0].Time.UTC().Format(time.RFC3339), hs[len(hs)-1].Time.UTC().Format(time.RFC3339), skipped)
		s.Settings["history_until"] = c.start.UTC().Format(time.RFC3339Nano)
	})
}

// ingestHistoryFile stores and ingests one history profile.
func (c *capturer) ingestHistoryFile(h HistoryFile) error {
	if h.Profile != epGoroutine.profile && h.Profile != epHeap.profile {
		return fmt.Errorf("profile %q is neither goroutine nor heap", h.Profile)
	}
	data, err := os.ReadFile(h.Path)
	if err != nil {
		return err
	}
	if _, err := profiles.ParseLimits(bytes.NewReader(data), profileLimits); err != nil {
		return fmt.Errorf("not a readable profile: %w", err)
	}
	name := fmt.Sprintf("history-%s-%s.pb.gz", h.Profile, h.Time.UTC().Format("20060102T150405.000Z"))
	f, rel, err := c.w.CreateRaw(name)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if err := f.Close(); werr == nil {
		werr = err
	}
	if werr != nil {
		return fmt.Errorf("store %s: %w", rel, werr)
	}
	a := bundle.Artifact{Name: rel, Kind: bundle.SourcePprof, Profile: h.Profile, Size: int64(len(data)), Time: h.Time,
		OriginPath: h.Path, TimeBasis: bundle.TimeCapture, TimeDetail: "the agent's request start",
		Role: bundle.RoleHistory, Detail: fmt.Sprintf(historyBasis, h.Profile)}
	if err := ingestProfile(c.w, bytes.NewReader(data), &a); err != nil {
		a.Status, a.Detail = bundle.StatusFailed, err.Error()
	}
	c.w.Update(func(m *bundle.Manifest) { m.Artifacts = append(m.Artifacts, a) })
	return nil
}
