package web

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"

	"github.com/gorilla/mux"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// rawHandler answers GET /api/captures/{id}/raw/{name}: one original
// artifact (a .pb.gz for go tool pprof, trace.out for go tool trace, dump
// text), as an attachment. Only names the capture's raw/ folder lists are
// served.
func rawHandler(w http.ResponseWriter, r *http.Request, c *capture) {
	name := mux.Vars(r)["name"]
	names, err := c.b.RawFiles()
	if err != nil {
		writeError(w, statusOf(err), "list raw artifacts: "+err.Error())
		return
	}
	if !slices.Contains(names, name) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("capture %s has no raw artifact %q", c.id, name))
		return
	}
	f, err := os.Open(filepath.Join(c.b.Dir, bundle.RawDir, name))
	if err != nil {
		writeError(w, statusOf(err), "open raw artifact: "+err.Error())
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		writeError(w, statusOf(err), "open raw artifact: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name))
	http.ServeContent(w, r, "", st.ModTime(), f)
}
