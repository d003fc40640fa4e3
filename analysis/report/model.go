package report

import (
	"slices"
	"strings"
)

// A document is built once from a report and written as Markdown or HTML.
// Inline text may use `code` and **bold**; writers translate them.

type block interface{ isBlock() }

type heading struct {
	level int
	text  string
	id    string
}

type para struct{ text string }

type bullets struct{ items []string }

type table struct {
	head []string
	rows [][]string
}

// codeBlock is preformatted text; lang is a Markdown info string.
type codeBlock struct {
	lang, text string
}

// figure is an SVG image with a caption. name is a file-safe name for it
// (a Markdown report may write it beside itself); alt, when set, says
// the same in text (a table or sparklines) for readers without images.
type figure struct {
	svg, caption string
	name         string
	alt          block
}

func (heading) isBlock()   {}
func (para) isBlock()      {}
func (bullets) isBlock()   {}
func (table) isBlock()     {}
func (codeBlock) isBlock() {}
func (figure) isBlock()    {}

type document struct {
	title  string
	blocks []block
}

func (d *document) h(level int, text string) {
	d.blocks = append(d.blocks, heading{level: level, text: text})
}
func (d *document) hid(level int, text, id string) {
	d.blocks = append(d.blocks, heading{level, text, id})
}
func (d *document) p(text string)          { d.blocks = append(d.blocks, para{text}) }
func (d *document) ul(items ...string)     { d.blocks = append(d.blocks, bullets{items}) }
func (d *document) code(lang, text string) { d.blocks = append(d.blocks, codeBlock{lang, text}) }
func (d *document) tbl(head []string, rows [][]string) {
	if len(rows) > 0 {
		d.blocks = append(d.blocks, table{head, rows})
	}
}
func (d *document) fig(svg, caption string) {
	if svg != "" {
		d.blocks = append(d.blocks, figure{svg: svg, caption: caption, name: slug(caption)})
	}
}

// chart adds a line chart of the series with its text alternative.
func (d *document) chart(title, unit, caption string, lines []line) {
	if svg := chartSVG(title, unit, lines); svg != "" {
		d.blocks = append(d.blocks, figure{svg: svg, caption: caption, name: slug(caption), alt: chartAlt(unit, lines)})
	}
}

// slug makes a file-safe lower-case name of s ("G1 over time" gives
// "g1-over-time").
func slug(s string) string {
	var b []byte
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			if dash && len(b) > 0 {
				b = append(b, '-')
			}
			b = append(b, byte(r))
			dash = false
		default:
			dash = true
		}
		if len(b) >= 48 {
			break
		}
	}
	if len(b) == 0 {
		return "figure"
	}
	return string(b)
}

// withoutEmptySections drops headings that head nothing: those followed by
// a heading of the same or a higher level, or by the end.
func withoutEmptySections(blocks []block) []block {
	out := make([]block, 0, len(blocks))
	for i := len(blocks) - 1; i >= 0; i-- {
		if h, ok := blocks[i].(heading); ok && (len(out) == 0 || endsSection(out[len(out)-1], h.level)) {
			continue
		}
		out = append(out, blocks[i])
	}
	slices.Reverse(out)
	return out
}

// endsSection reports whether next, the block after a heading of level,
// starts a new section instead of filling it.
func endsSection(next block, level int) bool {
	h, ok := next.(heading)
	return ok && h.level <= level
}
