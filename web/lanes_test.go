package web

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/cmd/leakscope/bundles"
	"github.com/leakscope/leakscope/ingest"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// TestLanes asks for the state lanes of every goroutine suspect of the
// sample bundles, decoded by the source serve injects (ingest.Transitions):
// each lane is a member or a creator of one, every segment lies inside a
// trace window in time order with a known state, every stack a segment
// names comes with the answer, and the members are the suspect's own
// goroutines. A heap suspect and an unknown one say why they have none,
// and a workbench without the decoder answers 501.
func TestLanes(t *testing.T) {
	s, err := openStoreT(t, t.TempDir(), bundles.FS, bundle.Limits{MaxBytes: 64 << 20, MaxFiles: 200}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := NewRouter(s, Options{Loopback: true, Transitions: ingest.Transitions})
	var list []captureSummary
	do(t, h, "GET", "/api/captures", nil, &list)
	lanes := 0
	for _, c := range list {
		base := "/api/captures/" + c.ID
		var rep analysis.Report
		do(t, h, "GET", base+"/report", nil, &rep)
		for _, sp := range rep.Suspects {
			var lv analysis.StateLanes
			if rec := do(t, h, "GET", base+"/lanes?suspect="+sp.ID, nil, &lv); rec.Code != http.StatusOK {
				t.Fatalf("%s %s: %d %s", c.ID, sp.ID, rec.Code, rec.Body)
			}
			if sp.Kind == analysis.KindHeap {
				if len(lv.Lanes) != 0 || lv.Note == "" {
					t.Errorf("%s heap suspect %s: %d lanes, note %q", c.ID, sp.ID, len(lv.Lanes), lv.Note)
				}
				continue
			}
			sel, err := mustCapture(t, s, c.ID).Selection(sp.ID)
			members := sp.Goids
			if err == nil && len(sel.Goids) > 0 {
				members = sel.Goids
			}
			lanes += checkLanes(t, c.ID+" "+sp.ID, lv, members)
		}
	}
	if lanes == 0 {
		t.Fatal("no sample suspect has a single lane")
	}
	base := "/api/captures/" + list[0].ID
	wantError(t, do(t, h, "GET", base+"/lanes?suspect=G99", nil, nil), 404, `no such suspect "G99"`)
	wantError(t, do(t, h, "GET", base+"/lanes", nil, nil), 400, "suspect=ID")
	_, bare := newServer(t, Options{})
	var up struct{ ID string }
	do(t, bare, http.MethodPost, "/api/captures", getFixture(t).archive, &up)
	wantError(t, do(t, bare, "GET", "/api/captures/"+up.ID+"/lanes?suspect=G1", nil, nil), 501, "without a trace decoder")
}

func mustCapture(t *testing.T, s *Store, id string) *capture {
	t.Helper()
	c, release, err := s.Acquire(id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return c
}

// checkLanes checks one suspect's lanes and returns how many it has.
func checkLanes(t *testing.T, name string, lv analysis.StateLanes, members []int64) int {
	t.Helper()
	inWindow := func(ts time.Time) bool {
		for _, w := range lv.Windows {
			if !ts.Before(w.Start) && !ts.After(w.End) {
				return true
			}
		}
		return false
	}
	states := map[string]bool{analysis.StateRunning: true, analysis.StateRunnable: true, analysis.StateWaiting: true, analysis.StateSyscall: true}
	for _, l := range lv.Lanes {
		switch l.Role {
		case "member":
			if !slices.Contains(members, l.Goid) {
				t.Errorf("%s: lane of goroutine %d says member; the suspect's goroutines are %v", name, l.Goid, members)
			}
		case "creator":
		default:
			t.Errorf("%s: lane %d role %q", name, l.Goid, l.Role)
		}
		if len(l.Segments) == 0 {
			t.Errorf("%s: lane %d has no segment", name, l.Goid)
		}
		for i, sg := range l.Segments {
			if !states[sg.State] || sg.End.Before(sg.Start) || !inWindow(sg.Start) || !inWindow(sg.End) {
				t.Errorf("%s: goroutine %d segment %d %+v: unknown state, reversed or outside the windows %v", name, l.Goid, i, sg, lv.Windows)
			}
			if i > 0 && sg.Start.Before(l.Segments[i-1].Start) {
				t.Errorf("%s: goroutine %d segments out of order at %d", name, l.Goid, i)
			}
			if sg.StackID != 0 && len(lv.Stacks[itoa(sg.StackID)]) == 0 {
				t.Errorf("%s: goroutine %d segment %d names stack %d, which the answer lacks", name, l.Goid, i, sg.StackID)
			}
			if sg.SinceBefore && !slices.ContainsFunc(lv.Windows, func(w analysis.Window) bool { return w.Start.Equal(sg.Start) }) {
				t.Errorf("%s: goroutine %d segment %d was in its state before the window but starts at %v, not at a window's start", name, l.Goid, i, sg.Start)
			}
			if l.Role == "member" && i == len(l.Segments)-1 && sg.State == analysis.StateWaiting && sg.Reason == "" {
				t.Errorf("%s: member %d still waiting at the end shows no reason", name, l.Goid)
			}
			if sg.Reason != "" && sg.State != analysis.StateWaiting {
				t.Errorf("%s: %s segment with reason %q", name, sg.State, sg.Reason)
			}
		}
	}
	if n := len(lv.Lanes) + len(lv.Missing); n > 32 {
		t.Errorf("%s: %d goroutines asked for; a suspect's view shows at most 16 members and 16 creators", name, n)
	}
	return len(lv.Lanes)
}
