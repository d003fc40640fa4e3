package report_test

import (
	"bytes"
	"html"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/analysis/report"
	"github.com/leakscope/leakscope/dev/bundletest"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"
)

// Names a hostile or broken input can put into a bundle.
const (
	evilFn      = "main.evil\x00<script>alert(1)</script>`x``y`|z"
	evilFile    = "/src/<img src=x onerror=alert(2)>\x01.go"
	evilCreator = "main.`spawn`\x7f"
	evilAlert   = "Leak<script>alert(4)</script>`|"
)

// hostileBundle is a growing goroutine leak whose function, file and
// creator names hold NUL and other control characters, HTML, backticks
// and pipes.
func hostileBundle(t *testing.T, mem memory.Allocator) *bundle.Bundle {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "h.lsb")
	m := bundle.NewManifest("hostile`<b>", "test")
	m.Start, m.End = t0, t0.Add(4*time.Minute)
	m.Target.ModulePath = "example.com/<svc>"
	m.Trigger = &bundle.Trigger{Source: bundle.TriggerAlert, Node: "node<b>", At: t0.Add(-time.Minute), Alert: &bundle.Alert{
		Name: evilAlert, StartsAt: t0.Add(-2 * time.Minute), Labels: map[string]string{"alertname": evilAlert, "instance": "<img src=x onerror=alert(3)>\x00"}}}
	m.Source(bundle.SourceDump)
	w := bundletest.New(t, dir, m, mem)
	leak := w.Stack(bundle.StackFrame{Function: "runtime.gopark", File: "proc.go", Line: 1}, bundle.StackFrame{Function: evilFn, File: evilFile, Line: 40})
	creator := w.Stack(bundle.StackFrame{Function: evilCreator, File: evilFile, Line: 33})
	for s := 0; s < 5; s++ {
		at := t0.Add(time.Duration(s) * time.Minute).UnixNano()
		for i := 0; i < 20*(s+1); i++ {
			w.Add(schema.Goroutine{SnapshotTS: at, Goid: int64(100 + i), State: "chan send\x00<i>", StackID: leak, CreatorGoid: 1, CreatorFunction: evilCreator, CreatorStackID: creator, Source: "d"})
		}
	}
	return w.Open()
}

// TestHostileNames renders reports of a bundle with hostile names. The
// HTML must carry no tag or control character from the input; the
// Markdown, rendered by a CommonMark implementation with raw HTML allowed,
// must give the same guarantees and show each name whole inside a code
// span.
func TestHostileNames(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	b := hostileBundle(t, mem)
	rep, err := analysis.Analyze(b, mem, analysis.Options{Rules: analysis.DefaultRules()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Suspects) == 0 || rep.Suspects[0].Location != evilFn {
		t.Fatalf("suspects %+v", rep.Suspects)
	}
	md := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(gmhtml.WithUnsafe()))
	for _, pm := range []bool{false, true} {
		opts := report.Options{Postmortem: pm, Bundle: b, Mem: mem}
		var h, m, fromMD bytes.Buffer
		if err := report.HTML(&h, rep, opts); err != nil {
			t.Fatal(err)
		}
		if err := report.Markdown(&m, rep, opts); err != nil {
			t.Fatal(err)
		}
		if err := md.Convert(m.Bytes(), &fromMD); err != nil {
			t.Fatal(err)
		}
		for name, out := range map[string]string{"html": h.String(), "markdown rendered": fromMD.String()} {
			for _, bad := range []string{"<script", "<img src=x", "<b>", "<i>", "<svc>", "\x00", "\x01", "\x7f"} {
				if i := strings.Index(out, bad); i >= 0 {
					t.Errorf("postmortem=%v %s contains %q: %q", pm, name, bad, out[max(0, i-200):min(len(out), i+50)])
				}
			}
			// The leaking function, shown whole in a code span, with its
			// NUL made visible.
			want := "<code>" + html.EscapeString(strings.ReplaceAll(evilFn, "\x00", `\x00`)) + "</code>"
			if name == "markdown rendered" {
				want = strings.ReplaceAll(want, "&#39;", "'")
			}
			if !strings.Contains(out, want) && !strings.Contains(out, strings.ReplaceAll(want, "&#34;", "&quot;")) {
				t.Errorf("postmortem=%v %s does not show %q", pm, name, want)
			}
		}
		// The trigger heads the document: its sentence in the first lines.
		head := strings.Join(strings.SplitN(m.String(), "\n", 6)[:5], "\n")
		if !strings.Contains(head, "**Trigger:** Alertmanager alert Leak") || !strings.Contains(m.String(), `label         "instance"="<img`) {
			t.Errorf("postmortem=%v markdown does not open with the trigger:\n%s", pm, head)
		}
		if strings.Contains(m.String(), "\x00") {
			t.Errorf("markdown holds a NUL")
		}
	}
}
