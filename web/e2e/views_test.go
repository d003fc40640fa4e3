package e2e

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/leakscope/leakscope/capture"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/samples"
)

// TestViews reads every view of the workbench in headless Chromium as a
// person reads it — the text, the badges, the drawn charts' axes and
// bands — and compares what it reads with the API's JSON, for four kinds
// of capture (views.test.mjs, history.test.mjs):
//   - the demo's: the committed capture of operator-sim, the sample
//     make demo captures (several trace windows, eBPF, two incidents);
//   - an agent capture that starts with the node agent's history
//     (ticker-leak, its goroutine and heap profiles read every second
//     before the capture, as the agent's rolling watch reads them);
//   - a single snapshot: one goroutine dump (testdata/twoparents.txt,
//     whose leaked goroutines sit in two ancestry nodes of one function);
//   - a capture opened cold, uploaded by the test and opened at once.
func TestViews(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped with -short")
	}
	ctx, node, chromium, tmp, bin := browserSetup(t)
	root, err := samples.Root()
	if err != nil {
		t.Fatal(err)
	}
	hist := historyCapture(t, filepath.Join(root, "ticker-leak"), tmp)
	single := filepath.Join(tmp, "single.lsb")
	run(t, ctx, ".", bin, "ingest", filepath.Join("testdata", "twoparents.txt"), "-o", single)
	bundles := filepath.Join(filepath.Dir(root), "cmd", "leakscope", "bundles")
	cold := packed(t, filepath.Join(bundles, "timeout-send.lsb"), filepath.Join(tmp, "cold.tar.zst"))

	url := startServe(t, ctx, bin, tmp)
	ids := map[string]string{}
	for name, dir := range map[string]string{"HISTORY": hist, "SINGLE": single, "DEMO": filepath.Join(bundles, "operator-sim.lsb")} {
		ids[name] = upload(t, url, packed(t, dir, filepath.Join(tmp, name+".tar.zst")))
	}
	shots, _ := filepath.Abs("screenshots")
	for _, file := range []string{"views.test.mjs", "history.test.mjs"} {
		cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", file)
		cmd.Env = append(os.Environ(), "LEAKSCOPE_URL="+url, "LEAKSCOPE_SCREENSHOTS="+shots, "CHROMIUM="+chromium,
			"LEAKSCOPE_DEMO="+ids["DEMO"], "LEAKSCOPE_HISTORY="+ids["HISTORY"], "LEAKSCOPE_SINGLE="+ids["SINGLE"], "LEAKSCOPE_COLD_ARCHIVE="+cold)
		outb, err := cmd.CombinedOutput()
		t.Logf("node --test %s:\n%s", file, outb)
		if err != nil {
			t.Errorf("%s failed: %v", file, err)
		}
	}
}

// historyCapture records a capture of the sample in dir that starts with
// a history: five goroutine and heap profiles read a second apart before
// it, as the node agent's rolling watch reads them.
func historyCapture(t *testing.T, dir, tmp string) string {
	t.Helper()
	ctx := t.Context()
	p, err := samples.Start(ctx, dir, "-rate", "50")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	var hist []capture.HistoryFile
	client := capture.NewScrapeClient(0)
	for i := range 5 {
		snap, err := capture.ReadSnapshot(ctx, client, p.URL)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []struct {
			profile string
			data    []byte
		}{{"goroutine", snap.Goroutine}, {"heap", snap.Heap}} {
			path := filepath.Join(tmp, fmt.Sprintf("%s-%d.pb.gz", f.profile, i))
			if err := os.WriteFile(path, f.data, 0o644); err != nil {
				t.Fatal(err)
			}
			hist = append(hist, capture.HistoryFile{Path: path, Profile: f.profile, Time: snap.TS})
		}
		time.Sleep(time.Second)
	}
	out := filepath.Join(tmp, "history.lsb")
	if _, err := capture.Run(ctx, capture.Options{URL: p.URL, Out: out, Duration: 6 * time.Second, Interval: 2 * time.Second,
		TraceWindow: time.Second, NoEBPF: true, History: hist, Tool: "e2e"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	return out
}

// packed packs the bundle dir into the archive file and returns its path.
func packed(t *testing.T, dir, file string) string {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := bundle.Pack(dir, f, bundle.FormatTarZstd); err != nil {
		t.Fatal(err)
	}
	return file
}
