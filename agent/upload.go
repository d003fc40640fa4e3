package agent

import (
	"context"
	"errors"
	"github.com/leakscope/leakscope/internal/format"
	"net/http"
	"time"

	"github.com/leakscope/leakscope/capture"
	"github.com/leakscope/leakscope/ingest/killpoint"
)

// Upload retry timing: a failed entry waits Config.UploadBackoff (default
// uploadBackoff), doubled per failure up to maxUploadBackoff, before it is
// tried again; pending entries are looked at every uploadScanEvery.
const (
	uploadBackoff    = 30 * time.Second
	maxUploadBackoff = 30 * time.Minute
	uploadScanEvery  = 30 * time.Second
)

// uploadLoop uploads ready spool entries, oldest first, when one is added
// and every uploadScanEvery (entries left by an earlier run included).
func (a *Agent) uploadLoop(ctx context.Context) {
	if a.cfg.UploadTo == "" {
		return
	}
	tick := time.NewTicker(min(uploadScanEvery, a.cfg.UploadBackoff))
	defer tick.Stop()
	for {
		a.uploadPending(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-a.wake:
		}
	}
}

// uploadPending tries every ready entry whose retry time has come.
func (a *Agent) uploadPending(ctx context.Context) {
	entries, err := a.spool.Entries()
	if err != nil {
		a.logf("%v", err)
		return
	}
	client := a.uploadClient()
	for _, e := range entries {
		if ctx.Err() != nil {
			return
		}
		if e.State != StateReady || time.Now().Before(e.NextUpload) {
			continue
		}
		if e.UploadID != "" { // uploaded; the agent stopped before the bookkeeping ended
			if err := a.spool.MarkUploaded(e, e.UploadID); err != nil {
				a.logf("%v", err)
			}
			continue
		}
		res, err := capture.Upload(ctx, a.spool.BundlePath(e), capture.UploadOptions{
			To: a.cfg.UploadTo, Token: a.cfg.UploadToken, Client: client, Attempts: 3,
			Log: logWriter{a: a, prefix: e.Name + ": "},
		})
		if err == nil {
			killpoint.At("agent:uploaded")
			a.m.uploads.WithLabelValues("ok").Inc()
			a.logf("%s: uploaded to %s as capture %s (%s)%s", e.Name, a.cfg.UploadTo, res.ID, format.Bytes(float64(res.Bytes)), replacedNote(e, res.ID))
			if err := a.spool.MarkUploaded(e, res.ID); err != nil {
				a.logf("%v", err)
			}
			continue
		}
		if ctx.Err() != nil {
			return
		}
		a.m.uploads.WithLabelValues("failed").Inc()
		e.Attempts++
		e.UploadError = err.Error()
		if final(err) {
			e.State = StateFailed // refused for what it is: retrying cannot help
			a.logf("%s: %v; kept in the spool, not retried%s", e.Name, err, tooLargeNote(err))
		} else {
			wait := min(a.cfg.UploadBackoff<<min(e.Attempts-1, 10), maxUploadBackoff)
			e.NextUpload = time.Now().Add(wait)
			a.logf("%s: %v; next try in %v", e.Name, err, wait)
		}
		if err := a.spool.Save(e); err != nil {
			a.logf("%v", err)
		}
	}
	// An entry larger than the spool was kept until it was tried.
	a.enforceSpool()
}

// tooLargeNote says why a 413 is not retried: the capture is larger than
// the workbench takes at all.
func tooLargeNote(err error) string {
	var ue *capture.UploadError
	if errors.As(err, &ue) && ue.TooLarge {
		return " (the capture is larger than the workbench takes; no retry can store it: raise its serve --max-upload or --max-unpacked, or copy the bundle off the node)"
	}
	return ""
}

// replacedNote says that an upload replaced the entry's preliminary
// capture, or is "".
func replacedNote(e *Entry, id string) string {
	if e.PreliminaryID == "" {
		return ""
	}
	if e.PreliminaryID == id {
		return "; it replaces the preliminary capture"
	}
	return "; preliminary capture was " + e.PreliminaryID
}

// final reports whether an upload error is the workbench refusing the
// bundle for what it is (a bad archive: 400, 415; larger than it takes at
// all: 413 with Leakscope-Refusal: too-large), which retrying cannot
// help. Everything else is tried again later: the network, the workbench
// down or busy (5xx, 408, 429), a full data directory (413 otherwise: its
// quota or disk frees up as captures are deleted), a token being rotated
// (401, 403).
func final(err error) bool {
	var ue *capture.UploadError
	if !errors.As(err, &ue) {
		return false
	}
	switch ue.Code {
	case http.StatusRequestEntityTooLarge:
		return ue.TooLarge
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusRequestTimeout, http.StatusTooManyRequests:
		return false
	}
	return ue.Code < 500
}

// uploadClient is the HTTP client of uploads, naming the agent.
func (a *Agent) uploadClient() *http.Client {
	return &http.Client{Transport: userAgent{"leakscope-agent/" + a.cfg.Version, http.DefaultTransport}}
}

// userAgent sets the User-Agent of every request, so the workbench can
// count uploads from agents.
type userAgent struct {
	ua   string
	next http.RoundTripper
}

func (u userAgent) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("User-Agent", u.ua)
	return u.next.RoundTrip(r)
}
