package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/dev/bundletest"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// leakyBundle writes a bundle whose goroutines parked at main.leak grow
// by 30 a minute over six snapshots.
func leakyBundle(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "leaky.lsb")
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	m := bundle.NewManifest("cli-test", "test")
	m.Start, m.End = t0, t0.Add(5*time.Minute)
	w := bundletest.New(t, dir, m, memory.DefaultAllocator)
	st := w.Stack(bundle.StackFrame{Function: "runtime.gopark", File: "p.go", Line: 1}, bundle.StackFrame{Function: "main.leak", File: "/x/main.go", Line: 12})
	for s := 0; s < 6; s++ {
		for i := 0; i < 30*(s+1); i++ {
			w.Add(schema.Goroutine{SnapshotTS: t0.Add(time.Duration(s) * time.Minute).UnixNano(), Goid: int64(i + 10), State: "select", StackID: st, CreatorFunction: "main.spawn", CreatorGoid: 1})
		}
	}
	return w.Close()
}

func TestReportCommand(t *testing.T) {
	dir := leakyBundle(t)
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"report", dir, "--format", "json"}, &out, &errb); err != nil {
		t.Fatalf("report: %v", err)
	}
	var rep struct {
		Suspects []struct {
			ID, Pattern, Location, Creator string
			Score                          float64
		}
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("json output: %v", err)
	}
	if len(rep.Suspects) != 1 || rep.Suspects[0].Location != "main.leak" || rep.Suspects[0].Pattern != "select-without-cancel" {
		t.Fatalf("suspects %+v", rep.Suspects)
	}

	// --fail-on: the report is still written, then exit status 1.
	outFile := filepath.Join(t.TempDir(), "pm.html")
	err := run(context.Background(), []string{"report", "--postmortem", "--format", "html", "--fail-on", "10", "-o", outFile, dir}, &out, &errb)
	var fe failOnError
	if !errors.As(err, &fe) || exitCode(err, &errb) != 1 {
		t.Fatalf("--fail-on 10: err %v", err)
	}
	html, _ := os.ReadFile(outFile)
	if !strings.Contains(string(html), "<h2>Summary</h2>") {
		t.Errorf("postmortem html not written before failing")
	}
	if err := run(context.Background(), []string{"report", "--fail-on", "100", dir, "-o", filepath.Join(t.TempDir(), "r.md")}, &out, &errb); err != nil {
		t.Errorf("--fail-on 100 failed: %v", err)
	}
}

func TestReportUsage(t *testing.T) {
	dir := leakyBundle(t)
	for _, args := range [][]string{
		{"report"},
		{"report", dir, "--format", "pdf"},
		{"report", dir, "--fail-on", "high"},
		{"report", dir, dir},
	} {
		var out, errb bytes.Buffer
		err := run(context.Background(), args, &out, &errb)
		if exitCode(err, &errb) != 2 {
			t.Errorf("%v: err %v, want a usage error", args, err)
		}
	}
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"report", filepath.Join(t.TempDir(), "missing.lsb")}, &out, &errb)
	if exitCode(err, &errb) != 1 {
		t.Errorf("missing bundle: err %v", err)
	}
	rules := filepath.Join(t.TempDir(), "rules.json")
	os.WriteFile(rules, []byte(`{"rules":[{"pattern":"x","states":["("]}]}`), 0o644)
	err = run(context.Background(), []string{"report", dir, "--rules", rules}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "bad regexp") {
		t.Errorf("bad rules file: err %v", err)
	}
}

// TestReportImagesBeside: -o dir/x.md writes the images as dir/x-*.svg
// and links them; standard output is text only; inline only on request.
func TestReportImagesBeside(t *testing.T) {
	dir := leakyBundle(t)
	outDir := t.TempDir()
	md := filepath.Join(outDir, "pm.md")
	runOK(t, "report", dir, "--postmortem", "-o", md)
	text, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	svgs, _ := filepath.Glob(filepath.Join(outDir, "pm-*.svg"))
	if len(svgs) == 0 {
		t.Fatalf("no images beside %s", md)
	}
	for _, svg := range svgs {
		if !strings.Contains(string(text), "]("+filepath.Base(svg)+")") {
			t.Errorf("%s is not linked from the report", filepath.Base(svg))
		}
	}
	if strings.Contains(string(text), "base64") {
		t.Errorf("the report inlines its images")
	}
	stdout := runOK(t, "report", dir, "--postmortem")
	if strings.Contains(stdout, "![") || !strings.Contains(stdout, "| series | over time |") {
		t.Errorf("standard output is not text only:\n%s", stdout)
	}
	if inline := runOK(t, "report", dir, "--images", "inline"); !strings.Contains(inline, "](data:image/svg+xml;base64,") {
		t.Errorf("--images inline embeds nothing")
	}
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"report", dir, "--images", "files"}, &out, &errb); exitCode(err, &errb) != 2 {
		t.Errorf("--images files without -o: %v", err)
	}
	if err := run(context.Background(), []string{"report", dir, "--images", "png", "-o", md}, &out, &errb); exitCode(err, &errb) != 2 {
		t.Errorf("--images png: %v", err)
	}
}
