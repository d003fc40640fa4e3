package web

import (
	"encoding/json"
	"net/http"

	"github.com/leakscope/leakscope/analysis"
)

// lanesHandler answers GET /api/captures/{id}/lanes?suspect=ID: one lane
// per goroutine of the suspect (its oldest members) and of the goroutines
// that created them, with its states (running, runnable, waiting with the
// reason, syscall) inside the trace windows and the stacks where they
// changed (analysis.StateLanes). src decodes the transitions from the
// capture's raw traces; without it the answer is 501.
func lanesHandler(src analysis.TransitionSource) func(http.ResponseWriter, *http.Request, *capture) {
	return func(w http.ResponseWriter, r *http.Request, c *capture) {
		id := r.URL.Query().Get("suspect")
		if id == "" {
			writeError(w, http.StatusBadRequest, "lanes need suspect=ID (a suspect of the capture's report)")
			return
		}
		if src == nil {
			writeError(w, http.StatusNotImplemented, "this workbench was started without a trace decoder: goroutine states are not available")
			return
		}
		body, status := c.answers.get("lanes "+id, func() ([]byte, int) {
			lv, err := suspectLanes(c, src, id)
			if err != nil {
				return encodeError(statusOf(err), err.Error())
			}
			body, err := json.Marshal(lv)
			if err != nil {
				return encodeError(http.StatusInternalServerError, "encode lanes: "+err.Error())
			}
			return body, http.StatusOK
		})
		writeBody(w, status, body)
	}
}

// lanesAnswer is the body of GET /api/captures/{id}/lanes: the lanes,
// and which goroutines they are of the suspect's, so the page can say
// "16 of its 375 goroutines" and tell its members from their creators.
type lanesAnswer struct {
	*analysis.StateLanes
	// Members is how many goroutines the suspect counts; Sampled how many
	// of them (the oldest) have a lane asked for, Creators how many
	// goroutines that created them do.
	Members  int `json:"members"`
	Sampled  int `json:"sampled_members"`
	Creators int `json:"creators"`
	// MissingMembers and MissingCreators split Missing by role.
	MissingMembers  []int64 `json:"missing_members"`
	MissingCreators []int64 `json:"missing_creators"`
}

// suspectLanes builds the state lanes of suspect id: its members are the
// goroutines its count selects (or, for a suspect from trace windows or
// goroutine profiles, those the report lists).
func suspectLanes(c *capture, src analysis.TransitionSource, id string) (*lanesAnswer, error) {
	rep, err := c.Report()
	if err != nil {
		return nil, err
	}
	var s *analysis.Suspect
	for i := range rep.Suspects {
		if rep.Suspects[i].ID == id {
			s = &rep.Suspects[i]
		}
	}
	if s == nil {
		return nil, noSuspect(c, rep, id)
	}
	if s.Kind == analysis.KindHeap {
		return &lanesAnswer{StateLanes: &analysis.StateLanes{Suspect: id, Windows: []analysis.Window{}, Lanes: []analysis.StateLane{}, Stacks: map[string][]analysis.Frame{}, Missing: []int64{},
			Note: "a heap suspect is memory, not goroutines: it has no goroutine states"}, MissingMembers: []int64{}, MissingCreators: []int64{}}, nil
	}
	members := s.Goids
	if sel, err := c.Selection(id); err == nil && len(sel.Goids) > 0 {
		members = sel.Goids
	}
	tree, err := c.Ancestry()
	if err != nil {
		return nil, err
	}
	goids, roles := analysis.LaneGoroutines(members, tree)
	lv, err := analysis.GoroutineStates(c.b, c.s.mem, src, goids, roles, tree)
	if err != nil {
		return nil, err
	}
	lv.Suspect = id
	dumpReasons(lv, s.State)
	out := &lanesAnswer{StateLanes: lv, Members: len(members), MissingMembers: []int64{}, MissingCreators: []int64{}}
	for _, g := range goids {
		if roles[g] == "member" {
			out.Sampled++
		} else {
			out.Creators++
		}
	}
	for _, g := range lv.Missing {
		if roles[g] == "member" {
			out.MissingMembers = append(out.MissingMembers, g)
		} else {
			out.MissingCreators = append(out.MissingCreators, g)
		}
	}
	return out, nil
}

// dumpReasons names the wait of a member still waiting at the end of its
// lane where the trace began in the wait without a reason: the state the
// goroutine dump gives the suspect's members, said to be the dump's.
func dumpReasons(lv *analysis.StateLanes, state string) {
	if state == "" {
		return
	}
	for i := range lv.Lanes {
		l := &lv.Lanes[i]
		if l.Role != "member" || len(l.Segments) == 0 {
			continue
		}
		seg := &l.Segments[len(l.Segments)-1]
		if seg.State == analysis.StateWaiting && seg.Reason == "" {
			seg.Reason, seg.ReasonFrom = state, "dump"
		}
	}
}
