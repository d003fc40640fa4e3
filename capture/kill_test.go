package capture

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// childEnv holds the JSON Options of a capture the re-executed test
// binary runs (see TestMain) instead of the tests.
const childEnv = "LEAKSCOPE_CAPTURE_CHILD"

// captureChild runs the capture described by the JSON options.
func captureChild(js string) int {
	var o Options
	if err := json.Unmarshal([]byte(js), &o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	_, err := Run(context.Background(), o, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// childCommand returns a command running the test binary exe as a capture
// child with options o.
func childCommand(t testing.TB, exe string, o Options) *exec.Cmd {
	t.Helper()
	js, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(js))
	return cmd
}

// TestCaptureSIGKILL kills a capture with SIGKILL and checks that the
// bundle reads up to its last flush: every artifact the flushed manifest
// lists has all its rows in the tables.
func TestCaptureSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a live process")
	}
	t.Parallel()
	p := startSample(t, "timeout-send")
	out := filepath.Join(t.TempDir(), "k.lsb")
	cmd := childCommand(t, os.Args[0], Options{URL: p.URL, Out: out, Interval: time.Second,
		TraceWindow: time.Second, CPUWindow: time.Second, NoEBPF: true})
	var stderr strings.Builder
	cmd.Stderr = &syncWriter{w: &stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killAfterThreeRounds(t, cmd, out, &stderr)
	b := checkKilledManifest(t, out)
	checkFlushedRows(t, b)
}

// killAfterThreeRounds waits for the capture child's flushed manifest at
// out to list dumps from three rounds and a trace, then kills the child
// with SIGKILL.
func killAfterThreeRounds(t *testing.T, cmd *exec.Cmd, out string, stderr *strings.Builder) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		m, err := bundle.ReadManifest(out)
		if err == nil && countKind(m, bundle.SourceDump) >= 3 && countKind(m, bundle.SourceTrace) >= 1 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("capture child wrote no 3 dumps in 60 s; stderr:\n%s", stderr.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
}

// checkKilledManifest opens the killed capture's bundle at out and checks
// what it says of itself: the manifest on disk still says "running", the
// reader says the capture was interrupted and when it last flushed, and
// the bundle validates. It returns the bundle as read once the flush is
// old.
func checkKilledManifest(t *testing.T, out string) *bundle.Bundle {
	t.Helper()
	b, err := bundle.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(out, bundle.ManifestFile))
	if !strings.Contains(string(raw), `"running"`) || !strings.Contains(string(raw), `"last_flush"`) {
		t.Errorf("killed capture's manifest:\n%s", raw)
	}
	s := source(t, b.Manifest, bundle.SourceDump)
	if s.Status != bundle.StatusInterrupted && !strings.Contains(s.Detail, "still being written") {
		t.Errorf("killed capture: dump source %q (%s), want %q", s.Status, s.Detail, bundle.StatusInterrupted)
	}
	if want := "last flush at " + b.Manifest.LastFlush.UTC().Format(time.RFC3339); !strings.Contains(s.Detail, want) || b.Manifest.LastFlush.Before(b.Manifest.Start) {
		t.Errorf("dump source detail %q, want %q", s.Detail, want)
	}
	// Read again once the flush is old: interrupted.
	time.Sleep(time.Until(b.Manifest.LastFlush.Add(16 * time.Second)))
	if b, err = bundle.Open(out); err != nil {
		t.Fatal(err)
	}
	if s := source(t, b.Manifest, bundle.SourceDump); s.Status != bundle.StatusInterrupted {
		t.Errorf("16 s after the last flush: dump source %q (%s), want %q", s.Status, s.Detail, bundle.StatusInterrupted)
	}
	if _, err := bundle.Validate(out); err != nil {
		t.Fatalf("killed bundle does not validate: %v", err)
	}
	return b
}

// checkFlushedRows checks every dump and pprof artifact b's manifest lists
// has all its rows in the tables, and that there are at least three.
func checkFlushedRows(t *testing.T, b *bundle.Bundle) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rowsBySource := map[string]int64{}
	for _, table := range []string{schema.TableGoroutines, schema.TableSamples} {
		readRows(t, b, table, mem, func(rec arrow.Record, i int) {
			rowsBySource[bundle.NewStrings(col(t, rec, schema.ColSource)).Value(i)]++
		})
	}
	var checked int
	for _, a := range b.Manifest.Artifacts {
		if a.Kind != bundle.SourceDump && a.Kind != bundle.SourcePprof {
			continue
		}
		checked++
		if a.Kind == bundle.SourceDump && a.Rows == 0 {
			t.Errorf("%s: dump with no goroutines", a.Name)
		}
		if got := rowsBySource[a.Name]; got != a.Rows {
			t.Errorf("%s: manifest says %d rows, tables hold %d", a.Name, a.Rows, got)
		}
	}
	if checked < 3 {
		t.Errorf("only %d flushed artifacts to check", checked)
	}
	t.Logf("killed after %d artifacts; %d dump/pprof artifacts fully readable", len(b.Manifest.Artifacts), checked)
}

func countKind(m bundle.Manifest, kind string) int {
	n := 0
	for _, a := range m.Artifacts {
		if a.Kind == kind {
			n++
		}
	}
	return n
}
