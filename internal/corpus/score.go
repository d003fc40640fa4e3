package corpus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/google/pprof/profile"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/samples/blocking"
)

// TopK is how deep in the ranking a bug still counts as "named in the top
// k".
const TopK = 3

// Form is one kind of input an on-call engineer may have: the artifacts
// ingested together into one bundle.
type Form struct {
	Key       string
	Label     string
	Artifacts []string
	// TestsOnly forms exist for test kernels only.
	TestsOnly bool
	// Optional forms exist only for the programs that produce them; the
	// others are left out of the form's row.
	Optional bool
}

// Forms are the input forms measured, in table order.
var Forms = []Form{
	{Key: "traceback", Label: "(a) one SIGQUIT traceback", Artifacts: []string{Traceback}},
	{Key: "test-timeout", Label: "(a) `go test -timeout` output, test kernels", Artifacts: []string{TestTimeout}, TestsOnly: true},
	{Key: "all-asleep", Label: "(a) `all goroutines are asleep` crash, where the runtime sees the deadlock (no timer, no network)", Artifacts: []string{AllAsleep}, Optional: true},
	{Key: "dump", Label: "one dump (debug=2)", Artifacts: []string{Dump1}},
	{Key: "two-dumps", Label: "(b) two dumps 1 s apart", Artifacts: []string{Dump1, Dump2}},
	{Key: "minute-dump", Label: "(c) one dump after a ≥ 1 min wait", Artifacts: []string{MinuteDump}},
	{Key: "minute-traceback", Label: "one SIGQUIT traceback after a ≥ 1 min wait", Artifacts: []string{MinuteTraceback}},
	{Key: "leak-profile", Label: "(d) goroutineleak profile alone", Artifacts: []string{LeakProfile}},
	{Key: "dumps-leak", Label: "(d) two dumps + goroutineleak profile", Artifacts: []string{LeakDump1, LeakDump2, LeakProfile}},
}

// Outcome is the verdict of one form of one program.
type Outcome struct {
	Program string
	Form    string
	// Recorded is false when an artifact of the form is missing (see the
	// recording's problems).
	Recorded bool
	// Err is an ingest or analysis error.
	Err string
	// Rank is the 1-based rank of the first suspect naming a blocked
	// function; 0 when none does.
	Rank int
	// Pattern is that suspect's pattern.
	Pattern string
	// Suspects is how many suspects the report has.
	Suspects int
	// Unfolded lists consequences reported as suspects of their own
	// (without a cause link).
	Unfolded []string
	// Others lists suspects naming neither a blocked goroutine nor a
	// consequence ("pattern@location").
	Others []string
	// Top is the first suspect, for the detail table.
	Top string
}

// Evaluate ingests each form of rec into its own bundle under tmp,
// analyses it and scores the report against p's truth.
func Evaluate(rec *Recording, p blocking.Program, tmp string) []Outcome {
	var out []Outcome
	for _, f := range Forms {
		if f.TestsOnly && p.Truth.Shape != blocking.ShapeTest {
			continue
		}
		o := Outcome{Program: p.Truth.Name, Form: f.Key, Recorded: true}
		for _, a := range f.Artifacts {
			o.Recorded = o.Recorded && rec.Has(a)
		}
		if f.Optional && !o.Recorded {
			continue
		}
		if o.Recorded {
			rep, err := analyse(rec, f, filepath.Join(tmp, p.Truth.Name+"-"+f.Key+".lsb"))
			if err != nil {
				o.Err = err.Error()
			} else {
				score(&o, p.Truth, rep)
			}
		}
		out = append(out, o)
	}
	return out
}

// analyse ingests the form's artifacts, as `leakscope ingest` does, and
// analyses the bundle.
func analyse(rec *Recording, f Form, dir string) (*analysis.Report, error) {
	m := bundle.NewManifest(rec.Program+"-"+f.Key, "corpus")
	for _, name := range f.Artifacts {
		a := rec.artifact(name)
		body, err := os.ReadFile(filepath.Join(rec.Dir, name))
		if err != nil {
			return nil, err
		}
		if _, err := ingest.Reader(dir, name, bytes.NewReader(body), bundle.Artifact{Time: a.At, Size: int64(len(body))}, ingest.Options{Manifest: m}); err != nil {
			return nil, fmt.Errorf("ingest %s: %w", name, err)
		}
	}
	b, err := bundle.Open(dir)
	if err != nil {
		return nil, err
	}
	return analysis.Analyze(b, memory.DefaultAllocator, analysis.Options{})
}

func score(o *Outcome, t blocking.Truth, rep *analysis.Report) {
	blocked := t.BlockedFunctions()
	o.Suspects = len(rep.Suspects)
	for i, s := range rep.Suspects {
		if i == 0 {
			o.Top = fmt.Sprintf("%s@%s(%.0f)", s.Pattern, s.Location, s.Score)
		}
		switch {
		case s.Kind == analysis.KindGoroutine && slices.Contains(blocked, s.Location):
			if o.Rank == 0 {
				o.Rank, o.Pattern = i+1, s.Pattern
			}
		case consequence(t, s) != "":
			if !hasCause(s) {
				o.Unfolded = append(o.Unfolded, consequence(t, s))
			}
		default:
			o.Others = append(o.Others, s.Pattern+"@"+s.Location)
		}
	}
}

// consequence returns the consequence function s stands for, if any: its
// location, or a frame of its stack, is one.
func consequence(t blocking.Truth, s analysis.Suspect) string {
	for _, c := range t.Consequences {
		if s.Location == c.Function {
			return c.Function
		}
		for _, f := range s.Stack {
			if f.Function == c.Function {
				return c.Function
			}
		}
	}
	return ""
}

// hasCause reports whether the suspect is linked to a cause (folded under
// it). The link is read from the JSON contract so that the harness needs
// no change when the field appears.
func hasCause(s analysis.Suspect) bool {
	b, err := json.Marshal(s)
	if err != nil {
		return false
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return false
	}
	c, ok := m["cause"]
	return ok && c != nil && c != ""
}

// RuntimeFound reports whether the runtime's goroutineleak profile in rec
// lists a goroutine whose stack holds one of the blocked functions, and
// how many goroutines it lists in all.
func RuntimeFound(rec *Recording, t blocking.Truth) (found bool, leaked int64, err error) {
	if !rec.Has(LeakProfile) {
		return false, 0, fmt.Errorf("no %s", LeakProfile)
	}
	f, err := os.Open(filepath.Join(rec.Dir, LeakProfile))
	if err != nil {
		return false, 0, err
	}
	defer f.Close()
	prof, err := profile.Parse(f)
	if err != nil {
		return false, 0, err
	}
	blocked := t.BlockedFunctions()
	for _, s := range prof.Sample {
		if len(s.Value) == 0 || s.Value[0] == 0 {
			continue
		}
		leaked += s.Value[0]
		for _, loc := range s.Location {
			for _, l := range loc.Line {
				if l.Function != nil && slices.Contains(blocked, l.Function.Name) {
					found = true
				}
			}
		}
	}
	return found, leaked, nil
}
