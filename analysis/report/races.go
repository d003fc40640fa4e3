package report

import (
	"fmt"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/internal/format"
)

// maxRaces is how many race reports a report shows in full.
const maxRaces = 10

// raceSection lists the race detector's reports: for each, where each
// access happened and which goroutine made it.
func raceSection(d *document, rep *analysis.Report, level int) {
	if len(rep.Races) == 0 {
		return
	}
	d.h(level, "Data races")
	d.p(fmt.Sprintf("The race detector reported %s. A race is not a leak, but it can corrupt the state a goroutine waits on.", format.Count(len(rep.Races), "data race")))
	for i, r := range rep.Races {
		if i == maxRaces {
			d.p(fmt.Sprintf("%d more in the JSON report.", len(rep.Races)-i))
			break
		}
		var items []string
		for _, a := range r.Accesses {
			it := fmt.Sprintf("**%s** at %s by goroutine %d in %s (%s)", lit(a.Access), code(a.Addr), a.Goid, code(a.Function), fileLit(a.File, a.Line))
			if a.CreatedBy != nil {
				it += fmt.Sprintf(", created by %s (%s)", code(a.CreatedBy.Function), fileLit(a.CreatedBy.File, a.CreatedBy.Line))
			}
			if a.State != "" {
				it += ", " + lit(a.State)
			}
			items = append(items, it)
		}
		head := fmt.Sprintf("Race %d of %s", r.Number, lit(r.Source))
		if r.Location != "" {
			head += ": " + lit(r.Location)
		}
		d.p(head)
		d.ul(items...)
	}
}
