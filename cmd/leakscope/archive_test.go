package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakscope/leakscope/dev/bundletest"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/samples"
	"github.com/leakscope/leakscope/web"
)

// runOK runs a command line and fails the test on error.
func runOK(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if err := run(context.Background(), args, &out, &errb); err != nil {
		t.Fatalf("%q: %v\n%s", args, err, errb.String())
	}
	return out.String()
}

// suspectsOf reads the suspects of a JSON report, without its time.
func suspectsOf(t *testing.T, report string) string {
	t.Helper()
	var r struct {
		Suspects json.RawMessage `json:"suspects"`
	}
	if err := json.Unmarshal([]byte(report), &r); err != nil {
		t.Fatal(err)
	}
	return string(r.Suspects)
}

// TestPackAndReadArchive packs a bundle and reads the archive with every
// reading command: each sees what it sees in the directory.
func TestPackAndReadArchive(t *testing.T) {
	tmp := t.TempDir()
	dir := leakyBundle(t)
	out := runOK(t, "pack", dir, "-o", filepath.Join(tmp, "leaky.tar.zst"))
	if !strings.Contains(out, "packed") || !strings.Contains(out, "leaky.tar.zst") {
		t.Errorf("pack said %q", out)
	}
	archive := filepath.Join(tmp, "leaky.tar.zst")
	if st, err := os.Stat(archive); err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("archive %v %v", st, err)
	}
	// Without -o the archive lands beside the bundle, named after it.
	runOK(t, "pack", dir)
	beside := filepath.Join(filepath.Dir(dir), "leaky.tar.zst")
	if _, err := os.Stat(beside); err != nil {
		t.Errorf("pack without -o: %v", err)
	}
	// An existing archive is not overwritten; a directory is required.
	var errb bytes.Buffer
	if err := run(context.Background(), []string{"pack", dir, "-o", archive}, &errb, &errb); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("pack over an existing archive: %v", err)
	}
	if err := run(context.Background(), []string{"pack", archive, "-o", filepath.Join(tmp, "again.tar.zst")}, &errb, &errb); err == nil || !strings.Contains(err.Error(), "not a bundle directory") {
		t.Errorf("pack of an archive: %v", err)
	}
	if err := run(context.Background(), []string{"pack", dir, "-o", filepath.Join(tmp, "x.zip")}, &errb, &errb); exitCode(err, &errb) != 2 {
		t.Errorf("pack -o x.zip: %v, want a usage error", err)
	}

	if a, d := suspectsOf(t, runOK(t, "report", archive, "--format", "json")), suspectsOf(t, runOK(t, "report", dir, "--format", "json")); a != d || !strings.Contains(a, "main.leak") {
		t.Errorf("report of the archive differs from the directory's:\n%s\n%s", a, d)
	}
	ia, id := runOK(t, "inspect", archive), runOK(t, "inspect", dir)
	if !strings.HasPrefix(ia, "bundle   "+archive) || strings.Replace(ia, archive, dir, 1) != id {
		t.Errorf("inspect of the archive:\n%s\nof the directory:\n%s", ia, id)
	}
	if err := run(context.Background(), []string{"inspect", filepath.Join(tmp, "missing.tar.zst")}, &errb, &errb); err == nil || !strings.Contains(err.Error(), "is not a leakscope bundle (nothing is there)") {
		t.Errorf("inspect of a missing archive: %v", err)
	}
	notBundle := filepath.Join(tmp, "notes.txt")
	os.WriteFile(notBundle, []byte("hello"), 0o644)
	if err := run(context.Background(), []string{"report", notBundle}, &errb, &errb); err == nil || !strings.Contains(err.Error(), "is not a leakscope bundle (a file that is not a whole bundle archive") {
		t.Errorf("report of a text file: %v", err)
	}
}

// TestIngestIntoArchive ingests files into an archive twice: the second
// run adds to what the first packed.
func TestIngestIntoArchive(t *testing.T) {
	tmp := t.TempDir()
	src := bundletest.Small(t, tmp, "src")
	raw := filepath.Join(src, bundle.RawDir, "goroutines.txt")
	archive := filepath.Join(tmp, "incident.tar.zst")
	runOK(t, "ingest", raw, "-o", archive)
	second := filepath.Join(tmp, "second.txt")
	os.WriteFile(second, []byte("goroutine 1 [select]:\nmain.wait()\n\t/src/w.go:3 +0x1\n\ngoroutine 2 [select]:\nmain.wait()\n\t/src/w.go:3 +0x1\n"), 0o644)
	runOK(t, "ingest", second, "-o", archive)
	dir, cleanup, err := openBundleDir(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(b.Manifest.Artifacts); n != 2 {
		t.Errorf("archive holds %d artifacts after two ingests, want 2", n)
	}
	entries, _ := os.ReadDir(tmp)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("ingest left %s behind", e.Name())
		}
	}
	// A bundle given as an input is refused with what to do instead.
	var out, errb bytes.Buffer
	err = run(context.Background(), []string{"ingest", archive, src, "-o", filepath.Join(tmp, "x.lsb")}, &out, &errb)
	if err == nil || !strings.Contains(errb.String(), "is a bundle archive") || !strings.Contains(errb.String(), "is a bundle already") {
		t.Errorf("ingest of bundles: %v\n%s", err, errb.String())
	}
}

// TestUploadArchiveOnce uploads a bundle directory, then its archive: the
// workbench keeps one capture and says so.
func TestUploadArchiveOnce(t *testing.T) {
	tmp := t.TempDir()
	dir := bundletest.Small(t, tmp, "up")
	archive := filepath.Join(tmp, "up.tar.zst")
	runOK(t, "pack", dir, "-o", archive)
	store, err := web.OpenStore(filepath.Join(tmp, "data"), nil, bundle.Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Wait)
	srv := httptest.NewServer(web.NewRouter(store, web.Options{Loopback: true}))
	defer srv.Close()
	first := runOK(t, "upload", dir, "--to", srv.URL)
	again := runOK(t, "upload", archive, "--to", srv.URL)
	if !strings.HasPrefix(first, "uploaded "+dir) || !strings.Contains(first, "1 attempt)") {
		t.Errorf("first upload said %q", first)
	}
	id := first[strings.LastIndex(first, " ")+1:]
	if !strings.HasPrefix(again, "already on the workbench "+archive) || !strings.HasSuffix(again, " "+id) {
		t.Errorf("second upload said %q, want the id of the first (%s)", again, id)
	}
	if n := len(store.List()); n != 1 {
		t.Errorf("store holds %d captures after uploading one bundle twice", n)
	}
}

// TestCaptureToArchive records a live sample into NAME.tar.zst: the
// archive is a bundle and the working directory is gone.
func TestCaptureToArchive(t *testing.T) {
	if testing.Short() {
		t.Skip("live capture skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	root, err := samples.Root()
	if err != nil {
		t.Fatal(err)
	}
	p, err := samples.Start(ctx, filepath.Join(root, "ticker-leak"), "-rate", "20")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	tmp := t.TempDir()
	archive := filepath.Join(tmp, "node1.tar.zst")
	var out, errb bytes.Buffer
	if err := run(ctx, []string{"capture", "--url", p.URL, "--duration", "3s", "--interval", "1s", "--no-ebpf", "-o", archive}, &out, &errb); err != nil {
		t.Fatalf("capture: %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "into "+archive) {
		t.Errorf("summary does not name the archive:\n%s", out.String())
	}
	if exists(filepath.Join(tmp, "node1.lsb")) {
		t.Errorf("the working bundle directory is left beside the archive")
	}
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := bundle.Unpack(f, filepath.Join(tmp, "check.lsb"), bundle.Limits{})
	if err != nil {
		t.Fatalf("archive does not unpack: %v", err)
	}
	if !m.HasSource(bundle.SourceDump) {
		t.Errorf("archived capture has no dump source: %+v", m.Sources)
	}
	// An existing working directory is refused before anything is captured.
	os.Mkdir(filepath.Join(tmp, "busy.lsb"), 0o755)
	err = run(ctx, []string{"capture", "--url", p.URL, "--duration", "1s", "-o", filepath.Join(tmp, "busy.tar.zst")}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "busy.lsb first, which exists") {
		t.Errorf("capture into an archive whose directory exists: %v", err)
	}
}

// TestHelpAndSuggestions: help COMMAND prints the command's help on
// standard output, and a mistyped command names the nearest one.
func TestHelpAndSuggestions(t *testing.T) {
	out := runOK(t, "help", "report")
	if !strings.HasPrefix(out, "Usage: leakscope report BUNDLE") || !strings.Contains(out, "-fail-on") {
		t.Errorf("help report:\n%s", out)
	}
	if out := runOK(t, "help"); !strings.Contains(out, "Commands:") || !strings.Contains(out, "pack") {
		t.Errorf("help:\n%s", out)
	}
	for typo, want := range map[string]string{"reprot": "report", "inpsect": "inspect", "serv": "serve", "upolad": "upload", "rep": "report"} {
		var out, errb bytes.Buffer
		err := run(context.Background(), []string{typo}, &out, &errb)
		if exitCode(err, &errb) != 2 || !strings.Contains(err.Error(), `did you mean "`+want+`"?`) {
			t.Errorf("%s: %v, want a suggestion of %s", typo, err, want)
		}
	}
	var out2, errb bytes.Buffer
	err := run(context.Background(), []string{"frobnicate"}, &out2, &errb)
	if exitCode(err, &errb) != 2 || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("frobnicate: %v, want no suggestion", err)
	}
	if err := run(context.Background(), []string{"help", "nope"}, &out2, &errb); exitCode(err, &errb) != 2 {
		t.Errorf("help nope: %v", err)
	}
}

// TestScoreFlagsInRange: scores are 0 to 100; anything else is refused
// before the bundle is read.
func TestScoreFlagsInRange(t *testing.T) {
	dir := leakyBundle(t)
	for _, args := range [][]string{
		{"--fail-on", "101"}, {"--fail-on", "-1"}, {"--fail-on", "NaN"},
		{"--min-score", "200"}, {"--min-score", "-5"}, {"--min-score", "NaN"},
	} {
		var out, errb bytes.Buffer
		err := run(context.Background(), append([]string{"report", dir}, args...), &out, &errb)
		if exitCode(err, &errb) != 2 || !strings.Contains(err.Error(), "from 0 to 100") {
			t.Errorf("%v: %v, want a usage error naming the range", args, err)
		}
	}
	runOK(t, "report", dir, "--fail-on", "100", "--min-score", "0", "-o", filepath.Join(t.TempDir(), "r.md"))
}
