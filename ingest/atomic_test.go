package ingest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakscope/leakscope/ingest/killpoint"
)

// childEnv makes the test binary, run as a child, ingest one file and exit
// (see TestMain): its value is "BUNDLE\nFILE".
const childEnv = "LEAKSCOPE_TEST_INGEST_CHILD"

func TestMain(m *testing.M) {
	if arg := os.Getenv(childEnv); arg != "" {
		dir, file, _ := strings.Cut(arg, "\n")
		if _, err := File(dir, file, Options{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// ingestChild ingests file into dir in a child process, killed with
// SIGKILL at the kill point when one is given. It reports whether the
// child was killed.
func ingestChild(t *testing.T, dir, file, point string) bool {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+dir+"\n"+file)
	if point != "" {
		cmd.Env = append(cmd.Env, killpoint.Env+"="+point)
	}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == -1 {
		return true // killed by a signal
	}
	if err != nil {
		t.Fatalf("ingest %s (kill point %q): %v\n%s", file, point, err, out)
	}
	return false
}

// leftoverDirs lists what a transaction left in dir.
func leftoverDirs(dir string) []string {
	var out []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".staging-") || strings.HasPrefix(e.Name(), ".commit-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// killPoints are the steps of a transaction a kill may hit: a batch
// written to a staged table, the staging complete, the commit, and each
// file moved into place.
var killPoints = []string{"bundle:batch", "bundle:staged", "bundle:committed", "bundle:moved-raw", "bundle:moved-table", "bundle:moved-manifest"}

// TestKillAtEveryStep adds a real trace to an existing bundle in a child
// process killed with SIGKILL at every step of the transaction, in turn.
// After each kill, opening the bundle leaves it holding the whole file or
// none of it, with nothing left over; ingesting the file again then gives
// exactly the bundle a clean run gives, each row once.
func TestKillAtEveryStep(t *testing.T) {
	heap, dump, tr := realArtifacts(t)
	src := t.TempDir()
	heapPath, dumpPath, trPath := writeFile(t, "heap.pb.gz", heap), writeFile(t, "dump.txt", dump), writeFile(t, "trace.out", tr)
	base := filepath.Join(src, "base.lsb")
	for _, p := range []string{heapPath, dumpPath} {
		if _, err := File(base, p, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshot(t, base)
	clean := filepath.Join(src, "clean.lsb")
	if err := os.CopyFS(clean, os.DirFS(base)); err != nil {
		t.Fatal(err)
	}
	if ingestChild(t, clean, trPath, "") {
		t.Fatal("a run without kill point was killed")
	}
	after := snapshot(t, clean)
	if after == before {
		t.Fatal("ingesting the trace changed nothing")
	}
	kills := 0
	for _, point := range killPoints {
		for n := 1; ; n++ {
			dir := filepath.Join(t.TempDir(), "b.lsb")
			if err := os.CopyFS(dir, os.DirFS(base)); err != nil {
				t.Fatal(err)
			}
			at := fmt.Sprintf("%s:%d", point, n)
			if !ingestChild(t, dir, trPath, at) {
				if n == 1 {
					t.Errorf("kill point %s never reached", point)
				}
				break
			}
			kills++
			got := snapshot(t, dir) // opening recovers
			if got != before && got != after {
				t.Errorf("killed at %s: the bundle holds part of the file:\n got    %s\n before %s\n after  %s", at, got, before, after)
			}
			if left := leftoverDirs(dir); len(left) > 0 {
				t.Errorf("killed at %s: %v left after opening", at, left)
			}
			if _, err := File(dir, trPath, Options{}); err != nil && !errors.Is(err, ErrDuplicate) {
				t.Errorf("killed at %s: ingesting again: %v", at, err)
			}
			if again := snapshot(t, dir); again != after {
				t.Errorf("killed at %s, then ingested again: rows differ from one clean run:\n got   %s\n clean %s", at, again, after)
			}
		}
	}
	t.Logf("%d kills", kills)
}

// TestKillNewBundle kills the ingest that creates a bundle at every step:
// afterwards there is no bundle, an empty one, or the whole file, and
// ingesting again gives the clean result.
func TestKillNewBundle(t *testing.T) {
	_, dump, _ := realArtifacts(t)
	path := writeFile(t, "dump.txt", dump)
	clean := filepath.Join(t.TempDir(), "clean.lsb")
	if ingestChild(t, clean, path, "") {
		t.Fatal("killed without kill point")
	}
	want := snapshot(t, clean)
	for _, point := range killPoints {
		for n := 1; ; n++ {
			dir := filepath.Join(t.TempDir(), "new.lsb")
			if !ingestChild(t, dir, path, fmt.Sprintf("%s:%d", point, n)) {
				break
			}
			if _, err := os.Stat(dir); err == nil {
				if got := snapshot(t, dir); got != want && strings.Contains(got, "raw/") {
					t.Errorf("killed at %s:%d: bundle holds part of the file: %s", point, n, got)
				}
			}
			if _, err := File(dir, path, Options{}); err != nil && !errors.Is(err, ErrDuplicate) {
				t.Fatalf("ingest again after a kill at %s:%d: %v", point, n, err)
			}
			if got := snapshot(t, dir); got != want {
				t.Errorf("killed at %s:%d, ingested again: %s, want %s", point, n, got, want)
			}
		}
	}
}

// TestDuplicateRefused ingests the same content twice: the second time is
// refused and adds nothing.
func TestDuplicateRefused(t *testing.T) {
	_, dump, _ := realArtifacts(t)
	dir := filepath.Join(t.TempDir(), "d.lsb")
	if _, err := File(dir, writeFile(t, "dump.txt", dump), Options{}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	_, err := File(dir, writeFile(t, "copy.txt", dump), Options{})
	if !errors.Is(err, ErrDuplicate) || !strings.Contains(err.Error(), "raw/dump.txt") {
		t.Fatalf("second ingest: %v", err)
	}
	if after := snapshot(t, dir); after != before {
		t.Errorf("bundle changed: %s -> %s", before, after)
	}
}
