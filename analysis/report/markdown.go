package report

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"html"
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
				fmt.Fprintf(bw, "<a id=\"%s\"></a>\n", html.EscapeString(clean(b.id)))
			}
			fmt.Fprintf(bw, "%s %s\n\n", strings.Repeat("#", b.level), mdInline(b.text))
		case para:
			fmt.Fprintf(bw, "%s\n\n", mdInline(b.text))
		case bullets:
			for _, it := range b.items {
				fmt.Fprintf(bw, "- %s\n", mdInline(it))
			}
			bw.WriteString("\n")
		case table:
			fmt.Fprintf(bw, "| %s |\n|", strings.Join(mdCells(b.head), " | "))
			for range b.head {
				bw.WriteString("---|")
			}
			bw.WriteString("\n")
			for _, r := range b.rows {
				fmt.Fprintf(bw, "| %s |\n", strings.Join(mdCells(r), " | "))
			}
			bw.WriteString("\n")
		case codeBlock:
			text := cleanBlock(b.text)
			fence := mdFence(text)
			fmt.Fprintf(bw, "%s%s\n%s\n%s\n\n", fence, clean(b.lang), text, fence)
		case figure:
			fmt.Fprintf(bw, "![%s](data:image/svg+xml;base64,%s)\n\n", mdInline(b.caption), base64.StdEncoding.EncodeToString([]byte(b.svg)))
		}
	}
	return bw.Flush()
}

// mdCells renders table cells; a pipe would end a cell, even in code.
func mdCells(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = strings.ReplaceAll(mdInline(c), "|", "\\|")
	}
	return out
}
