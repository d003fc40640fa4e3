package export

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/killpoint"
)

// childEnv makes the test binary, run as a child, export one bundle and
// exit (see TestMain): "BUNDLE\nOUT\nMODE", MODE "exchange" or "aside".
const childEnv = "LEAKSCOPE_TEST_EXPORT_CHILD"

func TestMain(m *testing.M) {
	if arg := os.Getenv(childEnv); arg != "" {
		parts := strings.Split(arg, "\n")
		noExchange = parts[2] == "aside"
		b, err := bundle.Open(parts[0])
		if err == nil {
			_, err = Parquet(b, parts[1], Options{})
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// exportChild exports in a child process killed at the kill point; it
// reports whether the child was killed.
func exportChild(t *testing.T, bundleDir, out, mode, point string) bool {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+bundleDir+"\n"+out+"\n"+mode, killpoint.Env+"="+point)
	outp, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == -1 {
		return true
	}
	if err != nil {
		t.Fatalf("export (kill point %q): %v\n%s", point, err, outp)
	}
	return false
}

// leftovers lists the temporaries under out's work directory.
func leftovers(t *testing.T, out string) []string {
	t.Helper()
	var left []string
	for _, d := range []string{"tmp", "old"} {
		es, _ := os.ReadDir(filepath.Join(out, WorkDir, d))
		for _, e := range es {
			left = append(left, d+"/"+e.Name())
		}
	}
	return left
}

// globbed is what the README's fleet query reads: every
// DIR/*/*/TABLE.parquet, with the number of Parquet files per directory.
// (Deeper globs may also see an export's files under WorkDir, each whole:
// a file is named .parquet only once it is written.)
func globbed(t *testing.T, out string) map[string]int {
	t.Helper()
	got := map[string]int{}
	for _, pat := range []string{"*/*/*.parquet"} {
		ms, err := filepath.Glob(filepath.Join(out, pat))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			rel, _ := filepath.Rel(out, filepath.Dir(m))
			got[rel]++
		}
	}
	return got
}

// TestExportKillAtEveryStep exports a bundle over an earlier export of it
// in a child killed with SIGKILL at every step, with the directory swap
// and with the move-aside fallback. After each kill the fleet glob sees
// one capture directory holding every table, the earlier export (marked)
// or the new one; the next export removes every temporary and puts back
// an export moved aside.
func TestExportKillAtEveryStep(t *testing.T) {
	b := sampleBundle(t, "timeout-send.lsb")
	base := t.TempDir()
	c, err := Parquet(b, base, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(base, c.Dir)
	want := map[string]int{rel: len(c.Tables)}
	marker := filepath.Join(rel, "earlier")
	points := map[string][]string{
		"exchange": {"export:table", "export:written", "export:exchanged"},
		"aside":    {"export:table", "export:written", "export:moved-aside", "export:installed"},
	}
	kills := 0
	for _, mode := range []string{"exchange", "aside"} {
		for _, point := range points[mode] {
			step := 1
			if point == "export:table" {
				step = 5 // a kill after the 1st, 6th, 11th table
			}
			for n := 1; ; n += step {
				out := t.TempDir()
				if err := os.CopyFS(out, os.DirFS(base)); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(out, marker), nil, 0o644); err != nil {
					t.Fatal(err)
				}
				at := fmt.Sprintf("%s:%d", point, n)
				if !exportChild(t, b.Dir, out, mode, at) {
					if n == 1 {
						t.Errorf("%s: kill point %s never reached", mode, point)
					}
					break
				}
				kills++
				if got := globbed(t, out); !mapsEqual(got, want) && !(mode == "aside" && movedAside(out, got)) {
					t.Errorf("%s, killed at %s: the fleet glob sees %v, want %v", mode, at, got, want)
				}
				// The next export starts by cleaning up.
				tmp, release, err := begin(out)
				if err != nil {
					t.Fatal(err)
				}
				os.RemoveAll(filepath.Dir(tmp))
				release()
				if got := globbed(t, out); !mapsEqual(got, want) {
					t.Errorf("%s, killed at %s, then recovered: the fleet glob sees %v, want %v", mode, at, got, want)
				}
				if left := leftovers(t, out); len(left) > 0 {
					t.Errorf("%s, killed at %s: %v left after recovery", mode, at, left)
				}
				for _, tb := range c.Tables {
					readParquet(t, filepath.Join(out, rel, filepath.Base(tb.Path)))
				}
			}
		}
	}
	if kills < 8 {
		t.Errorf("only %d kills", kills)
	}
}

// movedAside reports whether the glob sees nothing because the fallback
// moved the earlier export aside, whole, for recovery to put back.
func movedAside(out string, got map[string]int) bool {
	es, _ := os.ReadDir(filepath.Join(out, WorkDir, "old"))
	return len(got) == 0 && len(es) == 1
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
