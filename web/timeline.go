package web

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/leakscope/leakscope/analysis"
)

// maxBars caps the lifetimes one timeline answer carries.
const maxBars = 200_000

// timelineAnswer is the body of GET /api/captures/{id}/timeline.
type timelineAnswer struct {
	// Lifetimes are goroutine and span bars overlapping [from, to].
	Lifetimes *analysis.LifetimeView `json:"lifetimes"`
	// Series are the report's goroutine count, heap and GC series, to draw
	// beneath the bars on the same time axis.
	Series analysis.Series `json:"series"`
	// Suspect, with suspect=ID, is how many of its goroutines are alive
	// at the lifetimes' alive_at: the suspect's count at its count_at.
	Suspect *analysis.LifetimeMembers `json:"suspect,omitempty"`
}

// timelineHandler answers GET /api/captures/{id}/timeline?from=&to=&limit=
// (times as Unix ns or RFC 3339; limit bars, default 100000), and with
// suspect=ID how many of that suspect's goroutines are alive.
func timelineHandler(w http.ResponseWriter, r *http.Request, c *capture) {
	q := r.URL.Query()
	from, err := timeParam(q, "from")
	if err != nil {
		writeError(w, statusOf(err), err.Error())
		return
	}
	to, err := timeParam(q, "to")
	if err != nil {
		writeError(w, statusOf(err), err.Error())
		return
	}
	limit, err := intParam(q, "limit", 100_000, maxBars)
	if err != nil {
		writeError(w, statusOf(err), err.Error())
		return
	}
	if to != 0 && from > to {
		writeError(w, http.StatusBadRequest, "from is after to")
		return
	}
	id := q.Get("suspect")
	key := fmt.Sprintf("timeline %d %d %d %q", from, to, limit, id)
	body, status := c.answers.get(key, func() ([]byte, int) {
		rep, err := c.Report()
		if err != nil {
			return encodeError(statusOf(err), "analyze capture: "+err.Error())
		}
		lv, err := analysis.Lifetimes(c.b, c.s.mem, unixTime(from), unixTime(to), limit)
		if err != nil {
			return encodeError(statusOf(err), "lifetimes: "+err.Error())
		}
		lv.MarkVerdicts(suspectMembers(c, rep))
		ans := timelineAnswer{Lifetimes: lv, Series: rep.Series}
		if id != "" {
			sel, err := c.Selection(id)
			if err != nil {
				return encodeError(suspectStatus(c, id), "timeline of suspect "+id+": "+err.Error())
			}
			m := lv.Members(sel)
			ans.Suspect = &m
		}
		body, err := json.Marshal(ans)
		if err != nil {
			return encodeError(http.StatusInternalServerError, "encode timeline: "+err.Error())
		}
		return body, http.StatusOK
	})
	writeBody(w, status, body)
}
