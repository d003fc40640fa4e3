package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/analysis/fleet"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/internal/format"
)

// TestCrossView drives the real workbench (leakscope serve, seeded with
// the sample captures) and the real CLI (leakscope report) on two sample
// bundles and compares every figure of every suspect and incident across
// the CLI's Markdown, HTML and JSON, the workbench's report in the same
// three forms, every API view (flame graph, top, source, ancestry,
// timeline, members, lanes, fleet) and /metrics. Any difference fails.
func TestCrossView(t *testing.T) {
	base, stop := startServe(t)
	defer stop()
	for _, name := range []string{"operator-sim", "cache-pin"} {
		t.Run(name, func(t *testing.T) {
			dir := "bundles/" + name + ".lsb"
			cli := cliReports(t, dir)
			id := "sample-" + name
			var web analysis.Report
			getJSON(t, base+"/api/captures/"+id+"/report", &web)
			webMD := get(t, base+"/api/captures/"+id+"/report?format=md")
			webHTML := html.UnescapeString(get(t, base+"/api/captures/"+id+"/report?format=html"))
			if len(web.Suspects) != len(cli.rep.Suspects) || len(web.Incidents) != len(cli.rep.Incidents) || len(web.Suspects) == 0 {
				t.Fatalf("CLI %d suspects %d incidents, workbench %d and %d", len(cli.rep.Suspects), len(cli.rep.Incidents), len(web.Suspects), len(web.Incidents))
			}
			metrics := get(t, base+"/metrics")
			b, err := bundle.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			// The seeded samples are not the user's fleet: a copy uploaded
			// under another capture id is.
			uploadCopy(t, base, dir)
			var svc fleet.Service
			getJSON(t, base+"/api/fleet?service="+url.QueryEscape(b.Manifest.Target.Service()), &svc)
			checkAlive(t, base+"/api/captures/"+id, web)
			// The timeline's heap event names the series it measures.
			basis := map[string]string{"trace": "(trace windows)", "heap_profiles": "(heap profiles)"}[web.Series.HeapLiveFrom]
			for _, e := range web.Timeline {
				if e.Kind == "heap" && (basis == "" || !strings.Contains(e.Event, basis)) {
					t.Errorf("timeline event %q does not name its heap series %q", e.Event, web.Series.HeapLiveFrom)
				}
			}
			docs := map[string]string{"CLI Markdown": cli.md, "CLI HTML": cli.html, "workbench Markdown": webMD, "workbench HTML": webHTML}
			for i, s := range cli.rep.Suspects {
				ws := web.Suspects[i]
				if a, b := suspectFigures(s), suspectFigures(ws); a != b {
					t.Errorf("%s: CLI JSON %s, workbench JSON %s", s.ID, a, b)
				}
				d := s.Display
				for doc, text := range docs {
					sec := sectionOf(text, s.ID)
					for what, want := range map[string]string{"score": "score " + d.Score, "count": d.Count + " at " + d.CountAt, "rate": d.Rate, "range": d.Range, "first seen": d.FirstSeen, "onset": d.Onset, "retained": d.Retained} {
						if want != "" && !strings.Contains(sec, want) {
							t.Errorf("%s: %s does not show the %s %q", s.ID, doc, what, want)
						}
					}
				}
				checkViews(t, base+"/api/captures/"+id, s)
				checkMetric(t, metrics, b.Manifest.CaptureID, s)
				checkFleet(t, svc, s)
			}
			for i, inc := range cli.rep.Incidents {
				wi := web.Incidents[i]
				a, _ := json.Marshal(inc)
				b, _ := json.Marshal(wi)
				if string(a) != string(b) {
					t.Errorf("%s: CLI JSON and workbench JSON differ:\n%s\n%s", inc.ID, a, b)
				}
				for doc, text := range docs {
					sec := sectionOf(text, inc.ID)
					want := []string{"score " + format.Score(inc.Score), "First seen:", format.Time(inc.FirstSeen)}
					if inc.RetainedBytes > 0 {
						want = append(want, format.Bytes(float64(inc.RetainedBytes)))
					}
					if inc.Goroutines > 0 {
						want = append(want, format.Count(inc.Goroutines, "goroutine"))
					}
					for _, w := range want {
						if !strings.Contains(sec, w) {
							t.Errorf("%s: %s does not show %q", inc.ID, doc, w)
						}
					}
				}
			}
		})
	}
}

type reports struct {
	rep      analysis.Report
	md, html string
}

// cliReports runs leakscope report on dir in the three formats.
func cliReports(t *testing.T, dir string) reports {
	t.Helper()
	var r reports
	out := func(args ...string) string {
		var b strings.Builder
		if err := run(context.Background(), append([]string{"report", dir}, args...), &b, io.Discard); err != nil {
			t.Fatalf("report %v: %v", args, err)
		}
		return b.String()
	}
	if err := json.Unmarshal([]byte(out("--format", "json")), &r.rep); err != nil {
		t.Fatal(err)
	}
	r.md, r.html = out("--format", "md"), html.UnescapeString(out("--format", "html"))
	return r
}

// suspectFigures is every figure of a suspect, as one comparable string.
func suspectFigures(s analysis.Suspect) string {
	d, _ := json.Marshal(s.Display)
	o, _ := json.Marshal(s.Onset)
	return fmt.Sprintf("count %d at %s, growth %v, score %v, first %s, retained %d, onset %s, display %s",
		s.Count, s.CountAt.UTC().Format(time.RFC3339Nano), s.GrowthPerMin, s.Score, s.FirstSeen.UTC().Format(time.RFC3339Nano), s.RetainedBytes, o, d)
}

// sectionOf is the text from a suspect's or incident's heading to the
// next heading of its kind.
func sectionOf(doc, id string) string {
	i := strings.Index(doc, id+" · ")
	if i < 0 {
		return ""
	}
	rest := doc[i:]
	if j := regexp.MustCompile(`\n#{2,3} [GHI][0-9]+ · |<h[23][^>]*>[GHI][0-9]+ · `).FindStringIndex(rest[1:]); j != nil {
		return rest[:j[0]+1]
	}
	return rest
}

// checkViews compares the API views of one suspect with its figures.
func checkViews(t *testing.T, capBase string, s analysis.Suspect) {
	t.Helper()
	var tree struct {
		Total    int64 `json:"total"`
		Snapshot int64 `json:"snapshot"`
	}
	getJSON(t, capBase+"/flamegraph?suspect="+s.ID, &tree)
	if tree.Total != s.Count || tree.Snapshot != s.CountAt.UnixNano() {
		t.Errorf("%s: flame graph %d at %d, the suspect %d at %v", s.ID, tree.Total, tree.Snapshot, s.Count, s.CountAt)
	}
	var top struct {
		Total int64 `json:"total"`
		Rows  []struct {
			Flat int64 `json:"flat"`
		} `json:"rows"`
	}
	getJSON(t, capBase+"/top?suspect="+s.ID, &top)
	var flat int64
	for _, r := range top.Rows {
		flat += r.Flat
	}
	if top.Total != s.Count || flat != s.Count {
		t.Errorf("%s: top total %d, flat sums to %d, the suspect %d", s.ID, top.Total, flat, s.Count)
	}
	var src struct {
		Cum    int64  `json:"cum"`
		Status string `json:"source_status"`
	}
	getJSON(t, capBase+"/source?suspect="+s.ID+"&function="+url.QueryEscape(s.Location), &src)
	if src.Status == "" || src.Cum <= 0 || src.Cum > s.Count {
		t.Errorf("%s: source of %s: cum %d status %q, the suspect %d", s.ID, s.Location, src.Cum, src.Status, s.Count)
	}
	if s.Kind != analysis.KindGoroutine {
		return
	}
	var anc struct {
		Suspect analysis.AncestryMembers `json:"suspect"`
	}
	getJSON(t, capBase+"/ancestry?suspect="+s.ID, &anc)
	var tl struct {
		Suspect   analysis.LifetimeMembers `json:"suspect"`
		Lifetimes analysis.LifetimeView    `json:"lifetimes"`
	}
	getJSON(t, capBase+"/timeline?suspect="+s.ID, &tl)
	var mem struct {
		Count int `json:"count"`
	}
	getJSON(t, capBase+"/members?suspect="+s.ID+"&limit=1", &mem)
	if anc.Suspect.Alive != s.Count || tl.Suspect.Alive != s.Count || int64(mem.Count) != s.Count {
		t.Errorf("%s: ancestry %d, timeline %d, members %d alive; the suspect %d", s.ID, anc.Suspect.Alive, tl.Suspect.Alive, mem.Count, s.Count)
	}
	drawn := 0
	for _, b := range tl.Lifetimes.Bars {
		if b.Suspect == s.ID {
			drawn++
		}
	}
	if int64(drawn) > s.Count || (tl.Suspect.Alive > 0 && drawn == 0) {
		t.Errorf("%s: the timeline draws %d of its %d goroutines", s.ID, drawn, s.Count)
	}
	var lanes analysis.StateLanes
	getJSON(t, capBase+"/lanes?suspect="+s.ID, &lanes)
	for _, l := range lanes.Lanes {
		if l.Role != "member" {
			continue
		}
		var one struct {
			Member *bool `json:"member"`
		}
		getJSON(t, fmt.Sprintf("%s/members?suspect=%s&goid=%d", capBase, s.ID, l.Goid), &one)
		if one.Member == nil || !*one.Member {
			t.Errorf("%s: lanes show goroutine %d as a member; the members answer says not", s.ID, l.Goid)
		}
	}
}

// checkAlive compares the timeline's goroutines alive at its alive_at
// (the last dump) with the goroutine count the report charts at that
// dump: one created after the last dump was not alive at it.
func checkAlive(t *testing.T, capBase string, rep analysis.Report) {
	t.Helper()
	var tl struct {
		Lifetimes analysis.LifetimeView `json:"lifetimes"`
	}
	getJSON(t, capBase+"/timeline?limit=1000000", &tl)
	at := tl.Lifetimes.AliveAt
	if at.IsZero() {
		return
	}
	// The group rows count alive at the last dump as the toolbar does.
	sum := 0
	for _, g := range tl.Lifetimes.Groups {
		if g.Kind == "goroutine" && g.AliveAtDump != nil {
			sum += *g.AliveAtDump
		}
	}
	if tl.Lifetimes.Omitted == 0 && sum != tl.Lifetimes.Alive {
		t.Errorf("timeline: its group rows count %d alive at the last dump, its toolbar %d", sum, tl.Lifetimes.Alive)
	}
	// Each goroutine group row and the ancestry nodes of its function
	// count the same goroutines alive at that dump.
	var anc analysis.AncestryTree
	getJSON(t, capBase+"/ancestry", &anc)
	byFn := map[string]int{}
	var walk func(n *analysis.AncestryNode)
	walk = func(n *analysis.AncestryNode) {
		if n.Function != "" {
			byFn[n.Function] += int(n.Alive)
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	for _, r := range anc.Roots {
		walk(r)
	}
	for _, g := range tl.Lifetimes.Groups {
		if g.Kind == "goroutine" && g.Name != "" && g.AliveAtDump != nil && tl.Lifetimes.Omitted == 0 && anc.AliveAt.Equal(at) && *g.AliveAtDump != byFn[g.Name] {
			t.Errorf("timeline row %q: %d alive at the last dump, the ancestry tree %d", g.Label, *g.AliveAtDump, byFn[g.Name])
		}
	}
	for _, p := range rep.Series.Goroutines {
		if p.TS.Equal(at) {
			if float64(tl.Lifetimes.Alive) != p.Value {
				t.Errorf("timeline: %d goroutines alive at %v, the report's goroutine count there %v", tl.Lifetimes.Alive, at, p.Value)
			}
			return
		}
	}
	t.Errorf("timeline: alive at %v, a time the report's goroutine series does not have", at)
}

// checkMetric finds the suspect's gauges in /metrics, labelled with the
// manifest's capture id.
func checkMetric(t *testing.T, metrics, capture string, s analysis.Suspect) {
	t.Helper()
	value := func(name string) (float64, bool) {
		sc := bufio.NewScanner(strings.NewReader(metrics))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			l := sc.Text()
			if strings.HasPrefix(l, name+"{") && strings.Contains(l, `capture="`+capture+`"`) && strings.Contains(l, `suspect="`+s.ID+`"`) {
				v, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
				return v, err == nil
			}
		}
		return 0, false
	}
	count, growth := "leakscope_suspect_goroutines", "leakscope_suspect_goroutine_growth_per_second"
	if s.Kind == analysis.KindHeap {
		count, growth = "leakscope_suspect_heap_bytes", "leakscope_suspect_heap_growth_bytes_per_second"
	}
	// /metrics is in base units: the report's per-minute rate / 60, the
	// same division the exporter does.
	for name, want := range map[string]float64{"leakscope_suspect_score": s.Score, count: float64(s.Count), growth: s.GrowthPerMin / 60} {
		if v, ok := value(name); !ok || v != want {
			t.Errorf("%s: /metrics %s = %v (found %v), the report %v", s.ID, name, v, ok, want)
		}
	}
}

// uploadCopy uploads a copy of the bundle dir under another capture id,
// as a user's capture of the same program.
func uploadCopy(t *testing.T, base, dir string) {
	t.Helper()
	cp := filepath.Join(t.TempDir(), filepath.Base(dir))
	if err := os.CopyFS(cp, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	m, err := bundle.ReadManifest(cp)
	if err != nil {
		t.Fatal(err)
	}
	m.CaptureID += "-copy"
	data, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(cp, bundle.ManifestFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	runOK(t, "upload", cp, "--to", base)
}

// checkFleet compares the fleet view's leak of the suspect, when this
// capture is the only one showing it.
func checkFleet(t *testing.T, svc fleet.Service, s analysis.Suspect) {
	t.Helper()
	for _, l := range svc.Leaks {
		if l.Kind != s.Kind || l.Pattern != s.Pattern || l.Location != s.Location || l.Creator != s.Creator || l.Captures != 1 || l.Worst.Suspect != s.ID {
			continue
		}
		if l.Display.Count != s.Display.Count || l.Display.Score != s.Display.Score || l.Display.Growth != analysis.FormatRate(s.GrowthPerMin, s.Kind) {
			t.Errorf("%s: fleet shows %+v, the report %s, %s, score %s", s.ID, l.Display, s.Display.Count, s.Display.Rate, s.Display.Score)
		}
		return
	}
	t.Errorf("%s: the fleet view of %s has no leak of it alone", s.ID, svc.Service)
}

// startServe runs leakscope serve on a free loopback port with a new
// data directory (seeded with the sample captures) and returns its URL.
func startServe(t *testing.T) (string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("serve printed no address: %v (%v)", err, <-done)
	}
	go io.Copy(io.Discard, pr)
	m := regexp.MustCompile(`http://[^/ ]+`).FindString(line)
	if m == "" {
		cancel()
		t.Fatalf("serve: %q", line)
	}
	return m, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}
}

func get(t *testing.T, u string) string {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", u, res.StatusCode, b)
	}
	return string(b)
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(get(t, u)), v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}
