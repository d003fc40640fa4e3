package report

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/leakscope/leakscope/analysis"
)

// HTML writes the report (or, with opts.Postmortem, the postmortem) as one
// self-contained HTML page: inline CSS, inline SVG charts and flame graphs,
// no scripts and no external resources.
func HTML(w io.Writer, rep *analysis.Report, opts Options) error {
	d := build(rep, opts)
	d.blocks = withoutEmptySections(d.blocks)
	return writeHTML(w, d)
}

const css = `body{font:14px/1.45 -apple-system,"Segoe UI",Helvetica,Arial,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#1b1b1b}
h1{font-size:1.7em;border-bottom:2px solid #d62728;padding-bottom:.2em}h2{margin-top:1.8em;border-bottom:1px solid #ddd}h3{margin-top:1.5em}
div.table{overflow-x:auto;max-width:100%}table{border-collapse:collapse;margin:.6em 0;font-size:13px}td code{overflow-wrap:anywhere}th,td{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}th{background:#f4f4f4}
code{background:#f3f3f3;padding:0 3px;border-radius:3px;font-size:12.5px}pre{background:#f7f7f7;border:1px solid #e3e3e3;padding:8px;overflow-x:auto;font-size:12px}
figure{margin:1em 0}figcaption{color:#666;font-size:12px}svg{max-width:100%;height:auto}`

var (
	reCode = regexp.MustCompile("`([^`]+)`")
	reSlot = regexp.MustCompile(string(slotMark) + "[0-9]+" + string(slotMark))
	reBold = regexp.MustCompile(`\*\*([^*]+)\*\*`)
	// reLink matches the report's own links to its sections, [G1](#g1);
	// no other link is written, so no other is made.
	reLink = regexp.MustCompile(`\[([A-Za-z0-9]+)\]\(#([a-z0-9-]+)\)`)
	// reEm matches *em* only at word boundaries, as Markdown does, so the
	// asterisks of Go names such as main.(*T).f are left alone.
	reEm = regexp.MustCompile(`(^|\s)\*([^*\s](?:[^*]*[^*\s])?)\*($|[\s.,;:!?)])`)
)

// inline escapes markup the report wrote and turns `code`, **bold** and
// *em* into tags. Code spans are literal. Text from the input reaches it
// only through htmlInline, cleaned.
func inline(s string) string {
	// Set code spans aside first so nothing inside them is taken for a
	// mark, then mark up the rest and put them back.
	var codes []string
	s = reCode.ReplaceAllStringFunc(s, func(m string) string {
		codes = append(codes, "<code>"+html.EscapeString(m[1:len(m)-1])+"</code>")
		return fmt.Sprintf("%c%d%c", slotMark, len(codes)-1, slotMark)
	})
	s = reBold.ReplaceAllString(html.EscapeString(s), "<strong>$1</strong>")
	s = reLink.ReplaceAllString(s, `<a href="#$2">$1</a>`)
	s = reEm.ReplaceAllString(s, "$1<em>$2</em>$3")
	return reSlot.ReplaceAllStringFunc(s, func(m string) string {
		n, _ := strconv.Atoi(strings.Trim(m, string(slotMark)))
		return codes[n]
	})
}

func writeHTML(w io.Writer, d *document) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title><style>%s</style></head><body>\n", html.EscapeString(plain(d.title)), css)
	for _, b := range d.blocks {
		switch b := b.(type) {
		case heading:
			id := ""
			if b.id != "" {
				id = fmt.Sprintf(" id=\"%s\"", html.EscapeString(clean(b.id)))
			}
			fmt.Fprintf(bw, "<h%d%s>%s</h%d>\n", b.level, id, htmlInline(b.text), b.level)
		case para:
			fmt.Fprintf(bw, "<p>%s</p>\n", htmlInline(b.text))
		case bullets:
			bw.WriteString("<ul>\n")
			for _, it := range b.items {
				fmt.Fprintf(bw, "<li>%s</li>\n", htmlInline(it))
			}
			bw.WriteString("</ul>\n")
		case table:
			bw.WriteString("<div class=\"table\"><table><tr>")
			for _, h := range b.head {
				fmt.Fprintf(bw, "<th>%s</th>", htmlInline(h))
			}
			bw.WriteString("</tr>\n")
			for _, r := range b.rows {
				bw.WriteString("<tr>")
				for _, c := range r {
					fmt.Fprintf(bw, "<td>%s</td>", htmlInline(c))
				}
				bw.WriteString("</tr>\n")
			}
			bw.WriteString("</table></div>\n")
		case codeBlock:
			fmt.Fprintf(bw, "<pre><code>%s</code></pre>\n", html.EscapeString(cleanBlock(b.text)))
		case figure:
			fmt.Fprintf(bw, "<figure>%s<figcaption>%s</figcaption></figure>\n", stripXMLDecl(b.svg), htmlInline(b.caption))
		}
	}
	bw.WriteString("</body></html>\n")
	return bw.Flush()
}

// stripXMLDecl removes an XML declaration or doctype before inlining SVG
// in HTML.
func stripXMLDecl(svg string) string {
	if i := strings.Index(svg, "<svg"); i > 0 {
		return svg[i:]
	}
	return svg
}
