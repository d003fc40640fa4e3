package capture

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
)

// CapturesPath is the workbench endpoint bundles are posted to.
const CapturesPath = "/api/captures"

// UploadOptions configures [Upload].
type UploadOptions struct {
	// To is the workbench base URL (http://host:7070); CapturesPath is
	// appended unless the URL already ends with it.
	To string
	// Token, if set, is sent as "Authorization: Bearer TOKEN".
	Token string
	// Client defaults to an http.Client without overall timeout (bundles
	// can be large; the body is streamed).
	Client *http.Client
	// Attempts is the most tries (default 5); Backoff the first wait
	// between them (default 1s), doubled each time up to MaxBackoff
	// (default 30s).
	Attempts   int
	Backoff    time.Duration
	MaxBackoff time.Duration
	// Log receives one line per failed attempt; nil discards them.
	Log io.Writer
	// UserAgent names the uploader to the workbench, which counts
	// uploads by it (leakscope_uploads_total{client}): "leakscope-agent/…"
	// is the agent, any other "leakscope…" the command line. Empty means
	// DefaultUserAgent.
	UserAgent string
}

// DefaultUserAgent is the User-Agent of uploads that set none: the
// command line's.
const DefaultUserAgent = "leakscope-cli"

// UploadResult is what the workbench answered.
type UploadResult struct {
	// ID is the capture id the workbench assigned.
	ID string
	// Bytes is the size of the archive sent in the successful attempt.
	Bytes int64
	// Attempts is the number of tries made.
	Attempts int
	// Duplicate is true when the workbench already held this bundle and
	// answered the id of that capture instead of storing it again.
	Duplicate bool
}

// UploadError is the error of a refused upload (a 4xx answer other than
// 408 and 429), which is not retried.
type UploadError struct {
	Status  string
	Code    int
	Message string
	// TooLarge is set when the workbench said the bundle is larger than
	// it takes at all (413 with Leakscope-Refusal: too-large): no retry
	// can store it, unlike one refused for room (a full quota or disk).
	TooLarge bool
}

func (e *UploadError) Error() string {
	if e.Message != "" {
		return fmt.Sprintf("workbench refused the bundle: %s: %s", e.Status, e.Message)
	}
	return "workbench refused the bundle: " + e.Status
}

// retryable marks attempt errors worth another try.
type retryable struct {
	err   error
	after time.Duration // Retry-After, if the server sent one
}

func (r retryable) Error() string { return r.err.Error() }
func (r retryable) Unwrap() error { return r.err }

// Upload sends the bundle in dir to the workbench as a .tar.zst archive
// streamed through a pipe (the bundle is packed again for every attempt,
// never held in memory) in a POST to CapturesPath. Connection errors, 5xx,
// 408 and 429 answers are retried with exponential backoff, up to
// o.Attempts tries; other answers fail at once with an [*UploadError].
// The upload is idempotent from the client's side: every attempt sends the
// same archive and the capture id as Idempotency-Key.
func Upload(ctx context.Context, dir string, o UploadOptions) (UploadResult, error) {
	m, err := bundle.ReadManifest(dir)
	if err != nil {
		return UploadResult{}, fmt.Errorf("upload %s: %w", dir, err)
	}
	if o.To == "" {
		return UploadResult{}, errors.New("upload: no workbench URL (--to)")
	}
	url := strings.TrimRight(o.To, "/")
	if !strings.Contains(url, "://") {
		url = "http://" + url
	}
	if !strings.HasSuffix(url, CapturesPath) {
		url += CapturesPath
	}
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	if o.Attempts <= 0 {
		o.Attempts = 5
	}
	if o.Backoff <= 0 {
		o.Backoff = time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	wait := o.Backoff
	var last error
	for i := 1; i <= o.Attempts; i++ {
		res, err := uploadOnce(ctx, dir, url, m.CaptureID, o)
		res.Attempts = i
		if err == nil {
			return res, nil
		}
		last = err
		var r retryable
		if !errors.As(err, &r) || ctx.Err() != nil {
			return res, fmt.Errorf("upload %s to %s: %w", dir, url, err)
		}
		if i == o.Attempts {
			break
		}
		d := max(wait, min(r.after, o.MaxBackoff))
		fmt.Fprintf(o.Log, "upload: attempt %d of %d failed: %v; retrying in %v\n", i, o.Attempts, err, d)
		select {
		case <-ctx.Done():
			return res, fmt.Errorf("upload %s to %s: %w (after %d attempts; last error: %v)", dir, url, ctx.Err(), i, last)
		case <-time.After(d):
		}
		wait = min(2*wait, o.MaxBackoff)
	}
	return UploadResult{Attempts: o.Attempts}, fmt.Errorf("upload %s to %s: gave up after %d attempts: %w", dir, url, o.Attempts, last)
}

// errRequestDone stops a packer whose request has already ended.
var errRequestDone = errors.New("request finished")

// uploadOnce packs and posts the bundle once.
func uploadOnce(ctx context.Context, dir, url, id string, o UploadOptions) (UploadResult, error) {
	pr, pw := io.Pipe()
	var sent atomic.Int64
	packErr := make(chan error, 1)
	go func() {
		err := bundle.Pack(dir, &countWriter{w: pw, n: &sent}, bundle.FormatTarZstd)
		pw.CloseWithError(err)
		packErr <- err
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, pr)
	if err != nil {
		pr.Close()
		<-packErr
		return UploadResult{}, err
	}
	req.ContentLength = -1
	ua := o.UserAgent
	if ua == "" {
		ua = DefaultUserAgent
	}
	req.Header.Set("User-Agent", ua)
	req.Header.Set("Content-Type", "application/zstd")
	req.Header.Set("Content-Disposition", `attachment; filename="bundle.tar.zst"`)
	if id != "" {
		req.Header.Set("Idempotency-Key", id)
	}
	if o.Token != "" {
		req.Header.Set("Authorization", "Bearer "+o.Token)
	}
	resp, err := o.Client.Do(req)
	pr.CloseWithError(errRequestDone)
	perr := <-packErr
	if perr != nil && !errors.Is(perr, errRequestDone) && !errors.Is(perr, io.ErrClosedPipe) {
		if resp != nil {
			resp.Body.Close()
		}
		return UploadResult{}, fmt.Errorf("pack bundle: %w", perr)
	}
	if err != nil {
		return UploadResult{}, retryable{err: err}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	res := UploadResult{Bytes: sent.Load()}
	switch {
	case resp.StatusCode/100 == 2:
		res.ID = parseID(body)
		var dup struct {
			Duplicate bool `json:"duplicate"`
		}
		res.Duplicate = json.Unmarshal(body, &dup) == nil && dup.Duplicate
		if res.ID == "" {
			return res, fmt.Errorf("workbench answered %s without a capture id: %q", resp.Status, truncate(string(body), 200))
		}
		return res, nil
	case resp.StatusCode >= 500, resp.StatusCode == http.StatusRequestTimeout, resp.StatusCode == http.StatusTooManyRequests:
		return res, retryable{err: fmt.Errorf("workbench answered %s: %s", resp.Status, errorMessage(body)), after: retryAfter(resp)}
	}
	return res, &UploadError{Status: resp.Status, Code: resp.StatusCode, Message: errorMessage(body),
		TooLarge: resp.StatusCode == http.StatusRequestEntityTooLarge && resp.Header.Get("Leakscope-Refusal") == "too-large"}
}

// parseID reads the id from {"id": "..."} (or a bare text id).
func parseID(body []byte) string {
	var v struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &v) == nil && len(v.ID) > 0 {
		var s string
		if json.Unmarshal(v.ID, &s) == nil {
			return s
		}
		return string(v.ID)
	}
	s := strings.TrimSpace(string(body))
	if s != "" && !strings.ContainsAny(s, "{}\n ") {
		return s
	}
	return ""
}

// errorMessage extracts {"error": "..."} or quotes the start of the body.
func errorMessage(body []byte) string {
	var v struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &v) == nil && v.Error != "" {
		return v.Error
	}
	s := strings.TrimSpace(string(body))
	if s == "" {
		return "(empty body)"
	}
	return truncate(s, 200)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// retryAfter reads a Retry-After header given in seconds.
func retryAfter(resp *http.Response) time.Duration {
	if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return 0
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}
