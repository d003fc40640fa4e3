package e2e

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/leakscope/leakscope/cmd/leakscope/bundles"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// TestFleetView uploads the timeout-send sample capture as if from two
// nodes and the operator-sim one from a third, then checks in headless
// Chromium that the fleet view draws, per leak, the nodes and captures
// GET /api/fleet reports (fleet.test.mjs).
func TestFleetView(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped with -short")
	}
	ctx, node, chromium, tmp, bin := browserSetup(t)
	url := startServe(t, ctx, bin, tmp)

	for _, c := range []struct{ sample, node, id string }{
		{"timeout-send.lsb", "node-a", "ts-a"},
		{"timeout-send.lsb", "node-b", "ts-b"},
		{"operator-sim.lsb", "node-c", "op-c"},
	} {
		uploadAs(t, url, tmp, c.sample, c.node, c.id)
	}
	shots, _ := filepath.Abs("screenshots")
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "fleet.test.mjs")
	cmd.Env = append(os.Environ(), "LEAKSCOPE_URL="+url, "LEAKSCOPE_SERVICE=timeout-send", "LEAKSCOPE_SCREENSHOTS="+shots, "CHROMIUM="+chromium)
	outb, err := cmd.CombinedOutput()
	t.Logf("node --test fleet.test.mjs:\n%s", outb)
	if err != nil {
		t.Fatalf("fleet view tests failed: %v", err)
	}
}

// uploadAs posts a sample bundle with its node and capture id replaced.
func uploadAs(t *testing.T, url, tmp, sample, node, id string) {
	t.Helper()
	sub, err := fs.Sub(bundles.FS, sample)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, id+".lsb")
	if err := os.CopyFS(dir, sub); err != nil {
		t.Fatal(err)
	}
	m, err := bundle.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	m.Node, m.CaptureID = node, id
	data, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, bundle.ManifestFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := bundle.Pack(dir, &buf, bundle.FormatTarZstd); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url+"/api/captures", "application/zstd", &buf)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("upload %s as %s: %s", sample, id, resp.Status)
	}
}
