package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/analysis/flame"
	"github.com/leakscope/leakscope/analysis/report"
	"github.com/leakscope/leakscope/cmd/leakscope/bundles"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/internal/format"
)

// TestOneFigureEverywhere walks every committed sample bundle and every
// suspect and checks that its figures — count and the snapshot it is for,
// rate, range, first seen, onset, heap bytes — are the same in the report
// the CLI writes (JSON, Markdown, HTML) and in every workbench answer: the
// overview's report, the suspect's flame graph, its goroutines in the
// ancestry tree and the timeline, the heap growth table and the captures
// list. Any difference fails.
func TestOneFigureEverywhere(t *testing.T) {
	s, err := openStoreT(t, t.TempDir(), bundles.FS, bundle.Limits{MaxBytes: 64 << 20, MaxFiles: 200}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := NewRouter(s, Options{Loopback: true})
	var list []captureSummary
	do(t, h, "GET", "/api/captures", nil, &list)
	if len(list) < 3 {
		t.Fatalf("%d sample captures", len(list))
	}
	checked := 0
	for _, c := range list {
		t.Run(c.ID, func(t *testing.T) {
			checked += checkCapture(t, h, s, c)
		})
	}
	if checked == 0 {
		t.Fatal("no suspect in any sample bundle")
	}
}

// listedAnalysed is capture id's entry in the captures list once its
// analysis is no longer pending: the list does not wait for analyses, so
// the entry read before the reports may have none yet.
func listedAnalysed(t *testing.T, h http.Handler, id string) captureSummary {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var list []captureSummary
		do(t, h, "GET", "/api/captures", nil, &list)
		for _, c := range list {
			if c.ID == id && (!c.AnalysisPending || time.Now().After(deadline)) {
				return c
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("capture %s left the list", id)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkCapture compares every suspect of one capture across the views and
// returns how many it checked.
func checkCapture(t *testing.T, h http.Handler, s *Store, c captureSummary) int {
	base := "/api/captures/" + c.ID
	v := cliReports(t, s, c.ID)
	webReports(t, h, base, &v)
	if len(v.cli.Suspects) != len(v.web.Suspects) {
		t.Fatalf("CLI report has %d suspects, the workbench %d", len(v.cli.Suspects), len(v.web.Suspects))
	}
	c = listedAnalysed(t, h, c.ID)
	if len(v.web.Suspects) > 0 && !strings.HasSuffix(c.TopSuspect, "("+v.web.Suspects[0].Display.Count+")") {
		t.Errorf("captures list: top suspect %q, report count %s", c.TopSuspect, v.web.Suspects[0].Display.Count)
	}
	checkLeakProfileShown(t, v)
	for i, ws := range v.web.Suspects {
		same(t, ws.ID+" (CLI JSON vs workbench JSON)", figuresOf(v.cli.Suspects[i]), figuresOf(ws))
		checkSuspectText(t, v, ws)
		checkSuspectFlame(t, h, base, ws)
		if ws.Kind == analysis.KindGoroutine {
			checkGoroutineViews(t, h, base, ws)
		} else {
			checkHeapRow(t, v.web, ws)
		}
		checkTimelineEvents(t, v.web, ws)
	}
	checkHeapTables(t, v)
	return len(v.web.Suspects)
}

// reportViews is one capture's report as the CLI writes it and as the
// workbench answers it: JSON (decoded), Markdown and HTML.
type reportViews struct {
	cli, web       analysis.Report
	md, htm        string // the CLI's
	webMD, webHTML string
}

// docs gives the four rendered documents by name, each cut by part (the
// whole document, or a section of it); HTML is unescaped.
func (v reportViews) docs(part func(string) string) map[string]string {
	return map[string]string{"CLI Markdown": part(v.md), "workbench Markdown": part(v.webMD),
		"CLI HTML": html.UnescapeString(part(v.htm)), "workbench HTML": html.UnescapeString(part(v.webHTML))}
}

// cliReports analyses the bundle on disk and renders it as the CLI does.
func cliReports(t *testing.T, s *Store, id string) reportViews {
	b, err := bundle.Open(s.Dir() + "/" + id)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := analysis.Analyze(b, memory.DefaultAllocator, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var cliJSON, md, htm bytes.Buffer
	if err := report.JSON(&cliJSON, rep); err != nil {
		t.Fatal(err)
	}
	report.Markdown(&md, rep, report.Options{Bundle: b})
	report.HTML(&htm, rep, report.Options{Bundle: b})
	v := reportViews{md: md.String(), htm: htm.String()}
	if err := json.Unmarshal(cliJSON.Bytes(), &v.cli); err != nil {
		t.Fatalf("CLI JSON: %v", err)
	}
	return v
}

// webReports fills in the workbench's answers for the capture at base.
func webReports(t *testing.T, h http.Handler, base string, v *reportViews) {
	do(t, h, "GET", base+"/report", nil, &v.web)
	v.webMD = do(t, h, "GET", base+"/report?format=md", nil, nil).Body.String()
	v.webHTML = do(t, h, "GET", base+"/report?format=html", nil, nil).Body.String()
}

// checkLeakProfileShown checks that the runtime's goroutineleak figure,
// its own at its own snapshot, is the same in both reports and every
// document says which.
func checkLeakProfileShown(t *testing.T, v reportViews) {
	lp := v.web.LeakProfile
	if lp == nil {
		return
	}
	if v.cli.LeakProfile == nil || v.cli.LeakProfile.Leaked != lp.Leaked || !v.cli.LeakProfile.LeakedAt.Equal(lp.LeakedAt) || lp.LeakedAt.IsZero() {
		t.Errorf("goroutineleak: CLI %+v, workbench %+v", v.cli.LeakProfile, lp)
	}
	want := fmt.Sprintf("(at %s) reports %d leaked goroutines", format.Time(lp.LeakedAt), lp.Leaked)
	for name, doc := range v.docs(func(d string) string { return d }) {
		if !strings.Contains(doc, want) {
			t.Errorf("%s does not show the goroutineleak figure %q", name, want)
		}
	}
}

// checkSuspectText checks that Markdown and HTML, from the CLI and from
// the workbench, print the very same strings in the suspect's section.
func checkSuspectText(t *testing.T, v reportViews, ws analysis.Suspect) {
	id, d := ws.ID, ws.Display
	if d == nil || d.Count == "" || d.CountAt == "" || d.Rate == "" {
		t.Fatalf("%s: no display figures: %+v", id, d)
	}
	for name, doc := range v.docs(func(d string) string { return section(d, id) }) {
		for what, want := range map[string]string{"score": "score " + d.Score, "count": d.Count + " at " + d.CountAt, "rate": d.Rate, "range": d.Range, "first seen": d.FirstSeen, "onset": d.Onset} {
			if want != "" && !strings.Contains(doc, want) {
				t.Errorf("%s: %s does not show the %s %q", id, name, what, want)
			}
		}
	}
}

// checkSuspectFlame checks that the suspect's flame graph counts exactly
// its figure, at its time.
func checkSuspectFlame(t *testing.T, h http.Handler, base string, ws analysis.Suspect) {
	var tree struct {
		Total    int64 `json:"total"`
		Snapshot int64 `json:"snapshot"`
	}
	if rec := do(t, h, "GET", base+"/flamegraph?suspect="+ws.ID, nil, &tree); rec.Code != 200 {
		t.Errorf("%s: flame graph %d %s", ws.ID, rec.Code, rec.Body.String())
	} else if tree.Total != ws.Count || tree.Snapshot != ws.CountAt.UnixNano() {
		t.Errorf("%s: flame graph total %d at %v, the suspect %d at %v", ws.ID, tree.Total, time.Unix(0, tree.Snapshot).UTC(), ws.Count, ws.CountAt)
	}
}

// checkGoroutineViews checks that a goroutine suspect's members in the
// ancestry tree and the timeline are its count at its time, and that the
// timeline draws them and the source view shows them.
func checkGoroutineViews(t *testing.T, h http.Handler, base string, ws analysis.Suspect) {
	id := ws.ID
	var anc struct {
		Suspect analysis.AncestryMembers `json:"suspect"`
	}
	do(t, h, "GET", base+"/ancestry?suspect="+id, nil, &anc)
	if anc.Suspect.Alive != ws.Count || !anc.Suspect.AliveAt.Equal(ws.CountAt) {
		t.Errorf("%s: ancestry %d alive at %v, the suspect %d at %v", id, anc.Suspect.Alive, anc.Suspect.AliveAt, ws.Count, ws.CountAt)
	}
	var tl timelineAnswer
	do(t, h, "GET", base+"/timeline?suspect="+id, nil, &tl)
	if tl.Suspect == nil || tl.Suspect.Alive != ws.Count || !tl.Suspect.AliveAt.Equal(ws.CountAt) {
		t.Errorf("%s: timeline %+v, the suspect %d at %v", id, tl.Suspect, ws.Count, ws.CountAt)
	}
	checkMembersDrawn(t, h, base, ws, tl.Lifetimes)
	checkSourceView(t, h, base, ws)
}

// checkHeapRow checks that the heap table's one row of this heap suspect
// shows its figures.
func checkHeapRow(t *testing.T, web analysis.Report, ws analysis.Suspect) {
	id := ws.ID
	var row *analysis.HeapGrower
	for j := range web.Heap.Growers {
		if g := &web.Heap.Growers[j]; g.HeapSuspect == id {
			if row != nil {
				t.Errorf("%s: two rows in the heap growth table", id)
			}
			row = g
		}
	}
	if row == nil || row.InuseBytes != ws.Count || row.BytesPerMin != ws.GrowthPerMin || !row.CountAt.Equal(ws.CountAt) || row.Range.Rise != ws.Range.Rise {
		t.Errorf("%s: heap table row %+v, the suspect %d bytes at %v, %v/min", id, row, ws.Count, ws.CountAt, ws.GrowthPerMin)
	}
}

// checkTimelineEvents checks the report's timeline of the suspect: its
// first sight and its last count.
func checkTimelineEvents(t *testing.T, web analysis.Report, ws analysis.Suspect) {
	id, d := ws.ID, ws.Display
	for _, e := range web.Timeline {
		if e.Suspect == id && strings.Contains(e.Event, "first seen") && !e.TS.Equal(ws.FirstSeen) {
			t.Errorf("%s: timeline first seen at %v, the suspect %v", id, e.TS, ws.FirstSeen)
		}
		if e.Suspect == id && strings.Contains(e.Event, " reaches ") && (!e.TS.Equal(ws.CountAt) || !strings.HasSuffix(e.Event, "reaches "+d.Count)) {
			t.Errorf("%s: timeline %q at %v, the suspect %s at %v", id, e.Event, e.TS, d.Count, ws.CountAt)
		}
	}
}

// checkHeapTables checks that the heap diff leaves the capture's own
// allocations out, as the flame graph does, and says how much they
// changed by; and that no allocating line appears twice for one owner in
// the heap table.
func checkHeapTables(t *testing.T, v reportViews) {
	for _, e := range v.web.Heap.Diff {
		for _, f := range e.Stack {
			if flame.Own(f.Function) {
				t.Errorf("heap diff lists %s, under the capture's own %s", e.Location, f.Function)
			}
		}
	}
	if v.web.Heap.OwnDeltaBytes != 0 && !strings.Contains(v.md, "without the capture's own allocations") {
		t.Errorf("the capture's own allocations changed by %d bytes; the Markdown does not say they are left out", v.web.Heap.OwnDeltaBytes)
	}
	seen := map[string]bool{}
	for _, g := range v.web.Heap.Growers {
		k := g.Location + "\x00" + g.File + ":" + itoa(int64(g.Line)) + "\x00" + g.Suspect
		if seen[k] {
			t.Errorf("heap growth table lists %s:%d (%s) twice", g.File, g.Line, g.Suspect)
		}
		seen[k] = true
	}
}

// figures is what must agree between two reports of one suspect.
type figures struct {
	Count        int64
	CountAt      time.Time
	Growth       float64
	FirstSeen    time.Time
	Onset        analysis.Onset
	Range        analysis.Range
	Retained     int64
	Display      analysis.SuspectText
	LeakProfile  string
	MaxWait      int64
	StackIDs     []int64
	TimelineSize int
}

func figuresOf(s analysis.Suspect) figures {
	f := figures{Count: s.Count, CountAt: s.CountAt, Growth: s.GrowthPerMin, FirstSeen: s.FirstSeen, Retained: s.RetainedBytes,
		LeakProfile: s.LeakProfile, MaxWait: s.MaxWaitMinutes, StackIDs: s.StackIDs, TimelineSize: len(s.Counts)}
	if s.Onset != nil {
		f.Onset = *s.Onset
	}
	if s.Range != nil {
		f.Range = *s.Range
	}
	if s.Display != nil {
		f.Display = *s.Display
	}
	return f
}

func same(t *testing.T, what string, a, b figures) {
	t.Helper()
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Errorf("%s differ:\n %s\n %s", what, ja, jb)
	}
}

// section is the part of a rendered report about one suspect: from its
// heading to the next suspect's.
func section(doc, id string) string {
	for _, marker := range []string{"### " + id + " ·", ">" + id + " ·"} {
		if i := strings.Index(doc, marker); i >= 0 {
			rest := doc[i+len(marker):]
			end := len(rest)
			for _, next := range []string{"\n### ", "<h3"} {
				if j := strings.Index(rest, next); j >= 0 && j < end {
					end = j
				}
			}
			return rest[:end]
		}
	}
	return ""
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// checkMembersDrawn pages through a goroutine suspect's members and checks
// that the members answer counts the suspect's count, answers goid
// membership alike, and that the timeline marks exactly those goroutines
// (and its group rows count them).
func checkMembersDrawn(t *testing.T, h http.Handler, base string, ws analysis.Suspect, lv *analysis.LifetimeView) {
	t.Helper()
	id := ws.ID
	members := map[int64]bool{}
	var count int
	for off, pages := 0, 0; ; pages++ {
		var page membersAnswer
		if rec := do(t, h, "GET", fmt.Sprintf("%s/members?suspect=%s&offset=%d&limit=97", base, id, off), nil, &page); rec.Code != 200 {
			if ws.StackIDs != nil && rec.Code == http.StatusUnprocessableEntity {
				return // counted from goroutine profiles by stack
			}
			t.Fatalf("%s: members %d %s", id, rec.Code, rec.Body.String())
		}
		count = page.Count
		for _, g := range page.Goids {
			members[g] = true
		}
		if page.NextOffset == 0 || pages > 1000 {
			break
		}
		off = page.NextOffset
	}
	if int64(count) != ws.Count || len(members) != count {
		t.Errorf("%s: members answer counts %d (%d paged), the suspect %d", id, count, len(members), ws.Count)
	}
	for _, g := range ws.Goids {
		var one membersAnswer
		do(t, h, "GET", fmt.Sprintf("%s/members?suspect=%s&goid=%d", base, id, g), nil, &one)
		if one.Member == nil || !*one.Member || !members[g] {
			t.Errorf("%s: goid %d of its sample is not a member by the members answer", id, g)
		}
	}
	if lv == nil {
		return
	}
	drawn := map[int]int{}
	for _, b := range lv.Bars {
		if b.Kind != "goroutine" {
			continue
		}
		if b.Suspect == id && !members[b.Goid] {
			t.Errorf("%s: timeline marks goroutine %d, not a member", id, b.Goid)
		}
		if members[b.Goid] && b.Suspect == "" {
			t.Errorf("%s: timeline draws member goroutine %d as %s", id, b.Goid, b.Verdict)
		}
		if b.Suspect != "" {
			drawn[b.Group]++
		}
	}
	for i, g := range lv.Groups {
		if g.Members != drawn[i] {
			t.Errorf("%s: timeline group %q says %d in a suspect, it draws %d", id, g.Label, g.Members, drawn[i])
		}
	}
}

// checkSourceView checks the source (list) view of a goroutine suspect's
// location: it says what the bundle kept of the source, and when it kept
// it, the suspect's line is there with its text and a value.
func checkSourceView(t *testing.T, h http.Handler, base string, ws analysis.Suspect) {
	t.Helper()
	var lt flame.LineTable
	rec := do(t, h, "GET", base+"/source?suspect="+ws.ID+"&function="+url.QueryEscape(ws.Location), nil, &lt)
	if rec.Code != 200 {
		t.Errorf("%s: source of %s: %d %s", ws.ID, ws.Location, rec.Code, rec.Body.String())
		return
	}
	if lt.SourceStatus == "" || (lt.SourceStatus != "ok" && lt.SourceDetail == "") {
		t.Errorf("%s: source of %s says nothing of the kept source: status %q detail %q", ws.ID, ws.Location, lt.SourceStatus, lt.SourceDetail)
	}
	t.Logf("%s: source of %s: %s, %d lines", ws.ID, ws.Location, lt.SourceStatus, len(lt.Text))
	if lt.SourceStatus != "ok" {
		return
	}
	var text bool
	for _, l := range lt.Text {
		text = text || (l.Line == int64(ws.Line) && strings.TrimSpace(l.Text) != "")
	}
	var value bool
	for _, r := range lt.Rows {
		value = value || (r.Line == int64(ws.Line) && r.Cum > 0)
	}
	if !text || !value {
		t.Errorf("%s: source of %s: line %d with text %v, with a value %v (%d lines of text, rows %+v)", ws.ID, ws.Location, ws.Line, text, value, len(lt.Text), lt.Rows)
	}
}
