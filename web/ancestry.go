package web

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/leakscope/leakscope/analysis"
)

// suspectStatus is 404 for a suspect the report does not have, else 422:
// one it has but whose goroutines cannot be selected (from traces only).
func suspectStatus(c *capture, id string) int {
	rep, err := c.Report()
	if err != nil {
		return statusOf(err)
	}
	for _, s := range rep.Suspects {
		if s.ID == id {
			return http.StatusUnprocessableEntity
		}
	}
	return http.StatusNotFound
}

// ancestryAnswer is the body of GET /api/captures/{id}/ancestry.
type ancestryAnswer struct {
	*analysis.AncestryTree
	// Suspect, with suspect=ID, is where that suspect's goroutines sit.
	Suspect *analysis.AncestryMembers `json:"suspect,omitempty"`
	// Suspects is the same for every goroutine suspect counted from
	// dumps, so a tree marks the nodes holding leaked goroutines (and
	// only those) without asking per suspect.
	Suspects []analysis.AncestryMembers `json:"suspects"`
}

// ancestryHandler answers GET /api/captures/{id}/ancestry: the goroutine
// creation tree rolled up by function (analysis.AncestryTree), its alive
// counts at alive_at. With suspect=ID it adds where that suspect's
// goroutines sit ("suspect": alive at alive_at, which is the suspect's
// count at its count_at, and the nodes holding them). With goid=N it
// answers that goroutine's chain of creator goids, nearest first.
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
	id := r.URL.Query().Get("suspect")
	body, status := c.answers.get("ancestry "+id, func() ([]byte, int) {
		t, err := c.Ancestry()
		if err != nil {
			return encodeError(statusOf(err), "ancestry: "+err.Error())
		}
		v := ancestryAnswer{AncestryTree: t, Suspects: []analysis.AncestryMembers{}}
		if id != "" {
			sel, err := c.Selection(id)
			if err != nil {
				return encodeError(suspectStatus(c, id), "ancestry of suspect "+id+": "+err.Error())
			}
			m := t.Members(sel)
			v.Suspect = &m
		}
		rep, err := c.Report()
		if err != nil {
			return encodeError(statusOf(err), "analyze capture: "+err.Error())
		}
		for _, s := range rep.Suspects {
			if s.Kind != analysis.KindGoroutine {
				continue
			}
			if sel, err := c.Selection(s.ID); err == nil && sel.Goids != nil {
				v.Suspects = append(v.Suspects, t.Members(sel))
			}
		}
		body, err := json.Marshal(v)
		if err != nil {
			return encodeError(http.StatusInternalServerError, "encode ancestry: "+err.Error())
		}
		return body, http.StatusOK
	})
	writeBody(w, status, body)
}
