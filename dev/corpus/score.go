package corpus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/google/pprof/profile"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
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
	// NoSource is set when the form was ingested with the program's source
	// moved away (only the bundle's frames and the libraries' files left).
	NoSource bool
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
	// PatternRight is set when the top suspect names a blocked function
	// (Rank 1) with the pattern truth.json gives for it.
	PatternRight bool
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
	// Flagged describes, for a control, each suspect with its evidence.
	Flagged []string
	// ProgramSource is how many functions of the program's own source the
	// bundle quotes (source_code rows with status ok under the source
	// copy): none may be quoted without source.
	ProgramSource int
}

// Evaluate ingests each form of rec into its own bundle under tmp,
// analyses it and scores the report against p's truth: once with the
// program's source where it was built, once with it moved away (the
// source copy under rec.Dir is renamed for the second pass, and renamed
// back before Evaluate returns).
func Evaluate(rec *Recording, p blocking.Program, tmp string) ([]Outcome, error) {
	if rec.Source == "" {
		return nil, fmt.Errorf("%s: the recording does not say where its source is", rec.Program)
	}
	src := filepath.Join(rec.Dir, rec.Source)
	away := src + ".away"
	if _, err := os.Stat(away); err == nil { // an interrupted earlier pass
		if err := os.Rename(away, src); err != nil {
			return nil, fmt.Errorf("%s: put the source back: %w", rec.Program, err)
		}
	}
	out := evaluate(rec, p, tmp, false)
	if err := os.Rename(src, away); err != nil {
		return out, fmt.Errorf("%s: move the source away: %w", rec.Program, err)
	}
	out = append(out, evaluate(rec, p, tmp, true)...)
	if err := os.Rename(away, src); err != nil {
		return out, fmt.Errorf("%s: put the source back: %w", rec.Program, err)
	}
	return out, nil
}

// evaluate scores every form of rec, with the source in place or not.
func evaluate(rec *Recording, p blocking.Program, tmp string, noSource bool) []Outcome {
	var out []Outcome
	suffix := ""
	if noSource {
		suffix = "-nosrc"
	}
	for _, f := range Forms {
		if f.TestsOnly && p.Truth.Shape != blocking.ShapeTest {
			continue
		}
		o := Outcome{Program: p.Truth.Name, Form: f.Key, NoSource: noSource, Recorded: true}
		for _, a := range f.Artifacts {
			o.Recorded = o.Recorded && rec.Has(a)
		}
		if f.Optional && !o.Recorded {
			continue
		}
		if o.Recorded {
			dir := filepath.Join(tmp, p.Truth.Name+"-"+f.Key+suffix+".lsb")
			rep, err := analyse(rec, f, dir)
			if err == nil {
				o.ProgramSource, err = quoted(dir, filepath.Join(rec.Dir, rec.Source))
			}
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

// Worst merges the outcomes of several runs into one per program, form and
// source setting, each at its worst over the runs that have it: a bug
// named first (in the top k, with the right pattern, with its
// consequences folded) only if it was in every one of them, a control's
// suspects the most any run saw. A table of the merged outcomes is the
// per-program floor of the runs; a run may cover only some programs.
func Worst(runs ...[]Outcome) []Outcome {
	type key struct {
		program, form string
		noSource      bool
	}
	var out []Outcome
	at := map[key]int{}
	for _, run := range runs {
		for _, o := range run {
			k := key{o.Program, o.Form, o.NoSource}
			i, ok := at[k]
			if !ok {
				at[k] = len(out)
				out = append(out, o)
				continue
			}
			out[i] = worse(out[i], o)
		}
	}
	return out
}

// worse is a merged with b at the worst of each.
func worse(a, b Outcome) Outcome {
	if !b.Recorded || b.Err != "" {
		a.Recorded, a.Err = a.Recorded && b.Recorded, a.Err+b.Err
	}
	if b.Rank == 0 || a.Rank != 0 && b.Rank > a.Rank {
		a.Rank, a.Pattern, a.Top = b.Rank, b.Pattern, b.Top
	}
	a.PatternRight = a.PatternRight && b.PatternRight
	a.Unfolded = append(a.Unfolded, b.Unfolded...)
	a.Others = append(a.Others, b.Others...)
	if b.Suspects > a.Suspects {
		a.Suspects, a.Flagged = b.Suspects, b.Flagged
	}
	a.ProgramSource = max(a.ProgramSource, b.ProgramSource)
	return a
}

// quoted counts the functions under src whose source the bundle in dir
// holds.
func quoted(dir, src string) (int, error) {
	b, err := bundle.Open(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	err = b.ReadTable(schema.TableSourceCode, memory.DefaultAllocator, func(rec arrow.Record) error {
		var file, status func(int) string
		for i, f := range rec.Schema().Fields() {
			switch f.Name {
			case schema.ColFile:
				file = bundle.NewStrings(rec.Column(i)).Value
			case schema.ColStatus:
				status = bundle.NewStrings(rec.Column(i)).Value
			}
		}
		if file == nil || status == nil {
			return fmt.Errorf("%s: source_code lacks its file or status column", dir)
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			if status(r) == schema.SourceOK && strings.HasPrefix(file(r), src+string(filepath.Separator)) {
				n++
			}
		}
		return nil
	})
	return n, bundle.Tolerate(err)
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
				o.PatternRight = i == 0 && s.Pattern == t.PatternOf(s.Location)
			}
		case consequence(t, s) != "":
			if !hasCause(s) {
				o.Unfolded = append(o.Unfolded, consequence(t, s))
			}
		default:
			o.Others = append(o.Others, s.Pattern+"@"+s.Location)
		}
		if t.Healthy {
			o.Flagged = append(o.Flagged, flagged(s))
		}
	}
}

// flagged describes a suspect on a control: pattern, location, state,
// score and each piece of evidence.
func flagged(s analysis.Suspect) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s@%s [%s] ×%d score %.0f", s.Pattern, s.Location, s.State, s.Count, s.Score)
	for _, e := range s.Evidence {
		fmt.Fprintf(&b, "; %s: %s", e.Kind, e.Detail)
	}
	return b.String()
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
