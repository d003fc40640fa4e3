package capture

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/samples"
)

// startFlightSvc builds and runs testdata/flightsvc at the given rate
// with env added.
func startFlightSvc(t testing.TB, rate string, env ...string) *samples.Process {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "flightsvc")
	build := exec.Command("go", "build", "-o", bin, "./testdata/flightsvc")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build flightsvc: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-rate", rate)
	cmd.Env = append(cmd.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "listening on ") {
		t.Fatalf("flightsvc: %q (%v)", line, err)
	}
	go io.Copy(io.Discard, out)
	return &samples.Process{Cmd: cmd, PID: cmd.Process.Pid, URL: strings.TrimSpace(strings.TrimPrefix(line, "listening on "))}
}

// TestFlightRecordingFirst captures a service that imports the flight
// package, three seconds after it started: the bundle's first trace is
// the flight recording, dated by its own clock, reaching back before the
// capture began, and ingested (the leaked workers are in its goroutine
// table); a service without it gives no such artifact and no notice.
func TestFlightRecordingFirst(t *testing.T) {
	url := startFlightSvc(t, "50").URL
	time.Sleep(3 * time.Second)
	dir := filepath.Join(t.TempDir(), "f.lsb")
	began := time.Now()
	var log strings.Builder
	if _, err := Run(context.Background(), Options{URL: url, Out: dir, Duration: 3 * time.Second, Interval: 2 * time.Second,
		TraceWindow: time.Second, NoEBPF: true}, &log); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var flight, window *bundle.Artifact
	for i, a := range b.Manifest.Artifacts {
		switch {
		case a.Kind == bundle.SourceTrace && strings.HasPrefix(filepath.Base(a.Name), "trace-flight-"):
			flight = &b.Manifest.Artifacts[i]
		case a.Kind == bundle.SourceTrace && window == nil:
			window = &b.Manifest.Artifacts[i]
		}
	}
	if flight == nil || flight.Status != bundle.StatusComplete {
		t.Fatalf("no complete flight recording in the bundle: %+v\n%s", flight, log.String())
	}
	t.Logf("flight recording %s .. %s, %d bytes; capture began %s", flight.Start.Format("15:04:05.000"), flight.End.Format("15:04:05.000"), flight.Size, began.Format("15:04:05.000"))
	if !flight.Start.Before(began) || flight.TimeBasis != bundle.TimeContent || !flight.Time.Equal(flight.Start) {
		t.Errorf("flight recording from %v (basis %s, time %v), want its own clock, before the capture began at %v", flight.Start, flight.TimeBasis, flight.Time, began)
	}
	if window == nil || !flight.End.Before(window.Start) && !flight.End.Equal(window.Start) {
		t.Errorf("flight recording ends %v, the capture's first trace window %+v: want it first", flight.End, window)
	}
	if !strings.Contains(source(t, b.Manifest, bundle.SourceTrace).Settings["flight"], "before the capture") {
		t.Errorf("trace source settings %v do not name the flight recording", source(t, b.Manifest, bundle.SourceTrace).Settings)
	}
	// Only the flight recording can show workers made before the capture.
	var before int
	readRows(t, b, "trace_goroutines", memory.DefaultAllocator, func(rec arrow.Record, i int) {
		if c := col(t, rec, "created_ts"); c.IsValid(i) && i64At(c, i) < began.UnixNano() {
			before++
		}
	})
	if flight.Rows == 0 || before == 0 {
		t.Errorf("flight recording ingested %d rows, %d goroutines created before the capture began", flight.Rows, before)
	}

	// Without the recorder: nothing, and nothing said.
	off := startFlightSvc(t, "50", "LEAKSCOPE_FLIGHT=off").URL
	dir2 := filepath.Join(t.TempDir(), "g.lsb")
	log.Reset()
	if _, err := Run(context.Background(), Options{URL: off, Out: dir2, Duration: 2 * time.Second, Interval: 2 * time.Second,
		TraceWindow: time.Second, NoEBPF: true}, &log); err != nil {
		t.Fatal(err)
	}
	m, err := bundle.ReadManifest(dir2)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range m.Artifacts {
		if strings.Contains(a.Name, "trace-flight-") {
			t.Errorf("artifact %s from a service without a flight recorder", a.Name)
		}
	}
	if strings.Contains(log.String(), "flight") {
		t.Errorf("capture log mentions the flight recorder of a service without one:\n%s", log.String())
	}
}
