package corpus

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/leakscope/leakscope/samples/blocking"
)

// Ratio is n out of of.
type Ratio struct{ N, Of int }

func (r Ratio) String() string { return fmt.Sprintf("%d/%d", r.N, r.Of) }

// Row is one line of the accuracy table: one input form over the corpus.
type Row struct {
	Form  string // Form.Key, or RuntimeRow
	Label string
	// Measure is what was measured with the program's source in place.
	Measure
	// TopK counts bugs named within the first TopK suspects; Global the
	// First of the bugs whose blocked object is reachable from a global.
	InTopK, Global Ratio
	// Folded counts, among bugs named in the top k that have consequences,
	// those whose consequences are not suspects of their own.
	Folded Ratio
	// NoSource is Measure again with the program's source moved away
	// before ingest.
	NoSource Measure
}

// Measure is the part of a row measured both with and without source.
type Measure struct {
	// First counts bugs whose top suspect names a blocked function;
	// Pattern those of them whose top suspect has the pattern truth.json
	// gives.
	First, Pattern Ratio
	// Controls counts controls with at least one suspect; Suspects is the
	// number of those suspects.
	Controls Ratio
	Suspects int
}

// RuntimeRow is the key of the row for the runtime's own goroutineleak
// profile (what the runtime found, without leakscope).
const RuntimeRow = "runtime-profile"

// Table aggregates outcomes into one row per form, plus the runtime's own
// profile (runtime: program → found, leaked count).
func Table(progs []blocking.Program, outcomes []Outcome, runtime map[string]RuntimeResult) []Row {
	truth := map[string]blocking.Truth{}
	for _, p := range progs {
		truth[p.Truth.Name] = p.Truth
	}
	var rows []Row
	for _, f := range Forms {
		row := Row{Form: f.Key, Label: f.Label}
		for _, o := range outcomes {
			if t, ok := truth[o.Program]; ok && o.Form == f.Key {
				row.add(t, o)
			}
		}
		rows = append(rows, row)
	}
	return append(rows, runtimeRow(progs, runtime))
}

// add counts one outcome into the row: the no-source columns for a
// no-source outcome, all the others for one with source.
func (row *Row) add(t blocking.Truth, o Outcome) {
	m := &row.Measure
	if o.NoSource {
		m = &row.NoSource
	}
	if t.Healthy {
		m.Controls.Of++
		if o.Suspects > 0 || o.Err != "" || !o.Recorded { // an input leakscope cannot read vouches for nothing
			m.Controls.N++
			m.Suspects += o.Suspects
		}
		return
	}
	m.First.Of++
	m.Pattern.Of++
	if o.Rank == 1 {
		m.First.N++
	}
	if o.PatternRight {
		m.Pattern.N++
	}
	if o.NoSource {
		return
	}
	row.InTopK.Of++
	if t.Global {
		row.Global.Of++
		if o.Rank == 1 {
			row.Global.N++
		}
	}
	if o.Rank >= 1 && o.Rank <= TopK {
		row.InTopK.N++
		if len(t.Consequences) > 0 {
			row.Folded.Of++
			if len(o.Unfolded) == 0 {
				row.Folded.N++
			}
		}
	}
}

// runtimeRow is what the runtime's goroutineleak profile itself found. It
// names no pattern, and the source does not change it.
func runtimeRow(progs []blocking.Program, runtime map[string]RuntimeResult) Row {
	rt := Row{Form: RuntimeRow, Label: "the runtime's goroutineleak profile itself (no leakscope)"}
	for _, p := range progs {
		r, ok := runtime[p.Truth.Name]
		if !ok {
			continue
		}
		if p.Truth.Healthy {
			rt.Controls.Of++
			if r.Leaked > 0 {
				rt.Controls.N++
				rt.Suspects += int(r.Leaked)
			}
			continue
		}
		rt.First.Of++
		rt.InTopK.Of++
		if p.Truth.Global {
			rt.Global.Of++
		}
		if r.Found {
			rt.First.N++
			rt.InTopK.N++
			if p.Truth.Global {
				rt.Global.N++
			}
		}
	}
	rt.NoSource = Measure{First: rt.First, Controls: rt.Controls, Suspects: rt.Suspects}
	return rt
}

// Floor returns, form by form, the worst of runs in every cell: the fewest
// bugs named (first, with the right pattern, in the top k, global,
// folded; with and without source) and the most controls flagged and
// suspects on them. Rows are matched by form; a form missing from a run
// is left as the others have it.
func Floor(runs ...[]Row) []Row {
	if len(runs) == 0 {
		return nil
	}
	out := append([]Row(nil), runs[0]...)
	for _, run := range runs[1:] {
		for _, r := range run {
			for i := range out {
				if out[i].Form == r.Form {
					out[i].worst(r)
				}
			}
		}
	}
	return out
}

func (row *Row) worst(r Row) {
	row.Measure.worst(r.Measure)
	row.NoSource.worst(r.NoSource)
	for _, x := range []struct{ dst, src *Ratio }{{&row.InTopK, &r.InTopK}, {&row.Global, &r.Global}, {&row.Folded, &r.Folded}} {
		if x.src.N < x.dst.N {
			*x.dst = *x.src
		}
	}
}

func (m *Measure) worst(r Measure) {
	if r.First.N < m.First.N {
		m.First = r.First
	}
	if r.Pattern.N < m.Pattern.N {
		m.Pattern = r.Pattern
	}
	if r.Controls.N > m.Controls.N {
		m.Controls = r.Controls
	}
	m.Suspects = max(m.Suspects, r.Suspects)
}

// RuntimeResult is what the runtime's goroutineleak profile said of one
// program.
type RuntimeResult struct {
	Found  bool
	Leaked int64
}

// Begin and End mark the generated table in the README.
const (
	Begin = "<!-- corpus-accuracy:begin (generated by LEAKSCOPE_CORPUS_UPDATE=1 make accuracy; checked by internal/corpus TestCorpusAccuracy) -->"
	End   = "<!-- corpus-accuracy:end -->"
)

var header = []string{"input", "bugs named first", "pattern right", "named in top " + strconv.Itoa(TopK), "global-object bugs named first", "consequences folded", "controls with a suspect (suspects)",
	"no source: named first", "no source: pattern right", "no source: controls with a suspect (suspects)"}

// Markdown renders rows as the README's table.
func Markdown(rows []Row) string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(header, " | ") + " |\n")
	b.WriteString(strings.Repeat("|---", len(header)) + "|\n")
	for _, r := range rows {
		folded := r.Folded.String()
		fmt.Fprintf(&b, "| `%s` %s | %s | %s | %s | %s | %s | %s (%d) | %s | %s | %s (%d) |\n", r.Form, r.Label, r.First, r.Pattern, r.InTopK, r.Global, folded, r.Controls, r.Suspects,
			r.NoSource.First, r.NoSource.Pattern, r.NoSource.Controls, r.NoSource.Suspects)
	}
	return b.String()
}

var (
	rowKey = regexp.MustCompile("^`([a-z-]+)`")
	ratio  = regexp.MustCompile(`^(\d+)/(\d+)(?: \((\d+)\))?$`)
)

// ParseClaims reads the rows of the generated table out of a README.
func ParseClaims(readme string) ([]Row, error) {
	i, j := strings.Index(readme, Begin), strings.Index(readme, End)
	if i < 0 || j < i {
		return nil, errors.New("README has no corpus accuracy table between its markers")
	}
	var rows []Row
	for _, line := range strings.Split(readme[i+len(Begin):j], "\n") {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) != len(header) {
			continue
		}
		m := rowKey.FindStringSubmatch(strings.TrimSpace(cells[0]))
		if m == nil {
			continue
		}
		r := Row{Form: m[1]}
		dst := []*Ratio{&r.First, &r.Pattern, &r.InTopK, &r.Global, &r.Folded, &r.Controls, &r.NoSource.First, &r.NoSource.Pattern, &r.NoSource.Controls}
		suspects := map[int]*int{5: &r.Suspects, 8: &r.NoSource.Suspects}
		for k, c := range cells[1:] {
			v := ratio.FindStringSubmatch(strings.TrimSpace(c))
			if v == nil {
				return nil, fmt.Errorf("README accuracy row %s: cell %q is not n/N", r.Form, c)
			}
			dst[k].N, _ = strconv.Atoi(v[1])
			dst[k].Of, _ = strconv.Atoi(v[2])
			if n := suspects[k]; n != nil && v[3] != "" {
				*n, _ = strconv.Atoi(v[3])
			}
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil, errors.New("README corpus accuracy table has no rows")
	}
	return rows, nil
}

// Compare returns one line per way measured falls short of claimed: fewer
// bugs named, more controls flagged, or a different corpus (denominators).
func Compare(claimed, measured []Row) []string {
	byForm := map[string]Row{}
	for _, r := range measured {
		byForm[r.Form] = r
	}
	var out []string
	for _, c := range claimed {
		m, ok := byForm[c.Form]
		if !ok {
			out = append(out, fmt.Sprintf("%s: claimed in the README but not measured", c.Form))
			continue
		}
		for _, x := range []struct {
			what   string
			c, m   Ratio
			higher bool
		}{
			{"bugs named first", c.First, m.First, true},
			{"pattern right", c.Pattern, m.Pattern, true},
			{"named in top k", c.InTopK, m.InTopK, true},
			{"global-object bugs named first", c.Global, m.Global, true},
			{"consequences folded", c.Folded, m.Folded, true},
			{"controls with a suspect", c.Controls, m.Controls, false},
			{"no source: bugs named first", c.NoSource.First, m.NoSource.First, true},
			{"no source: pattern right", c.NoSource.Pattern, m.NoSource.Pattern, true},
			{"no source: controls with a suspect", c.NoSource.Controls, m.NoSource.Controls, false},
		} {
			switch {
			case x.what != "consequences folded" && x.c.Of != x.m.Of:
				out = append(out, fmt.Sprintf("%s: %s measured over %d programs, the README says %d (run LEAKSCOPE_CORPUS_UPDATE=1 make accuracy)", c.Form, x.what, x.m.Of, x.c.Of))
			case x.higher && x.m.N < x.c.N:
				out = append(out, fmt.Sprintf("%s: %s %s, below the README's %s", c.Form, x.what, x.m, x.c))
			case !x.higher && x.m.N > x.c.N:
				out = append(out, fmt.Sprintf("%s: %s %s, above the README's %s", c.Form, x.what, x.m, x.c))
			}
		}
		if m.Suspects > c.Suspects {
			out = append(out, fmt.Sprintf("%s: %d suspects on controls, above the README's %d", c.Form, m.Suspects, c.Suspects))
		}
		if m.NoSource.Suspects > c.NoSource.Suspects {
			out = append(out, fmt.Sprintf("%s: %d suspects on controls without source, above the README's %d", c.Form, m.NoSource.Suspects, c.NoSource.Suspects))
		}
	}
	return out
}

// Replace returns readme with the generated table replaced by table.
func Replace(readme, table string) (string, error) {
	i, j := strings.Index(readme, Begin), strings.Index(readme, End)
	if i < 0 || j < i {
		return "", errors.New("README has no corpus accuracy table markers")
	}
	return readme[:i+len(Begin)] + "\n" + table + readme[j:], nil
}
