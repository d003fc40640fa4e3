package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
)

// TestIngestMessages checks what ingest says when files fail: no empty
// bundle is left when none could be read, the summary says what the
// bundle holds, and a file given twice is noted, not counted as failed.
func TestIngestMessages(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.bin")
	os.WriteFile(junk, []byte("\x00\x01\x02 not a profile"), 0o644)
	dump := filepath.Join(dir, "dump.txt")
	os.WriteFile(dump, []byte("goroutine 1 [running]:\nmain.main()\n\t/x/main.go:5 +0x25\n"), 0o644)
	out := filepath.Join(dir, "b.lsb")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"ingest", junk, "-o", out}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "no bundle was written") {
		t.Errorf("all files bad: %v", err)
	}
	if _, serr := os.Stat(out); serr == nil {
		t.Errorf("an empty bundle was left behind")
	}
	err = run(context.Background(), []string{"ingest", dump, junk, dump, "-o", out}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "1 of 3 files not ingested; the bundle "+out+" holds the other 2") {
		t.Errorf("one bad file: %v", err)
	}
	if !strings.Contains(stderr.String(), "note: ") || !strings.Contains(stderr.String(), "already in the bundle as raw/dump.txt") {
		t.Errorf("the repeated file was not noted:\n%s", stderr.String())
	}
}

// reportJSON runs `leakscope report --format json` on dir.
func reportJSON(t *testing.T, dir string) map[string]any {
	t.Helper()
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"report", dir, "--format", "json"}, &out, &errb); err != nil {
		t.Fatalf("report %s: %v\n%s", dir, err, errb.String())
	}
	var rep map[string]any
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestIngestFreshCloneDumps ingests the raw dumps of a committed sample
// bundle as a user of a fresh clone would: copied out of the bundle, every
// file with the same modification time. The snapshot times come from the
// file names, so the five dumps stay five snapshots and the leak grows as
// it does in the capture itself.
func TestIngestFreshCloneDumps(t *testing.T) {
	orig := filepath.Join("bundles", "timeout-send.lsb")
	raws, _ := filepath.Glob(filepath.Join(orig, "raw", "goroutine-dump-*.txt"))
	if len(raws) < 3 {
		t.Fatalf("%d raw dumps in %s", len(raws), orig)
	}
	in := t.TempDir()
	same := time.Date(2025, 6, 7, 8, 9, 10, 0, time.UTC)
	var files []string
	for _, r := range raws {
		data, err := os.ReadFile(r)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(in, filepath.Base(r))
		os.WriteFile(p, data, 0o644)
		os.Chtimes(p, same, same)
		files = append(files, p)
	}
	dir := filepath.Join(t.TempDir(), "clone.lsb")
	var out, errb bytes.Buffer
	if err := run(context.Background(), append([]string{"ingest", "-q", "-o", dir}, files...), &out, &errb); err != nil {
		t.Fatalf("ingest: %v\n%s", err, errb.String())
	}
	// The only warning is that the source the dumps' frames name is not
	// on this machine (the sample was captured elsewhere).
	if !strings.Contains(out.String(), "(file-name)") || strings.Count(errb.String(), "warning") != strings.Count(errb.String(), "warning: source missing") {
		t.Errorf("ingest output:\n%s\n%s", out.String(), errb.String())
	}
	got, want := reportJSON(t, dir), reportJSON(t, orig)
	gb, wb := got["bundle"].(map[string]any), want["bundle"].(map[string]any)
	if gb["goroutine_snapshots"] != float64(len(raws)) || gb["peak_goroutines"] != wb["peak_goroutines"] {
		t.Fatalf("ingested: %v snapshots, peak %v; capture: %v snapshots, peak %v", gb["goroutine_snapshots"], gb["peak_goroutines"], wb["goroutine_snapshots"], wb["peak_goroutines"])
	}
	top := func(rep map[string]any) map[string]any {
		for _, s := range rep["suspects"].([]any) {
			if s := s.(map[string]any); s["kind"] == "goroutine" {
				return s
			}
		}
		t.Fatal("no goroutine suspect")
		return nil
	}
	g, w := top(got), top(want)
	if g["location"] != w["location"] || g["count"] != w["count"] {
		t.Errorf("top suspect %v (%v) vs the capture's %v (%v)", g["location"], g["count"], w["location"], w["count"])
	}
	// File names hold milliseconds: the rate agrees with the capture's to
	// what a millisecond per snapshot can change.
	gr, wr := g["growth_per_min"].(float64), w["growth_per_min"].(float64)
	if wr <= 0 || gr < wr*0.99 || gr > wr*1.01 {
		t.Errorf("growth %v/min from the names vs %v/min in the capture", gr, wr)
	}
}

// TestIngestAt gives one file its time; --at with several files is a usage
// error.
func TestIngestAt(t *testing.T) {
	p := filepath.Join(t.TempDir(), "goroutines.txt")
	os.WriteFile(p, []byte("goroutine 1 [running]:\nmain.main()\n\t/x/main.go:5 +0x25\n"), 0o644)
	dir := filepath.Join(t.TempDir(), "at.lsb")
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"ingest", "--at", "2024-05-06T07:08:09Z", "-o", dir, p}, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	if !strings.Contains(out.String(), "at 2024-05-06T07:08:09.000Z (given)") {
		t.Errorf("output %q", out.String())
	}
	err := run(context.Background(), []string{"ingest", "--at", "1714979289", "-o", dir, p, p}, &out, &errb)
	if exitCode(err, &errb) != 2 {
		t.Errorf("--at with two files: %v", err)
	}
	err = run(context.Background(), []string{"ingest", "--at", "soon", "-o", dir, p}, &out, &errb)
	if exitCode(err, &errb) != 2 || !strings.Contains(err.Error(), "RFC 3339") {
		t.Errorf("bad --at: %v", err)
	}
	// Two files with the same time (a copy gives both one mtime): two
	// snapshots, the second placed after the first, with a warning.
	errb.Reset()
	q := filepath.Join(t.TempDir(), "goroutines-2.txt")
	os.WriteFile(q, []byte("goroutine 1 [running]:\nmain.main()\n\t/x/main.go:6 +0x25\n"), 0o644)
	same := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	os.Chtimes(p, same, same)
	os.Chtimes(q, same, same)
	dir2 := filepath.Join(t.TempDir(), "tie.lsb")
	if err := run(context.Background(), []string{"ingest", "-o", dir2, p, q}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errb.String(), "argument order") {
		t.Errorf("no tie warning: %q", errb.String())
	}
	if rep := reportJSON(t, dir2); rep["bundle"].(map[string]any)["goroutine_snapshots"] != 2.0 {
		t.Errorf("tie merged: %v", rep["bundle"])
	}
}

// TestInspectInterrupted: inspect and report say a killed capture was
// interrupted and when it last flushed.
func TestInspectInterrupted(t *testing.T) {
	dir := leakyBundle(t)
	m, err := bundle.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	m.Sources = []bundle.Source{{Kind: bundle.SourceDump, Status: bundle.StatusRunning}}
	m.LastFlush = time.Date(2026, 3, 4, 5, 11, 8, 0, time.UTC)
	data, _ := json.Marshal(m)
	os.WriteFile(filepath.Join(dir, bundle.ManifestFile), data, 0o644)
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"inspect", dir}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	want := "interrupted: last flush at 2026-03-04T05:11:08Z"
	if !strings.Contains(out.String(), want) {
		t.Errorf("inspect does not say %q:\n%s", want, out.String())
	}
	rep := reportJSON(t, dir)
	if src := rep["bundle"].(map[string]any)["sources"].([]any); len(src) != 1 || src[0] != "dump ("+want+")" {
		t.Errorf("report sources %v", src)
	}
}
