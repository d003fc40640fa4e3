package corpus

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/samples/blocking"
)

// readmePath is the page that holds the claimed table (it was the
// repository README's; the name stays with the markers).
const readmePath = "../../docs/ACCURACY.md"

// TestCorpusAccuracy runs the whole blocking-bug corpus (about two
// minutes of wall time: every program at once, the minute-long form
// included), scores every input form with and without the programs'
// source, and fails when the results fall below the table in docs/ACCURACY.md,
// when a no-source bundle still quotes the program, or when analysing a
// one-dump, two-dump or traceback bundle again changes its verdicts.
// Environment:
//
//	LEAKSCOPE_CORPUS_INPUTS=dir  re-score recordings kept by an earlier run instead of running the programs
//	                             (dir1,dir2: several runs, scored apart; the table takes each program at its worst)
//	LEAKSCOPE_CORPUS_KEEP=dir    keep this run's recordings (raw dumps, tracebacks, profiles) in dir
//	LEAKSCOPE_CORPUS_UPDATE=1    write the measured table into docs/ACCURACY.md instead of checking it
//	LEAKSCOPE_CORPUS_ONLY=a,b    run only these programs (no check of the claimed table)
//	LEAKSCOPE_CORPUS_GO=local    build with the installed Go and GOEXPERIMENT=goroutineleakprofile (default: go1.27.3)
func TestCorpusAccuracy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every corpus program for over a minute")
	}
	root, err := blocking.Root()
	if err != nil {
		t.Fatal(err)
	}
	progs, err := blocking.All(root)
	if err != nil {
		t.Fatal(err)
	}
	only := os.Getenv("LEAKSCOPE_CORPUS_ONLY")
	if only != "" {
		progs = keep(progs, strings.Split(only, ","))
	}
	var runs [][]Outcome
	var runtimes []map[string]RuntimeResult
	all := recordings(t, progs)
	for i, recs := range all {
		outcomes, byProgram := evaluateAll(t, progs, recs, len(all) > 1)
		checkSource(t, outcomes)
		runs, runtimes = append(runs, outcomes), append(runtimes, byProgram)
		t.Logf("corpus accuracy (%d programs, run %d):\n%s\n%s", len(progs), i+1,
			Markdown(Table(progs, outcomes, byProgram)), details(progs, outcomes))
		if f := flaggedControls(outcomes); f != "" {
			t.Logf("suspects on controls (run %d):\n%s", i+1, f)
		}
	}
	rows := Table(progs, Worst(runs...), WorstRuntime(runtimes...))
	table := Markdown(rows)
	if len(runs) > 1 {
		t.Logf("each program at its worst over %d runs:\n%s", len(runs), table)
	}
	if only != "" {
		return
	}
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("LEAKSCOPE_CORPUS_UPDATE") == "1" {
		out, err := Replace(string(readme), table)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(readmePath, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	claims, err := ParseClaims(string(readme))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range Compare(claims, rows) {
		t.Error(s)
	}
}

// evaluateAll scores every program's recording, analyses its one-dump,
// two-dumps and traceback bundles again (the verdicts must not change), and
// reads what the runtime's own goroutineleak profile found. A program
// without a recording is an error, unless the run is one of several
// (partial), which may hold only some of the programs. Programs are
// evaluated a CPU's worth at a time; the outcomes keep the programs' order.
func evaluateAll(t *testing.T, progs []blocking.Program, recs []*Recording, partial bool) ([]Outcome, map[string]RuntimeResult) {
	byName := map[string]*Recording{}
	for _, r := range recs {
		byName[r.Program] = r
	}
	tmp := t.TempDir()
	each := make([][]Outcome, len(progs))
	found := make([]*RuntimeResult, len(progs))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, p := range progs {
		r := byName[p.Truth.Name]
		if r == nil && !partial {
			t.Errorf("%s: no recording", p.Truth.Name)
		}
		if r == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			each[i], found[i] = evaluateOne(t, p, r, tmp)
		}()
	}
	wg.Wait()
	var outcomes []Outcome
	byProgram := map[string]RuntimeResult{}
	for i, p := range progs {
		outcomes = append(outcomes, each[i]...)
		if found[i] != nil {
			byProgram[p.Truth.Name] = *found[i]
		}
	}
	return outcomes, byProgram
}

// evaluateOne is evaluateAll for one program's recording r; its runtime
// result is nil when the recording has no goroutineleak profile.
func evaluateOne(t *testing.T, p blocking.Program, r *Recording, tmp string) ([]Outcome, *RuntimeResult) {
	for _, pr := range r.Problems {
		t.Errorf("%s: %s", p.Truth.Name, pr)
	}
	got, err := Evaluate(r, p, tmp)
	if err != nil {
		t.Error(err)
	}
	for _, o := range got {
		if o.Err == "" && o.Recorded && !o.NoSource && (o.Form == "dump" || o.Form == "two-dumps" || o.Form == "traceback") {
			sameReports(t, filepath.Join(tmp, o.Program+"-"+o.Form+".lsb"), o.Program+" "+o.Form)
		}
	}
	found, leaked, err := RuntimeFound(r, p.Truth)
	if err != nil {
		return got, nil
	}
	if !p.Truth.Healthy && found != p.Truth.GoroutineLeak {
		t.Errorf("%s: truth says goroutineleak=%v, the runtime's profile says %v", p.Truth.Name, p.Truth.GoroutineLeak, found)
	}
	return got, &RuntimeResult{Found: found, Leaked: leaked}
}

// checkSource logs the outcomes that failed and checks that no bundle
// ingested without source quotes the program, and that a one-dump bundle
// with source does.
func checkSource(t *testing.T, outcomes []Outcome) {
	for _, o := range outcomes {
		if o.Err != "" { // counted as a miss (a flagged control) by Table
			t.Logf("%s %s: %s", o.Program, o.Form, o.Err)
		}
		if o.NoSource && o.ProgramSource > 0 {
			t.Errorf("%s %s: ingested without source, the bundle still quotes %d of the program's functions", o.Program, o.Form, o.ProgramSource)
		}
		if !o.NoSource && o.Recorded && o.Err == "" && o.Form == "dump" && o.ProgramSource == 0 {
			t.Errorf("%s %s: ingested with source, the bundle quotes none of the program's functions", o.Program, o.Form)
		}
	}
}

// sameReports analyses the bundle in dir three times and requires the
// same verdicts each time.
func sameReports(t *testing.T, dir, what string) {
	t.Helper()
	b, err := bundle.Open(dir)
	if err != nil {
		t.Error(err)
		return
	}
	rep, err := analysis.Analyze(b, memory.DefaultAllocator, analysis.Options{})
	if err != nil {
		t.Error(err)
		return
	}
	reportsAgain(t, dir, what, verdicts(rep), 2)
}

// recordings runs the corpus, or loads the recordings of earlier runs
// (one set per directory of $LEAKSCOPE_CORPUS_INPUTS, comma-separated; a
// run may hold only some of the programs).
func recordings(t *testing.T, progs []blocking.Program) [][]*Recording {
	if dirs := os.Getenv("LEAKSCOPE_CORPUS_INPUTS"); dirs != "" {
		var out [][]*Recording
		for _, dir := range strings.Split(dirs, ",") {
			recs, err := LoadRecordings(dir)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, recs)
		}
		return out
	}
	out := os.Getenv("LEAKSCOPE_CORPUS_KEEP")
	if out == "" {
		out = t.TempDir()
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	start := time.Now()
	recs, err := Record(ctx, progs, ToolchainFromEnv(), out, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %d programs in %v", len(recs), time.Since(start).Round(time.Second))
	return [][]*Recording{recs}
}

func keep(progs []blocking.Program, names []string) []blocking.Program {
	var out []blocking.Program
	for _, p := range progs {
		for _, n := range names {
			if p.Truth.Name == n {
				out = append(out, p)
			}
		}
	}
	return out
}

// details is the per-program table: in each form, the rank of the first
// suspect naming the bug with source, then without (– none, x not
// recorded, * named first with another pattern than truth.json's; for a
// control, its number of suspects), and the top suspect of the two-dump
// and dumps-plus-profile forms.
func details(progs []blocking.Program, outcomes []Outcome) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 1, ' ', 0)
	head := []string{"program", "class"}
	for _, f := range Forms {
		head = append(head, f.Key)
	}
	fmt.Fprintln(tw, strings.Join(append(head, "top suspect: two-dumps | dumps-leak"), "\t"))
	for _, p := range progs {
		cells := []string{p.Truth.Name, p.Truth.Class}
		var note string
		for _, f := range Forms {
			var cell [2]string
			for _, o := range outcomes {
				if o.Program != p.Truth.Name || o.Form != f.Key {
					continue
				}
				k := 0
				if o.NoSource {
					k = 1
				}
				cell[k] = detailCell(p.Truth, o)
				if !o.NoSource {
					switch f.Key {
					case "two-dumps":
						note = o.Top
					case "dumps-leak":
						note += " | " + o.Top
					}
				}
			}
			cells = append(cells, cell[0]+"/"+cell[1])
		}
		fmt.Fprintln(tw, strings.Join(append(cells, note), "\t"))
	}
	tw.Flush()
	return b.String()
}

func detailCell(t blocking.Truth, o Outcome) string {
	switch {
	case !o.Recorded:
		return "x"
	case o.Err != "":
		return "err"
	case t.Healthy:
		return fmt.Sprintf("%ds", o.Suspects)
	case o.Rank == 0:
		return "–"
	case o.Rank == 1 && !o.PatternRight:
		return "1*"
	default:
		return fmt.Sprint(o.Rank)
	}
}

// flaggedControls lists, for each control and form with suspects, each
// suspect with its evidence (with source, then without).
func flaggedControls(outcomes []Outcome) string {
	var b strings.Builder
	for _, o := range outcomes {
		src := "with source"
		if o.NoSource {
			src = "without source"
		}
		for _, f := range o.Flagged {
			fmt.Fprintf(&b, "%s %s (%s): %s\n", o.Program, o.Form, src, f)
		}
	}
	return b.String()
}

func TestClaimsRoundTrip(t *testing.T) {
	rows := []Row{
		{Form: "two-dumps", Label: "(b) two dumps", Measure: Measure{First: Ratio{3, 10}, Pattern: Ratio{2, 10}, Controls: Ratio{1, 4}, Suspects: 2},
			InTopK: Ratio{5, 10}, Global: Ratio{1, 2}, Folded: Ratio{2, 5},
			NoSource: Measure{First: Ratio{2, 10}, Pattern: Ratio{1, 10}, Controls: Ratio{2, 4}, Suspects: 5}},
		{Form: RuntimeRow, Label: "runtime", Measure: Measure{First: Ratio{8, 10}, Controls: Ratio{0, 4}}, InTopK: Ratio{8, 10}},
	}
	readme := "intro\n" + Begin + "\nold\n" + End + "\nrest\n"
	out, err := Replace(readme, Markdown(rows))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "intro\n") || !strings.HasSuffix(out, End+"\nrest\n") || strings.Contains(out, "\nold\n") {
		t.Fatalf("Replace kept the wrong parts:\n%s", out)
	}
	claims, err := ParseClaims(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(claims) != len(rows) {
		t.Fatalf("claims %+v do not round-trip %+v", claims, rows)
	}
	for i, r := range rows {
		if r.Label = ""; claims[i] != r {
			t.Fatalf("row %d: claim %+v does not round-trip %+v", i, claims[i], r)
		}
	}
	if d := Compare(claims, rows); len(d) != 0 {
		t.Fatalf("equal tables differ: %v", d)
	}
	worse := append([]Row(nil), rows...)
	worse[0].First.N, worse[0].Controls.N, worse[0].Suspects = 2, 2, 3
	worse[1].First.Of = 11
	if d := Compare(claims, worse); len(d) != 4 {
		t.Fatalf("Compare found %d shortfalls, want 4 (fewer named, more controls flagged, more suspects, other corpus): %v", len(d), d)
	}
	worse = append([]Row(nil), rows...)
	worse[0].Pattern.N = 1
	worse[0].NoSource.First.N, worse[0].NoSource.Pattern.N = 1, 0
	worse[0].NoSource.Controls.N, worse[0].NoSource.Suspects = 3, 6
	if d := Compare(claims, worse); len(d) != 5 {
		t.Fatalf("Compare found %d shortfalls, want 5 (pattern, and without source: named, pattern, controls, suspects): %v", len(d), d)
	}
	better := append([]Row(nil), rows...)
	better[0].Pattern.N, better[0].NoSource.Controls.N, better[0].NoSource.Suspects = 3, 0, 0
	if d := Compare(claims, better); len(d) != 0 {
		t.Fatalf("a better run falls short: %v", d)
	}
	if _, err := ParseClaims("no table"); err == nil {
		t.Fatal("a page without markers accepted")
	}
}

// TestWorst merges outcomes of three runs, one of them partial, and checks
// that each program is kept at its worst.
func TestWorst(t *testing.T) {
	progs := []blocking.Program{
		{Truth: blocking.Truth{Name: "bug", Pattern: "p", Blocked: []blocking.Goroutines{{Function: "f"}}}},
		{Truth: blocking.Truth{Name: "ctl", Healthy: true}},
	}
	run1 := []Outcome{
		{Program: "bug", Form: "dump", Recorded: true, Rank: 1, Pattern: "p", PatternRight: true},
		{Program: "ctl", Form: "dump", Recorded: true},
		{Program: "bug", Form: "dump", NoSource: true, Recorded: true, Rank: 1, Pattern: "p", PatternRight: true},
	}
	run2 := []Outcome{
		{Program: "bug", Form: "dump", Recorded: true, Rank: 1, Pattern: "q"},
		{Program: "ctl", Form: "dump", Recorded: true},
		{Program: "bug", Form: "dump", NoSource: true, Recorded: true, Rank: 1, Pattern: "p", PatternRight: true},
	}
	partial := []Outcome{{Program: "ctl", Form: "dump", Recorded: true, Suspects: 2, Flagged: []string{"x", "y"}}}
	rows := Table(progs, Worst(run1, run2, partial), WorstRuntime(map[string]RuntimeResult{"bug": {Found: true}}, map[string]RuntimeResult{"bug": {Found: false}, "ctl": {Leaked: 3}}))
	var dump, rt Row
	for _, r := range rows {
		switch r.Form {
		case "dump":
			dump = r
		case RuntimeRow:
			rt = r
		}
	}
	if dump.First != (Ratio{1, 1}) || dump.Pattern != (Ratio{0, 1}) || dump.NoSource.Pattern != (Ratio{1, 1}) {
		t.Errorf("bug not at its worst: %+v", dump)
	}
	if dump.Controls != (Ratio{1, 1}) || dump.Suspects != 2 || dump.NoSource.Controls != (Ratio{0, 0}) {
		t.Errorf("control not at its worst, or the partial run's control counted without source: %+v", dump)
	}
	if rt.First != (Ratio{0, 1}) || rt.Controls != (Ratio{1, 1}) || rt.Suspects != 3 {
		t.Errorf("runtime row not at its worst: %+v", rt)
	}
	first := Worst(run1)
	if len(first) != len(run1) || first[0].Rank != 1 || !first[0].PatternRight {
		t.Errorf("one run is not its own worst: %+v", first)
	}
}

// TestHookBuildsAndServes builds one service and one test kernel with
// the hook and checks that both serve a dump that shows their planted
// goroutines: the harness's own plumbing, in seconds.
func TestHookBuildsAndServes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two corpus programs")
	}
	root, err := blocking.Root()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"nilrecv", "doublelock"} {
		p, err := blocking.Load(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		bin, err := build(context.Background(), p, DefaultToolchain, dir, filepath.Join(dir, "src"))
		if err != nil {
			t.Fatal(err)
		}
		pr, err := start(context.Background(), name, bin, dir, args(p, time.Minute)...)
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := awaitTrigger(pr, p.Truth)
		pr.kill()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !strings.Contains(string(b), "created by "+p.Package()+".init") {
			t.Errorf("%s: the dump does not show the hook's pprof server:\n%s", name, b)
		}
	}
}
