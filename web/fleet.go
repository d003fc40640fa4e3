package web

import (
	"net/http"

	"github.com/leakscope/leakscope/analysis/fleet"
)

// fleetHandler answers GET /api/fleet: the services the stored captures
// are of ({"services": [...]}), or with ?service=NAME that service's view
// across nodes: its captures and which leaks appear on how many nodes,
// since when.
func fleetHandler(s *Store) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		caps := fleetCaptures(s)
		name := r.URL.Query().Get("service")
		if name == "" {
			unknown := fleet.Unidentified(caps)
			if unknown == nil {
				unknown = []fleet.CaptureRef{}
			}
			writeJSON(w, http.StatusOK, map[string]any{"services": fleet.Services(caps), "unidentified": unknown})
			return
		}
		view := fleet.Summarize(name, caps)
		if len(view.Captures) == 0 {
			writeError(w, http.StatusNotFound, "no capture of service "+name)
			return
		}
		writeJSON(w, http.StatusOK, view)
	}
}

// fleetCaptures collects every capture but the shipped samples (they
// are not the user's fleet) with its (cached) report; a capture whose
// analysis failed, or is still running after listWait, comes without one.
func fleetCaptures(s *Store) []fleet.Capture {
	var out []fleet.Capture
	var all []*capture
	for _, c := range s.List() {
		if !isSample(c.id) {
			all = append(all, c)
		}
	}
	awaitListed(all, listWait)
	for _, listed := range all {
		c, release, err := s.Acquire(listed.id)
		if err != nil {
			continue
		}
		fc := fleet.Capture{ID: c.id, Manifest: c.b.Manifest}
		if rep, err := c.ListedReport(); err == nil {
			fc.Report = rep
		}
		release()
		out = append(out, fc)
	}
	return out
}
