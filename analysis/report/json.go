package report

import (
	"encoding/json"
	"io"

	"github.com/leakscope/leakscope/analysis"
)

// JSON writes the report in the stable JSON form of docs/DESIGN.md
// (indented, one document). Postmortem output has no JSON form of its
// own: the same document carries everything a postmortem is made from.
func JSON(w io.Writer, rep *analysis.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
