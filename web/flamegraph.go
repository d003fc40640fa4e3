package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/analysis/flame"
)

// maxFlameNodes is the node count above which a tree is pruned of the
// narrowest subtrees before it is sent (the root total is unchanged).
const maxFlameNodes = 20000

// flamegraphHandler answers GET /api/captures/{id}/flamegraph with a
// flame.Tree in its JSON envelope (d3-flame-graph's n/v/c keys). Parameters:
//
//	profile, value, source   what to sum (flame.Query)
//	snapshot | from, to      one snapshot (default: the latest) or a range
//	base                     a snapshot to subtract (diff)
//	focus, ignore            regular expressions, repeatable
//	invert=1                 callers tree
//	goid                     goroutines of a dump, repeatable
//	suspect=ID               the goroutines (or heap site) of one suspect
//	sandwich=FUNCTION        {"function","callers","callees"} instead
func flamegraphHandler(w http.ResponseWriter, r *http.Request, c *capture) {
	q, sandwich, err := flameQuery(r.URL.Query(), c)
	if err != nil {
		writeError(w, statusOf(err), err.Error())
		return
	}
	key := fmt.Sprintf("flame %#v %q", q, sandwich)
	body, status := c.answers.get(key, func() ([]byte, int) { return flameAnswer(c, q, sandwich) })
	writeBody(w, status, body)
}

func flameAnswer(c *capture, q flame.Query, sandwich string) ([]byte, int) {
	st, err := c.Stacks()
	if err != nil {
		return encodeError(statusOf(err), "load stacks: "+err.Error())
	}
	t, err := st.Build(c.b, c.s.mem, q)
	if err != nil {
		return encodeError(flameStatus(err), "flame graph: "+err.Error())
	}
	var v any = t
	if sandwich != "" {
		callers, callees, err := flame.Sandwich(t, sandwich)
		if err != nil {
			return encodeError(flameStatus(err), err.Error())
		}
		prune(callers)
		prune(callees)
		v = struct {
			Function string      `json:"function"`
			Callers  *flame.Tree `json:"callers"`
			Callees  *flame.Tree `json:"callees"`
		}{sandwich, callers, callees}
	} else {
		prune(t)
	}
	body, err := json.Marshal(v)
	if err != nil {
		return encodeError(http.StatusInternalServerError, "encode flame graph: "+err.Error())
	}
	return body, http.StatusOK
}

// flameStatus maps a flame error: unknown snapshots and functions are 404,
// the rest of its errors are bad queries.
func flameStatus(err error) int {
	if s := statusOf(err); s != http.StatusInternalServerError {
		return s
	}
	return http.StatusBadRequest
}

// prune drops the narrowest subtrees of a huge tree, keeping it drawable.
func prune(t *flame.Tree) {
	for min := max(abs64(t.Total()), abs64(t.Root.BaseTotal)) / 10000; t.Nodes() > maxFlameNodes && min > 0; min *= 4 {
		t.Prune(min)
	}
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// flameQuery turns request parameters into a flame.Query.
func flameQuery(v url.Values, c *capture) (flame.Query, string, error) {
	q := flame.Query{
		Profile: v.Get("profile"),
		Value:   v.Get("value"),
		Source:  v.Get("source"),
		Focus:   v["focus"],
		Ignore:  v["ignore"],
		Invert:  isTrue(v.Get("invert")),
	}
	var err error
	if q.Snapshot, err = timeParam(v, "snapshot"); err != nil {
		return q, "", err
	}
	if q.From, err = timeParam(v, "from"); err != nil {
		return q, "", err
	}
	if q.To, err = timeParam(v, "to"); err != nil {
		return q, "", err
	}
	if q.Base, err = timeParam(v, "base"); err != nil {
		return q, "", err
	}
	for _, g := range v["goid"] {
		n, err := strconv.ParseInt(g, 10, 64)
		if err != nil || n <= 0 {
			return q, "", fmt.Errorf("%w: goid=%q is not a goroutine id", errBadRequest, g)
		}
		q.Goids = append(q.Goids, n)
	}
	if id := v.Get("suspect"); id != "" {
		if err := suspectQuery(&q, c, id); err != nil {
			return q, "", err
		}
	}
	sandwich := v.Get("sandwich")
	if sandwich != "" && q.Invert {
		return q, "", fmt.Errorf("%w: sandwich and invert are exclusive (the sandwich shows both directions)", errBadRequest)
	}
	return q, sandwich, nil
}

// suspectQuery narrows q to one suspect of the report: its member
// goroutines when the report lists them all, else the stacks through the
// function where they are parked (or, for a heap suspect, allocate).
func suspectQuery(q *flame.Query, c *capture, id string) error {
	rep, err := c.Report()
	if err != nil {
		return fmt.Errorf("analyze capture: %w", err)
	}
	for _, s := range rep.Suspects {
		if s.ID != id {
			continue
		}
		if s.Kind == analysis.KindHeap {
			if q.Profile == "" {
				q.Profile = "heap"
			}
		} else if int64(len(s.Goids)) == s.Count && s.Count > 0 && q.Source != flame.SourceSamples {
			q.Goids = append(q.Goids, s.Goids...)
			return nil
		}
		if s.Location != "" {
			q.Focus = append(q.Focus, "^"+regexp.QuoteMeta(s.Location)+"$")
		}
		return nil
	}
	return fmt.Errorf("capture %s has no suspect %q: %w", c.id, id, ErrNotFound)
}
