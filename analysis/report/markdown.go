package report

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"strings"

	"github.com/leakscope/leakscope/analysis"
)

// Markdown writes the report (or, with opts.Postmortem, the postmortem)
// as Markdown. Charts and flame graphs are embedded as SVG data URIs, so
// the file stands alone.
func Markdown(w io.Writer, rep *analysis.Report, opts Options) error {
	return writeMarkdown(w, build(rep, opts))
}

func build(rep *analysis.Report, opts Options) *document {
	if opts.Postmortem {
		return buildPostmortem(rep, opts)
	}
	return buildReport(rep, opts)
}

func writeMarkdown(w io.Writer, d *document) error {
	bw := bufio.NewWriter(w)
	for _, b := range d.blocks {
		switch b := b.(type) {
		case heading:
			if b.id != "" {
				fmt.Fprintf(bw, "<a id=\"%s\"></a>\n", b.id)
			}
			fmt.Fprintf(bw, "%s %s\n\n", strings.Repeat("#", b.level), b.text)
		case para:
			fmt.Fprintf(bw, "%s\n\n", b.text)
		case bullets:
			for _, it := range b.items {
				fmt.Fprintf(bw, "- %s\n", it)
			}
			bw.WriteString("\n")
		case table:
			fmt.Fprintf(bw, "| %s |\n|", strings.Join(b.head, " | "))
			for range b.head {
				bw.WriteString("---|")
			}
			bw.WriteString("\n")
			for _, r := range b.rows {
				cells := make([]string, len(r))
				for i, c := range r {
					cells[i] = strings.ReplaceAll(c, "|", "\\|")
				}
				fmt.Fprintf(bw, "| %s |\n", strings.Join(cells, " | "))
			}
			bw.WriteString("\n")
		case codeBlock:
			fmt.Fprintf(bw, "```%s\n%s\n```\n\n", b.lang, b.text)
		case figure:
			fmt.Fprintf(bw, "![%s](data:image/svg+xml;base64,%s)\n\n", b.caption, base64.StdEncoding.EncodeToString([]byte(b.svg)))
		}
	}
	return bw.Flush()
}
