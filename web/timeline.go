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
}

// timelineHandler answers GET /api/captures/{id}/timeline?from=&to=&limit=
// (times as Unix ns or RFC 3339; limit bars, default 100000).
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
	key := fmt.Sprintf("timeline %d %d %d", from, to, limit)
	body, status := c.answers.get(key, func() ([]byte, int) {
		rep, err := c.Report()
		if err != nil {
			return encodeError(statusOf(err), "analyze capture: "+err.Error())
		}
		lv, err := analysis.Lifetimes(c.b, c.s.mem, unixTime(from), unixTime(to), limit)
		if err != nil {
			return encodeError(statusOf(err), "lifetimes: "+err.Error())
		}
		body, err := json.Marshal(timelineAnswer{Lifetimes: lv, Series: rep.Series})
		if err != nil {
			return encodeError(http.StatusInternalServerError, "encode timeline: "+err.Error())
		}
		return body, http.StatusOK
	})
	writeBody(w, status, body)
}
