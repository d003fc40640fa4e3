package corpus

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/samples/blocking"
)

// repeatRuns is how many separate runs of the program TestRepeatableVerdicts
// captures, and reportAgain how many more times it analyses one bundle.
const (
	repeatRuns  = 5
	reportAgain = 11
)

// TestRepeatableVerdicts runs the two-bug program (samples/blocking/twobugs:
// a goroutine leaked per request beside a one-time lock-order deadlock)
// repeatRuns times, each a separate process captured at another moment
// (run i some 3i seconds after its bugs show, so the runs differ in how
// many goroutines leaked and in what their stale argument words hold),
// takes one dump, two dumps a second apart and a SIGQUIT traceback from
// each run, and requires every run to give the same verdicts: the same
// suspects (pattern, location, verdict) and the same incidents (pattern
// and member locations). No incident may join the two bugs, and from two
// dumps (where the per-request leak can be seen growing) each bug must be
// named by a suspect of its own. The first run's bundles are also
// analysed reportAgain more times each: one bundle, one report.
func TestRepeatableVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the two-bug corpus program five times")
	}
	root, err := blocking.Root()
	if err != nil {
		t.Fatal(err)
	}
	p, err := blocking.Load(filepath.Join(root, "twobugs"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin, err := build(ctx, p, ToolchainFromEnv(), dir, filepath.Join(dir, "src"))
	if err != nil {
		t.Fatal(err)
	}
	recs := make([]*Recording, repeatRuns)
	var wg sync.WaitGroup
	for i := range recs {
		recs[i] = &Recording{Program: p.Truth.Name, Dir: filepath.Join(dir, fmt.Sprint("run-", i))}
		wg.Add(1)
		go func() {
			defer wg.Done()
			captureDumps(ctx, p, bin, dir, recs[i], time.Duration(i)*3*time.Second)
		}()
	}
	wg.Wait()
	for _, f := range Forms {
		if f.Key != "dump" && f.Key != "two-dumps" && f.Key != "traceback" {
			continue
		}
		var first []string
		for i, r := range recs {
			if len(r.Problems) > 0 {
				t.Fatalf("run %d: %v", i, r.Problems)
			}
			bdir := filepath.Join(dir, fmt.Sprintf("%s-%d.lsb", f.Key, i))
			rep, err := analyse(r, f, bdir)
			if err != nil {
				t.Fatalf("%s, run %d: %v", f.Key, i, err)
			}
			got := verdicts(rep)
			if i == 0 {
				reportsAgain(t, bdir, f.Key, got, reportAgain)
			}
			t.Logf("%s, run %d:\n  %s", f.Key, i, strings.Join(got, "\n  "))
			for _, msg := range twoBugsApart(p.Truth, rep, f.Key == "two-dumps") {
				t.Errorf("%s, run %d: %s", f.Key, i, msg)
			}
			if i == 0 {
				first = got
			} else if !slices.Equal(got, first) {
				t.Errorf("%s: run %d's verdicts differ from run 0's:\n  run 0: %s\n  run %d: %s", f.Key, i,
					strings.Join(first, "\n         "), i, strings.Join(got, "\n         "))
			}
		}
	}
}

// reportsAgain analyses the bundle in dir n more times and requires the
// verdicts want each time.
func reportsAgain(t *testing.T, dir, what string, want []string, n int) {
	t.Helper()
	b, err := bundle.Open(dir)
	if err != nil {
		t.Error(err)
		return
	}
	for k := 0; k < n; k++ {
		rep, err := analysis.Analyze(b, memory.DefaultAllocator, analysis.Options{})
		if err != nil {
			t.Error(err)
			return
		}
		if got := verdicts(rep); !slices.Equal(got, want) {
			t.Errorf("%s: analysing the same bundle again (%d) gave other verdicts:\n  first: %s\n  again: %s", what, k+1,
				strings.Join(want, "\n         "), strings.Join(got, "\n         "))
			return
		}
	}
}

// captureDumps runs the program once, waits for its bug and then for
// delay, and records two dumps a second apart and then a SIGQUIT
// traceback into r.
func captureDumps(ctx context.Context, prog blocking.Program, bin, tmp string, r *Recording, delay time.Duration) {
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		r.problem("%v", err)
		return
	}
	p, err := start(ctx, prog.Truth.Name, bin, tmp, args(prog, 10*time.Minute)...)
	if err != nil {
		r.problem("%v", err)
		return
	}
	defer p.kill()
	if _, _, err := awaitTrigger(p, prog.Truth); err != nil {
		r.problem("%v", err)
		return
	}
	time.Sleep(delay)
	at := time.Now()
	b, err := p.dump()
	if err != nil {
		r.problem("first dump: %v", err)
		return
	}
	r.add(Dump1, at, b)
	time.Sleep(time.Second)
	at = time.Now()
	if b, err = p.dump(); err != nil {
		r.problem("second dump: %v", err)
		return
	}
	r.add(Dump2, at, b)
	at = time.Now()
	if b, err = p.quit(); err != nil {
		r.problem("traceback: %v", err)
		return
	}
	r.add(Traceback, at, b)
}

// verdicts is what must not change between captures: each suspect's
// pattern, location and verdict, and each incident's pattern with its
// members' locations, sorted.
func verdicts(rep *analysis.Report) []string {
	loc := map[string]string{}
	var out []string
	for _, s := range rep.Suspects {
		loc[s.ID] = s.Location
		out = append(out, fmt.Sprintf("suspect %s@%s [%s]", s.Pattern, s.Location, s.Verdict))
	}
	for _, in := range rep.Incidents {
		var members []string
		for _, id := range in.Suspects {
			members = append(members, loc[id])
		}
		slices.Sort(members)
		out = append(out, fmt.Sprintf("incident %s: %s", in.Pattern, strings.Join(members, ", ")))
	}
	slices.Sort(out)
	return out
}

// twoBugsApart returns what is wrong with rep for a program whose blocked
// groups are independent bugs: an incident whose members name more than
// one of them, or (when all is set) a blocked function no suspect names.
func twoBugsApart(t blocking.Truth, rep *analysis.Report, all bool) []string {
	var out []string
	loc := map[string]string{}
	for _, s := range rep.Suspects {
		loc[s.ID] = s.Location
	}
	for _, fn := range t.BlockedFunctions() {
		named := false
		for _, s := range rep.Suspects {
			named = named || s.Location == fn
		}
		if all && !named {
			out = append(out, "no suspect names "+fn)
		}
	}
	for _, in := range rep.Incidents {
		var bugs []string
		for _, id := range in.Suspects {
			if fn := loc[id]; slices.Contains(t.BlockedFunctions(), fn) && !slices.Contains(bugs, fn) {
				bugs = append(bugs, fn)
			}
		}
		if len(bugs) > 1 {
			out = append(out, fmt.Sprintf("incident %s (%s) joins independent bugs %s", in.ID, in.Pattern, strings.Join(bugs, " and ")))
		}
	}
	return out
}
