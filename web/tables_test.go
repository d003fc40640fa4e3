package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/leakscope/leakscope/analysis/flame"
)

// TestTables: top, peek and source of a flame graph's selection answer
// flame's tables, whose figures agree with the flame graph's own; a
// duplicate upload answers the stored capture; unknown suspects and bad
// parameters are named.
func TestTables(t *testing.T) {
	f := getFixture(t)
	s, h := newServer(t, Options{})
	var up uploadAnswer
	if rec := do(t, h, "POST", "/api/captures", f.archive, &up); rec.Code != http.StatusCreated || up.ID == "" || up.Duplicate {
		t.Fatalf("upload: %d %s", rec.Code, rec.Body)
	}
	id := up.ID
	var again uploadAnswer
	if rec := do(t, h, "POST", "/api/captures", f.archive, &again); rec.Code != http.StatusOK || again.ID != id || !again.Duplicate {
		t.Errorf("second upload of the same bundle: %d %+v, want 200 with id %s", rec.Code, again, id)
	}
	if n := len(s.List()); n != 1 {
		t.Errorf("%d captures after uploading one bundle twice", n)
	}

	var list []captureSummary
	do(t, h, "GET", "/api/captures", nil, &list)
	if len(list) != 1 || list[0].Bytes <= 0 || list[0].Size == "" || strings.ContainsAny(list[0].Size[:1], "-") || !strings.HasSuffix(list[0].Size, "B") || len(list[0].SourcesText) != len(list[0].Sources) {
		t.Errorf("captures list: size %d %q, sources %d, texts %v", list[0].Bytes, list[0].Size, len(list[0].Sources), list[0].SourcesText)
	}
	if list[0].Duration != "3 minutes" {
		t.Errorf("captures list duration %q, want 3 minutes", list[0].Duration)
	}

	base := "/api/captures/" + id
	var tree flame.Tree
	do(t, h, "GET", base+"/flamegraph?profile=goroutine", nil, &tree)
	var top flame.TopTable
	if rec := do(t, h, "GET", base+"/top?profile=goroutine&sort=cum", nil, &top); rec.Code != 200 {
		t.Fatalf("top: %d %s", rec.Code, rec.Body)
	}
	if top.Total != tree.Total() || top.Total != f.total || top.Sort != flame.SortCum || len(top.Rows) < 3 {
		t.Fatalf("top total %d sort %s rows %d; flame total %d", top.Total, top.Sort, len(top.Rows), tree.Total())
	}
	var flatSum int64
	for i, r := range top.Rows {
		flatSum += r.Flat
		if i > 0 && r.Cum > top.Rows[i-1].Cum {
			t.Errorf("row %d (%s) out of cum order", i, r.Function)
		}
	}
	if flatSum != top.Total {
		t.Errorf("flat values sum to %d, total %d", flatSum, top.Total)
	}
	worker := "github.com/leakscope/leakscope/web.leakyWorker"
	var pk flame.PeekTable
	if rec := do(t, h, "GET", base+"/peek?profile=goroutine&function="+url.QueryEscape(worker), nil, &pk); rec.Code != 200 {
		t.Fatalf("peek: %d %s", rec.Code, rec.Body)
	}
	if pk.Cum < 400 || len(pk.Callees) == 0 {
		t.Errorf("peek of leakyWorker: cum %d callees %v", pk.Cum, pk.Callees)
	}
	var lines flame.LineTable
	if rec := do(t, h, "GET", base+"/source?profile=goroutine&function="+url.QueryEscape(worker), nil, &lines); rec.Code != 200 {
		t.Fatalf("source: %d %s", rec.Code, rec.Body)
	}
	// leakyWorker is not recursive, so each stack through it has it at
	// one line: the lines' cum add up to the function's (most goroutines
	// park at one line, but one may still be elsewhere in the function).
	var lineCum int64
	for _, r := range lines.Rows {
		lineCum += r.Cum
	}
	if lines.Cum != pk.Cum || lineCum != pk.Cum || lines.File == "" {
		t.Errorf("source of leakyWorker: cum %d (lines sum to %d) file %q, peek says %d", lines.Cum, lineCum, lines.File, pk.Cum)
	}
	wantError(t, do(t, h, "GET", base+"/peek?profile=goroutine", nil, nil), 400, "function=NAME")
	wantError(t, do(t, h, "GET", base+"/peek?profile=goroutine&function=no.such", nil, nil), 404, "function not in tree")
	wantError(t, do(t, h, "GET", base+"/top?sort=size", nil, nil), 400, "unknown sort")
	wantError(t, do(t, h, "GET", base+"/top?own=maybe", nil, nil), 400, "own=")
	wantError(t, do(t, h, "GET", base+"/flamegraph?suspect=G9", nil, nil), 404, `no such suspect "G9"`)
	rec := do(t, h, "GET", base+"/flamegraph?suspect=G9", nil, nil)
	if rec.Code == 404 && strings.Contains(rec.Body.String(), "no such capture") {
		t.Errorf("an unknown suspect is reported as an unknown capture: %s", rec.Body)
	}
}
