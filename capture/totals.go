package capture

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/google/pprof/profile"
	"github.com/leakscope/leakscope/ingest/profiles"
)

// maxTotalsProfile bounds a goroutine or heap profile read by [ReadTotals]
// (gzipped protobuf; 100,000 distinct stacks take a few MB).
const maxTotalsProfile = 64 << 20

// Totals are a process's goroutine count and heap in use at one moment,
// as its own profiles state them.
type Totals struct {
	TS time.Time
	// Goroutines is the total of the debug=0 goroutine profile: every
	// goroutine, counted by the runtime (no text dump, no 64 MiB cap).
	Goroutines int64
	// HeapInuse is the inuse_space total of the heap profile: the
	// runtime's estimate of live heap bytes from its allocation samples,
	// as of the last GC.
	HeapInuse int64
}

// NewScrapeClient returns an HTTP client fit for scraping the pprof
// endpoints of process pid (0: any target reachable from here): no
// keep-alive connections, which would park goroutines of the scraper's own
// making in the target, and connections made from inside the process's
// network namespace when it has one of its own.
func NewScrapeClient(pid int) *http.Client { return newClient(pid) }

// ReadTotals fetches the goroutine and heap profiles of the net/http/pprof
// endpoint at base (http://host:port) and returns their totals. It is the
// cheap rolling watch of a process: two compact protobuf profiles, no
// dump, no trace.
func ReadTotals(ctx context.Context, c *http.Client, base string) (Totals, error) {
	base = normalizeURL(base)
	t := Totals{TS: time.Now()}
	g, err := fetchParsed(ctx, c, base+epGoroutine.path)
	if err != nil {
		return t, err
	}
	t.Goroutines, err = sampleTotal(g, "goroutine", "count")
	if err != nil {
		return t, fmt.Errorf("%s%s: %w", base, epGoroutine.path, err)
	}
	h, err := fetchParsed(ctx, c, base+epHeap.path)
	if err != nil {
		return t, err
	}
	t.HeapInuse, err = sampleTotal(h, "inuse_space", "bytes")
	if err != nil {
		return t, fmt.Errorf("%s%s: %w", base, epHeap.path, err)
	}
	return t, nil
}

// fetchParsed fetches and parses one pprof protobuf profile.
func fetchParsed(ctx context.Context, c *http.Client, url string) (*profile.Profile, error) {
	body, err := FetchProfile(ctx, c, url, 0)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	p, err := profiles.ParseLimits(io.LimitReader(body, maxTotalsProfile), profileLimits)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	return p, nil
}

// sampleTotal sums the values of the sample type typ (unit unit).
func sampleTotal(p *profile.Profile, typ, unit string) (int64, error) {
	for i, st := range p.SampleType {
		if st.Type != typ || st.Unit != unit {
			continue
		}
		var n int64
		for _, s := range p.Sample {
			n += s.Value[i]
		}
		return n, nil
	}
	return 0, fmt.Errorf("profile has no %s/%s sample type", typ, unit)
}
