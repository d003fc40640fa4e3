package web

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"
)

// Default idle timeouts: how long a client may stop reading an answer or
// sending an upload before the server gives up on it.
const (
	DefaultWriteIdle = 30 * time.Second
	DefaultReadIdle  = 60 * time.Second
)

// idleWrites gives every write of every answer a deadline of d from now:
// a download may take as long as it needs, but a client that stops
// reading it is dropped after d, and the capture it held is released (a
// DELETE waiting for it then goes ahead).
func idleWrites(d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), d: d}, r)
	})
}

type deadlineWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func (w *deadlineWriter) Write(p []byte) (int, error) {
	w.rc.SetWriteDeadline(time.Now().Add(w.d))
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// minProgress is what an upload must send within every ReadIdle.
const minProgress = 64 << 10

// idleReader bounds how slowly a request body may come: from the first
// read, each minProgress bytes must arrive within d. An upload may take as
// long as it needs, but one that stalls, or trickles a byte at a time to
// hold its connection (slowloris), is dropped; stalled then reports it.
func idleReader(w http.ResponseWriter, body io.ReadCloser, d time.Duration) *deadlineReader {
	return &deadlineReader{ReadCloser: body, rc: http.NewResponseController(w), d: d}
}

type deadlineReader struct {
	io.ReadCloser
	rc      *http.ResponseController
	d       time.Duration
	started bool
	got     int64 // bytes since the deadline was last moved
	stalled bool
}

func (r *deadlineReader) Read(p []byte) (int, error) {
	if !r.started {
		r.started = true
		r.rc.SetReadDeadline(time.Now().Add(r.d))
	}
	n, err := r.ReadCloser.Read(p)
	if r.got += int64(n); r.got >= minProgress {
		r.got = 0
		r.rc.SetReadDeadline(time.Now().Add(r.d))
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		r.stalled = true
	}
	return n, err
}
