package web

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// ancestryHandler answers GET /api/captures/{id}/ancestry: the goroutine
// creation tree rolled up by function (analysis.AncestryTree). With
// goid=N it also answers that goroutine's chain of creator goids, nearest
// first.
func ancestryHandler(w http.ResponseWriter, r *http.Request, c *capture) {
	if g := r.URL.Query().Get("goid"); g != "" {
		goid, err := strconv.ParseInt(g, 10, 64)
		if err != nil || goid <= 0 {
			writeError(w, http.StatusBadRequest, "goid="+strconv.Quote(g)+" is not a goroutine id")
			return
		}
		t, err := c.Ancestry()
		if err != nil {
			writeError(w, statusOf(err), "ancestry: "+err.Error())
			return
		}
		chain := t.Chain(goid)
		if chain == nil {
			chain = []int64{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"goid": goid, "chain": chain})
		return
	}
	body, status := c.answers.get("ancestry", func() ([]byte, int) {
		t, err := c.Ancestry()
		if err != nil {
			return encodeError(statusOf(err), "ancestry: "+err.Error())
		}
		body, err := json.Marshal(t)
		if err != nil {
			return encodeError(http.StatusInternalServerError, "encode ancestry: "+err.Error())
		}
		return body, http.StatusOK
	})
	writeBody(w, status, body)
}
