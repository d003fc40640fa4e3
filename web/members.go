package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/leakscope/leakscope/analysis"
)

// maxMembersPage caps the goids one members answer carries.
const maxMembersPage = 10_000

// membersAnswer is the body of GET /api/captures/{id}/members.
type membersAnswer struct {
	Suspect string `json:"suspect"`
	// Snapshot is the dump the membership is of: the suspect's count_at.
	Snapshot time.Time `json:"snapshot"`
	// Count is how many goroutines are in the suspect there: its count.
	Count int `json:"count"`
	// With goid=N: whether that goroutine is one of them.
	Goid   int64 `json:"goid,omitempty"`
	Member *bool `json:"member,omitempty"`
	// Without goid: a page of the members, in goid order, from Offset;
	// NextOffset is where the next page starts (0: this is the last).
	Goids      []int64 `json:"goids,omitempty"`
	Offset     int     `json:"offset"`
	NextOffset int     `json:"next_offset,omitempty"`
}

// membersHandler answers GET /api/captures/{id}/members?suspect=ID: which
// goroutines are in the suspect (paged by offset= and limit=, default
// 1000), or with goid=N whether that one is. Both come from the one
// selection the suspect's count, flame graph, ancestry and timeline use
// (analysis.Report.Select), unlike the suspect's goids, which are a sample.
func membersHandler(w http.ResponseWriter, r *http.Request, c *capture) {
	q := r.URL.Query()
	id := q.Get("suspect")
	if id == "" {
		writeError(w, http.StatusBadRequest, "members need suspect=ID (a goroutine suspect of the capture's report)")
		return
	}
	offset, err := intParam(q, "offset", 0, 1<<31-1)
	if err != nil {
		writeError(w, statusOf(err), err.Error())
		return
	}
	limit, err := intParam(q, "limit", 1000, maxMembersPage)
	if err != nil {
		writeError(w, statusOf(err), err.Error())
		return
	}
	sel, err := c.Selection(id)
	if err != nil {
		writeError(w, suspectStatus(c, id), "members of suspect "+id+": "+err.Error())
		return
	}
	if sel.Goids == nil {
		writeError(w, http.StatusUnprocessableEntity, "members of suspect "+id+": it counts "+sel.Profile+" profile samples by stack, not goroutines by id")
		return
	}
	ans := membersAnswer{Suspect: id, Snapshot: sel.Snapshot, Count: len(sel.Goids)}
	if g := q.Get("goid"); g != "" {
		goid, err := strconv.ParseInt(g, 10, 64)
		if err != nil || goid <= 0 {
			writeError(w, http.StatusBadRequest, "goid="+strconv.Quote(g)+" is not a goroutine id")
			return
		}
		in := sel.Has(goid)
		ans.Goid, ans.Member = goid, &in
		writeJSON(w, http.StatusOK, ans)
		return
	}
	ans.Offset = offset
	ans.Goids, ans.NextOffset = sel.Page(offset, limit)
	writeJSON(w, http.StatusOK, ans)
}

// suspectMembers maps each goroutine suspect to its member goroutines:
// all of them where its selection names them (a suspect from dumps),
// else the sample of goids the report keeps.
func suspectMembers(c *capture, rep *analysis.Report) map[string][]int64 {
	out := map[string][]int64{}
	for _, s := range rep.Suspects {
		if s.Kind != analysis.KindGoroutine {
			continue
		}
		out[s.ID] = s.Goids
		if sel, err := c.Selection(s.ID); err == nil && sel.Goids != nil {
			out[s.ID] = sel.Goids
		}
	}
	return out
}
