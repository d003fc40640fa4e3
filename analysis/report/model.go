package report

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

// figure is an inline SVG image with a caption.
type figure struct {
	svg, caption string
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
		d.blocks = append(d.blocks, figure{svg, caption})
	}
}
