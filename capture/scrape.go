package capture

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// fetchSlack is added to a profile's window to form its request timeout.
const fetchSlack = 15 * time.Second

// maxErrorBody bounds the part of an error reply quoted in an error.
const maxErrorBody = 512

// StatusError is returned by [FetchProfile] for a reply other than 200 OK.
type StatusError struct {
	URL    string
	Status string
	Code   int
	// Body is the start of the reply when the target's pprof handler
	// produced it (X-Go-Pprof set), else empty.
	Body string
}

func (e *StatusError) Error() string {
	if e.Body != "" {
		return fmt.Sprintf("fetch %s: %s: %s", e.URL, e.Status, e.Body)
	}
	return fmt.Sprintf("fetch %s: %s", e.URL, e.Status)
}

// FetchProfile requests url and returns the reply body as a stream. d is
// the profile's window (the seconds= of a CPU profile or trace, 0 for an
// instant snapshot); the whole request, body included, times out after d
// plus some slack. A reply other than 200 OK is a [*StatusError] that quotes
// the body when the X-Go-Pprof header says the pprof handler wrote it. The
// caller must close the body; closing it releases the timeout.
func FetchProfile(ctx context.Context, c *http.Client, url string, d time.Duration) (io.ReadCloser, error) {
	ctx, cancel := context.WithTimeout(ctx, d+fetchSlack)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("fetch %s: %w", url, err)
	}
	resp, err := c.Do(req)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("fetch %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer cancel()
		defer resp.Body.Close()
		se := &StatusError{URL: url, Status: resp.Status, Code: resp.StatusCode}
		if resp.Header.Get("X-Go-Pprof") != "" {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
			se.Body = strings.TrimSpace(string(b))
		}
		return nil, se
	}
	return &cancelBody{ReadCloser: resp.Body, cancel: cancel}, nil
}

// cancelBody releases the request context when the body is closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
