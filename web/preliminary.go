package web

import (
	"fmt"
	"log"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/gorilla/mux"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/killpoint"
)

// sameCapture returns the ids of the stored captures whose bundle has
// the given capture id, from the given node when node is not "*": a
// preliminary one (the node agent's first answer,
// bundle.Manifest.Preliminary) and a final one, each "" when there is
// none.
func (s *Store) sameCapture(captureID, node string) (prelim, final string) {
	if captureID == "" {
		return "", ""
	}
	for _, c := range s.List() {
		if m := c.b.Manifest; m.CaptureID != captureID || node != "*" && m.Node != node {
			continue
		}
		if c.b.Manifest.Preliminary {
			if prelim == "" {
				prelim = c.id
			}
		} else if final == "" {
			final = c.id
		}
	}
	return prelim, final
}

// supersedingPrefix names a final bundle staged to replace the
// preliminary capture of the id after it (see supersede and
// finishSupersede).
const supersedingPrefix = ".superseding-"

// supersede puts the final bundle unpacked in incoming (size bytes) in
// the place of the preliminary capture id: the capture keeps its id, so a
// link to the preliminary one shows the final one. The preliminary
// capture disappears from the store first and its reads in flight finish
// on it; until the final one is in place its id answers 404. The final
// bundle is staged under a dot name first, so a kill at any step leaves
// either the preliminary capture and nothing staged, or a staged final
// bundle the next start puts in place (finishSupersede).
func (s *Store) supersede(id, incoming string, size int64) error {
	staged := filepath.Join(s.dir, supersedingPrefix+id)
	if err := os.Rename(incoming, staged); err != nil {
		return fmt.Errorf("replace preliminary capture %s: %w", id, err)
	}
	killpoint.At("store:staged")
	s.mu.Lock()
	old := s.caps[id]
	delete(s.caps, id)
	s.mu.Unlock()
	if old != nil {
		old.stopAnalysis()
		old.use.Lock() // wait for readers; no new ones can find it
		defer old.use.Unlock()
	}
	dst := filepath.Join(s.dir, id)
	oldSize := bundle.DirSize(dst)
	trash := filepath.Join(s.dir, ".deleted-"+id+"-"+newID())
	if err := os.Rename(dst, trash); err != nil && !os.IsNotExist(err) {
		os.RemoveAll(staged)
		return fmt.Errorf("replace preliminary capture %s: %w", id, err)
	}
	s.dropReportCache(id)
	killpoint.At("store:swapped")
	if err := os.Rename(staged, dst); err != nil {
		os.RemoveAll(staged)
		return fmt.Errorf("replace preliminary capture %s: %w", id, err)
	}
	os.RemoveAll(trash)
	b, err := openStored(dst)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used -= oldSize
	if err != nil {
		os.RemoveAll(dst)
		return err
	}
	s.caps[id] = newCapture(id, b, s)
	s.used += size
	return nil
}

// finishSupersede completes a replacement a kill interrupted, when name
// is a staged final bundle (".superseding-ID"): it takes the place of
// capture ID, which is the preliminary one if it is still there.
func (s *Store) finishSupersede(name string) {
	id, ok := strings.CutPrefix(name, supersedingPrefix)
	if !ok || !idPattern.MatchString(id) {
		return
	}
	dst := filepath.Join(s.dir, id)
	os.RemoveAll(dst)
	os.Remove(s.reportCachePath(id))
	if err := os.Rename(filepath.Join(s.dir, name), dst); err != nil {
		log.Printf("leakscope serve: finishing the replacement of capture %s: %v", id, err)
	}
}

// byCaptureIDHandler answers GET /c/{capture_id}, the link the node agent
// gives when it triggers a capture: a redirect to the workbench page of
// the capture whose bundle has that capture id (the final one, else the
// preliminary one), or 404 while neither has arrived.
func byCaptureIDHandler(s *Store) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		cid := mux.Vars(r)["capture_id"]
		prelim, final := s.sameCapture(cid, "*")
		id := final
		if id == "" {
			id = prelim
		}
		if id == "" {
			w.Header().Set("Retry-After", "5")
			writeError(w, http.StatusNotFound, fmt.Sprintf("capture %q has not reached the workbench yet (its first answer comes seconds after the first dump)", cid))
			return
		}
		http.Redirect(w, r, "/#/c/"+url.PathEscape(id)+"/overview", http.StatusSeeOther)
	}
}
