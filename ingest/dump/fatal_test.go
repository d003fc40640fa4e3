package dump

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/leakscope/leakscope/ingest/bundle"
)

// TestIngestAllAsleep runs a program the runtime stops for a deadlock and
// checks that its crash keeps the runtime's reason beside the goroutines.
func TestIngestAllAsleep(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a Go program")
	}
	bin := filepath.Join(t.TempDir(), "deadlock")
	if out, err := exec.Command("go", "build", "-o", bin, "testdata/deadlock.go").CombinedOutput(); err != nil {
		t.Fatalf("build deadlock: %v\n%s", err, out)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(bin)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil {
		t.Fatalf("deadlock exited 0; stderr:\n%s", stderr.Bytes())
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	a := &bundle.Artifact{Name: "raw/crash.log", Time: time.Unix(100, 0)}
	if _, err := ingestBytes(t, stderr.Bytes(), a, mem); err != nil {
		t.Fatal(err)
	}
	if want := "all goroutines are asleep - deadlock!"; a.Fatal != want {
		t.Errorf("Fatal = %q, want %q; stderr:\n%s", a.Fatal, want, stderr.Bytes())
	}
	if a.Rows != 3 {
		t.Errorf("%d goroutine rows, want 3 (main and its two workers)", a.Rows)
	}
}

// TestFatalKeptOnce checks that only the first fatal error is kept, cut to
// maxFatal bytes, and that a dump without one has none.
func TestFatalKeptOnce(t *testing.T) {
	long := bytes.Repeat([]byte("x"), 2*maxFatal)
	in := "fatal error: " + string(long) + "\n\ngoroutine 1 [running]:\nmain.main()\n\t/x/main.go:3 +0x1\n\nfatal error: second\n"
	rd := NewReader(bytes.NewReader([]byte(in)))
	for {
		if _, err := rd.Next(); err != nil {
			break
		}
	}
	if got := rd.Fatal(); got != string(long[:maxFatal]) {
		t.Errorf("Fatal = %q (%d bytes), want the first message cut to %d bytes", got, len(got), maxFatal)
	}
	rd = NewReader(bytes.NewReader([]byte("goroutine 1 [running]:\nmain.main()\n\t/x/main.go:3 +0x1\n")))
	for {
		if _, err := rd.Next(); err != nil {
			break
		}
	}
	if got := rd.Fatal(); got != "" {
		t.Errorf("Fatal = %q for a dump without one", got)
	}
}
