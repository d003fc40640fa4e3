package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
)

// TestInspectTrigger: inspect names the build and what triggered the
// capture, with control characters in a label made visible.
func TestInspectTrigger(t *testing.T) {
	cp := filepath.Join(t.TempDir(), "b.lsb")
	if err := os.CopyFS(cp, os.DirFS("bundles/timeout-send.lsb")); err != nil {
		t.Fatal(err)
	}
	m, err := bundle.ReadManifest(cp)
	if err != nil {
		t.Fatal(err)
	}
	if out := runOK(t, "inspect", cp); strings.Contains(out, "trigger") || !strings.Contains(out, "build    id "+m.Target.BuildID[:12]+"\n") {
		t.Errorf("inspect of a capture by hand:\n%s", out)
	}
	m.Trigger = &bundle.Trigger{Source: bundle.TriggerAlert, Node: "vm", At: time.Date(2026, 12, 6, 9, 41, 30, 0, time.UTC),
		Alert: &bundle.Alert{Name: "GoroutineGrowthFast", Labels: map[string]string{"job": "svc\nforged line"}, StartsAt: time.Date(2026, 12, 6, 9, 41, 7, 0, time.UTC)}}
	data, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(cp, bundle.ManifestFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	want := `trigger  Alertmanager alert GoroutineGrowthFast (job=svc\x0aforged line), firing since 2026-12-06 09:41:07.000 UTC; captured on node vm at 2026-12-06 09:41:30.000 UTC` + "\n"
	if out := runOK(t, "inspect", cp); !strings.Contains(out, want) {
		t.Errorf("inspect does not say\n%s\nit says:\n%s", want, out)
	}
}
