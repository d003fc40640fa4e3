package web

import (
	"errors"
	"fmt"
	"log"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/analysis/flame"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/internal/format"
)

// captureSummary is one row of GET /api/captures.
type captureSummary struct {
	ID        string  `json:"id"`
	CaptureID string  `json:"capture_id"`
	Node      string  `json:"node"`
	Process   process `json:"process"`
	// Start and End bound the bundle's data; CaptureStart is when the
	// capture itself began, later than Start when the bundle opens with
	// the node agent's history (HistorySnapshots of it).
	Start            time.Time       `json:"start"`
	End              time.Time       `json:"end"`
	CaptureStart     time.Time       `json:"capture_start"`
	HistorySnapshots int             `json:"history_snapshots,omitempty"`
	Sources          []bundle.Source `json:"sources"`
	// SourcesText describes each source in words, counters in human
	// units (analysis.SourceText), in the order of Sources.
	SourcesText []string `json:"sources_text"`
	// Bytes is the capture's size on the workbench's disk; Size the same
	// in binary units.
	Bytes int64  `json:"bytes"`
	Size  string `json:"size"`
	// Duration is End minus CaptureStart in words ("4 minutes 10 s"):
	// how long the capture ran.
	Duration string `json:"duration,omitempty"`
	// Suspects is how many leak suspects the analysis found; null (with
	// AnalysisError set) when the analysis failed.
	Suspects   *int   `json:"suspects"`
	TopSuspect string `json:"top_suspect,omitempty"`
	// FirstIncident is the report's first incident, in its words.
	FirstIncident *incidentRef `json:"first_incident,omitempty"`
	AnalysisError string       `json:"analysis_error,omitempty"`
	// AnalysisPending is set (with Suspects null) while the capture's
	// analysis runs: the list does not wait for it (see analysis.go).
	AnalysisPending bool `json:"analysis_pending,omitempty"`
	// Preliminary is set for the node agent's first answer: a copy of the
	// bundle taken after the capture's first dump, replaced (under the
	// same id) by the final bundle when it arrives.
	Preliminary bool `json:"preliminary,omitempty"`
}

// incidentRef names an incident of a capture's report: its id, its one
// line and its member suspects.
type incidentRef struct {
	ID       string   `json:"id"`
	Summary  string   `json:"summary"`
	Suspects []string `json:"suspects"`
}

// process identifies the captured process.
type process struct {
	PID       int    `json:"pid,omitempty"`
	Exe       string `json:"exe,omitempty"`
	URL       string `json:"url,omitempty"`
	GoVersion string `json:"go_version,omitempty"`
	Module    string `json:"module,omitempty"`
}

// captureDetail is the answer of GET /api/captures/{id}.
type captureDetail struct {
	captureSummary
	Manifest bundle.Manifest    `json:"manifest"`
	Tables   []bundle.TableInfo `json:"tables"`
	Raw      []string           `json:"raw"`
	// Profiles maps each profile to its snapshot times and Dumps lists the
	// goroutines table's snapshot times, as decimal strings of Unix ns
	// (JavaScript numbers cannot hold them exactly).
	Profiles map[string][]string `json:"profiles"`
	Dumps    []string            `json:"dump_snapshots"`
	// SampleTypes lists, per profile present, the sample types a flame
	// graph or table can sum (value=), the default first.
	SampleTypes map[string][]string `json:"sample_types"`
	// History is when the node agent's history snapshots before the
	// capture were taken; absent when the bundle holds none.
	History *historySpan `json:"history,omitempty"`
}

func summarize(c *capture) captureSummary {
	m := c.b.Manifest
	out := captureSummary{
		ID: c.id, CaptureID: m.CaptureID, Node: m.Node,
		Process: process{PID: m.Target.PID, Exe: m.Target.Exe, URL: m.Target.URL, GoVersion: m.Target.GoVersion, Module: m.Target.ModulePath},
		Start:   m.Start, End: m.End, CaptureStart: analysis.CaptureStart(m), Sources: m.Sources, Preliminary: m.Preliminary,
	}
	if h := historyOf(m); h != nil {
		out.HistorySnapshots = len(h.Snapshots)
	}
	if out.Sources == nil {
		out.Sources = []bundle.Source{}
	}
	out.SourcesText = make([]string, len(out.Sources))
	for i, src := range out.Sources {
		out.SourcesText[i] = analysis.SourceText(src)
	}
	if !out.CaptureStart.IsZero() && !m.End.IsZero() {
		out.Duration = format.Duration(m.End.Sub(out.CaptureStart))
	}
	out.Bytes = c.Size()
	out.Size = sizeText(out.Bytes)
	rep, err := c.ListedReport()
	switch {
	case errors.Is(err, errPending):
		out.AnalysisPending = true
		return out
	case err != nil:
		out.AnalysisError = err.Error()
		return out
	}
	n := len(rep.Suspects)
	out.Suspects = &n
	if n > 0 {
		s := rep.Suspects[0]
		out.TopSuspect = fmt.Sprintf("%s %s (%s)", s.Pattern, s.Location, analysis.CountText(s))
	}
	if len(rep.Incidents) > 0 {
		inc := rep.Incidents[0]
		out.FirstIncident = &incidentRef{ID: inc.ID, Summary: inc.Summary, Suspects: inc.Suspects}
	}
	return out
}

// listHandler answers GET /api/captures: every capture, newest first.
// Captures whose analysis is still running after listWait are listed as
// pending.
func listHandler(s *Store) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		out := []captureSummary{}
		listed := s.List()
		awaitListed(listed, listWait)
		for _, c := range listed {
			// Hold each capture while summarizing it; one deleted meanwhile
			// is left out.
			c, release, err := s.Acquire(c.id)
			if err != nil {
				continue
			}
			out = append(out, summarize(c))
			release()
		}
		writeJSON(w, http.StatusOK, out)
	}
}

// captureHandler answers GET /api/captures/{id}.
func captureHandler(w http.ResponseWriter, r *http.Request, c *capture) {
	d := captureDetail{captureSummary: summarize(c), Manifest: c.b.Manifest, History: historyOf(c.b.Manifest)}
	var err error
	if d.Tables, err = c.Tables(); err != nil {
		writeError(w, statusOf(err), "read tables: "+err.Error())
		return
	}
	if d.Raw, err = c.b.RawFiles(); err != nil {
		writeError(w, statusOf(err), "list raw artifacts: "+err.Error())
		return
	}
	profiles, err := c.Profiles()
	if err != nil {
		writeError(w, statusOf(err), "list profiles: "+err.Error())
		return
	}
	d.Profiles = map[string][]string{}
	d.SampleTypes = map[string][]string{}
	for p, ts := range profiles {
		d.Profiles[p] = decimal(ts)
		d.SampleTypes[p] = flame.Values(p)
	}
	dumps, err := c.DumpSnapshots()
	if err != nil {
		writeError(w, statusOf(err), "list dump snapshots: "+err.Error())
		return
	}
	d.Dumps = decimal(dumps)
	if d.Raw == nil {
		d.Raw = []string{}
	}
	if d.Tables == nil {
		d.Tables = []bundle.TableInfo{}
	}
	writeJSON(w, http.StatusOK, d)
}

// uploadHandler answers POST /api/captures: the body is a bundle archive
// (.tar.zst or .tar.gz); the answer is 201 {"id": ...}.
func uploadHandler(s *Store, maxBytes int64, readIdle time.Duration, m *serverMetrics) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		client := uploadClient(r)
		count := func(result string) { m.uploads.WithLabelValues(result, client).Inc() }
		if r.ContentLength > maxBytes {
			count("too_large")
			w.Header().Set(RefusalHeader, RefusalTooLarge)
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("upload of %s exceeds the limit of %s", sizeText(r.ContentLength), sizeText(maxBytes)))
			return
		}
		if ct := r.Header.Get("Content-Type"); strings.HasPrefix(ct, "multipart/") {
			count("refused")
			writeError(w, http.StatusUnsupportedMediaType, "send the bundle archive itself as the request body, not a multipart form")
			return
		}
		idle := idleReader(w, r.Body, readIdle)
		body := http.MaxBytesReader(w, idle, maxBytes)
		id, existed, err := s.Add(body)
		if err != nil && idle.stalled {
			count("stalled")
			writeError(w, http.StatusRequestTimeout, fmt.Sprintf("upload stalled: it sent less than %s in %v", sizeText(minProgress), readIdle))
			return
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				count("too_large")
				w.Header().Set(RefusalHeader, RefusalTooLarge)
				writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("upload exceeds the limit of %s", sizeText(maxBytes)))
				return
			}
			status := statusOf(err)
			switch {
			case errors.Is(err, ErrQuota):
				w.Header().Set(RefusalHeader, RefusalNoRoom)
				w.Header().Set("Retry-After", "600")
			case errors.Is(err, bundle.ErrTooLarge):
				w.Header().Set(RefusalHeader, RefusalTooLarge)
			}
			if status == http.StatusInternalServerError && !errors.Is(err, bundle.ErrArchive) {
				// The error may name the server's paths: it goes to the
				// log, the client hears what happened.
				count("error")
				log.Printf("leakscope serve: store upload: %v", err)
				writeError(w, status, "the workbench could not store the upload (its log says why)")
				return
			}
			// err says what is wrong with the archive ("bad bundle
			// archive: …"); the client words the refusal.
			count("refused")
			writeError(w, status, err.Error())
			return
		}
		w.Header().Set("Location", "/api/captures/"+id)
		if existed {
			count("duplicate")
			writeJSON(w, http.StatusOK, uploadAnswer{ID: id, Duplicate: true})
			return
		}
		count("stored")
		if c, release, err := s.Acquire(id); err == nil {
			t := c.b.Manifest
			if ctr, err := m.stored.GetMetricWithLabelValues(format.Text(bundle.OrUnknown(t.NodeName())), format.Text(bundle.OrUnknown(t.Target.Service()))); err == nil {
				ctr.Inc()
			}
			done := c.startAnalysis()
			release()
			awaitUpload(done)
		}
		writeJSON(w, http.StatusCreated, uploadAnswer{ID: id})
	}
}

// RefusalHeader says why an upload was refused with 413, so that an
// uploader can tell a capture the workbench can never take
// (RefusalTooLarge: past --max-upload or --max-unpacked) from one it has
// no room for now (RefusalNoRoom: the quota or the disk; Retry-After says
// when to try again).
const (
	RefusalHeader   = "Leakscope-Refusal"
	RefusalTooLarge = "too-large"
	RefusalNoRoom   = "no-room"
)

// uploadAnswer is the body of a successful POST /api/captures: the id of
// the new capture (201), or of the capture the workbench already held with
// the same bundle (200, duplicate true).
type uploadAnswer struct {
	ID        string `json:"id"`
	Duplicate bool   `json:"duplicate,omitempty"`
}

// deleteHandler answers DELETE /api/captures/{id}.
func deleteHandler(s *Store, m *serverMetrics) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := mux.Vars(r)["id"]
		if err := s.Delete(id); err != nil {
			writeError(w, statusOf(err), err.Error())
			return
		}
		m.deletes.Inc()
		writeJSON(w, http.StatusOK, map[string]string{"deleted": id})
	}
}

// decimal formats Unix ns times as decimal strings.
func decimal(ts []int64) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = strconv.FormatInt(t, 10)
	}
	return out
}
