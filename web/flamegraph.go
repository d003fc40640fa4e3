package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

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
//	own=mark|hide            the capture's own pprof/trace stacks marked (o)
//	                         or left out (own_hidden says what they held)
//	goid                     goroutines of a dump, repeatable
//	suspect=ID               the goroutines (or heap site) of one suspect
//	sandwich=FUNCTION        {"function","callers","callees"} instead
func flamegraphHandler(w http.ResponseWriter, r *http.Request, c *capture) {
	q, sandwich, err := flameQuery(r.URL.Query(), c)
	if err != nil {
		writeError(w, statusOf(err), err.Error())
		return
	}
	key := "flame " + r.URL.Query().Encode()
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
	switch own := v.Get("own"); own {
	case "", "mark":
	case "hide":
		q.HideOwn = true
	default:
		return q, "", fmt.Errorf("%w: own=%q (want mark or hide: the capture's own pprof and trace requests marked, or left out)", errBadRequest, own)
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

// suspectQuery narrows q to one suspect of the report: exactly what its
// figures count, at the snapshot they are for (unless the request names
// another snapshot or a range): its member goroutines in that dump, or
// the samples of its allocation stacks (heap) or goroutine profile stacks.
// The tree's total is then the suspect's count.
func suspectQuery(q *flame.Query, c *capture, id string) error {
	rep, err := c.Report()
	if err != nil {
		return fmt.Errorf("analyze capture: %w", err)
	}
	found := false
	for _, s := range rep.Suspects {
		found = found || s.ID == id
	}
	if !found {
		return noSuspect(c, rep, id)
	}
	sel, err := c.Selection(id)
	if err != nil {
		return fmt.Errorf("select suspect %s: %w", id, err)
	}
	if q.Snapshot == 0 && q.From == 0 && q.To == 0 {
		q.Snapshot = sel.Snapshot.UnixNano()
	}
	if sel.Profile == "" {
		q.Profile, q.Source = "", flame.SourceGoroutines
		q.Goids = append(q.Goids, sel.Goids...)
		if len(q.Goids) == 0 {
			q.Goids = []int64{-1} // no members: an empty tree, not every goroutine
		}
		return nil
	}
	q.Profile, q.Source = sel.Profile, flame.SourceSamples
	q.Value = ""
	q.Stacks = append(q.Stacks, sel.Stacks...)
	if len(q.Stacks) == 0 {
		q.Stacks = []int64{-1}
	}
	return nil
}

// noSuspect is the error for a suspect id the report does not hold; it
// names the ones it does.
func noSuspect(c *capture, rep *analysis.Report, id string) error {
	ids := make([]string, 0, len(rep.Suspects))
	for _, s := range rep.Suspects {
		ids = append(ids, s.ID)
	}
	has := "has no suspects"
	if len(ids) > 0 {
		has = "has " + strings.Join(ids, ", ")
	}
	return fmt.Errorf("%w %q: the report of capture %s %s", ErrNoSuspect, id, c.id, has)
}
