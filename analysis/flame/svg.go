package flame

import (
	"bufio"
	"fmt"
	"github.com/leakscope/leakscope/internal/format"
	"hash/fnv"
	"html"
	"io"
	"strings"
	"unicode/utf8"
)

// SVGOptions tune [SVG]. Zero fields take the defaults.
type SVGOptions struct {
	// Width of the image in pixels (default 1200).
	Width int
	// RowHeight of one frame in pixels (default 16).
	RowHeight int
	// FontSize of labels in pixels (default 11).
	FontSize int
	// MinWidth in pixels: narrower frames and their subtrees are not drawn
	// (default 0.3).
	MinWidth float64
	// Title drawn at the top (default: profile, value and total).
	Title string
	// Widths lays out a diff tree: [WidthNew] (default) by the new
	// snapshot, [WidthBase] by the base, [WidthChange] by the size of the
	// change (growth and shrink both count), as Pyroscope's diff does.
	Widths string
}

// Widths of a diff flame graph (SVGOptions.Widths, the workbench's
// widths parameter).
const (
	WidthNew    = "new"
	WidthBase   = "base"
	WidthChange = "change"
)

// ValidWidths reports whether w names a diff layout ("" is WidthNew).
func ValidWidths(w string) bool {
	return w == "" || w == WidthNew || w == WidthBase || w == WidthChange
}

func (o *SVGOptions) defaults(t *Tree) {
	if o.Width <= 0 {
		o.Width = 1200
	}
	if o.RowHeight <= 0 {
		o.RowHeight = 16
	}
	if o.FontSize <= 0 {
		o.FontSize = 11
	}
	if o.MinWidth <= 0 {
		o.MinWidth = 0.3
	}
	if o.Widths == "" {
		o.Widths = WidthNew
	}
	if o.Title == "" {
		o.Title = fmt.Sprintf("%s %s: %s", t.Profile, t.Value, format.Value(t.Root.Total, t.Unit))
		if t.Diff() {
			o.Title += " change since base (red grew, blue shrank; widths by " + map[string]string{WidthNew: "the new snapshot", WidthBase: "the base", WidthChange: "the change"}[o.Widths] + ")"
		}
	}
}

const (
	svgPad    = 10
	svgHeader = 28
)

// SVG draws t as a static flame graph (no script): one rectangle per node,
// width proportional to its value (the new total in a diff tree), labels
// cut to fit, colour by package (in a diff tree: red grew, blue shrank;
// the capture's own machinery grey), and
// a <title> on each frame that browsers show on hover. Roots are at the
// bottom; an inverted tree is drawn top down (an icicle).
func SVG(t *Tree, w io.Writer, opts SVGOptions) error {
	if t == nil || t.Root == nil {
		return fmt.Errorf("draw flame graph: empty tree")
	}
	opts.defaults(t)
	if !ValidWidths(opts.Widths) {
		return fmt.Errorf("draw flame graph: unknown widths %q (want %s, %s or %s)", opts.Widths, WidthNew, WidthBase, WidthChange)
	}
	width := func(n *Node) int64 { return layoutWidth(t, n, opts.Widths) }
	depth := maxDepth(t.Root, width, opts, float64(opts.Width-2*svgPad)/float64(max(1, width(t.Root))), 0)
	height := svgHeader + (depth+1)*opts.RowHeight + 2*svgPad
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">`+"\n",
		opts.Width, height, opts.Width, height)
	fmt.Fprintf(bw, `<style>text{font-family:monospace;font-size:%dpx;fill:#000}g text{pointer-events:none}g:hover rect{stroke:#000;stroke-width:0.5}</style>`+"\n", opts.FontSize)
	fmt.Fprintf(bw, `<rect width="100%%" height="100%%" fill="#fdfdf6"/>`+"\n")
	fmt.Fprintf(bw, `<text x="%d" y="%d" font-size="%d">%s</text>`+"\n", svgPad, svgPad+opts.FontSize+4, opts.FontSize+3, XMLText(opts.Title))
	d := svgDrawer{t: t, w: bw, o: opts, depth: depth, maxDelta: maxAbsDelta(t.Root), width: width}
	d.scale = float64(opts.Width-2*svgPad) / float64(max(1, width(t.Root)))
	d.node(t.Root, svgPad, 0)
	fmt.Fprintln(bw, "</svg>")
	return bw.Flush()
}

// layoutWidth is the layout value of a node, never negative: its total,
// and in a diff tree the new total, the base's or the size of the change.
func layoutWidth(t *Tree, n *Node, widths string) int64 {
	v := n.Total
	if t.Diff() {
		switch widths {
		case WidthBase:
			v = n.BaseTotal
		case WidthChange:
			v = n.AbsDelta
		default:
			v += n.BaseTotal
		}
	}
	return max(0, v)
}

func maxDepth(n *Node, width func(*Node) int64, o SVGOptions, scale float64, d int) int {
	m := d
	for _, c := range n.Children {
		if float64(width(c))*scale >= o.MinWidth {
			m = max(m, maxDepth(c, width, o, scale, d+1))
		}
	}
	return m
}

func maxAbsDelta(n *Node) int64 {
	m := abs(n.Total)
	for _, c := range n.Children {
		m = max(m, maxAbsDelta(c))
	}
	return m
}

type svgDrawer struct {
	t        *Tree
	w        *bufio.Writer
	o        SVGOptions
	depth    int
	scale    float64
	maxDelta int64
	width    func(*Node) int64
}

func (d *svgDrawer) node(n *Node, x float64, level int) {
	wd := float64(d.width(n)) * d.scale
	if wd < d.o.MinWidth {
		return
	}
	row := level
	if !d.t.Inverted {
		row = d.depth - level
	}
	y := svgHeader + svgPad + row*d.o.RowHeight
	total := d.width(d.root())
	pct := 0.0
	if total > 0 {
		pct = 100 * float64(d.width(n)) / float64(total)
	}
	title := n.Name
	if n.File != "" {
		title += fmt.Sprintf("\n%s:%d", n.File, n.Line)
	}
	u := d.t.Unit
	if d.t.Diff() {
		title += fmt.Sprintf("\nnow %s, base %s, change %s (%.2f%% of the width), self change %s",
			format.Value(n.Total+n.BaseTotal, u), format.Value(n.BaseTotal, u), format.Value(n.Total, u), pct, format.Value(n.Self, u))
	} else {
		title += fmt.Sprintf("\ntotal %s (%.2f%%), self %s", format.Value(n.Total, u), pct, format.Value(n.Self, u))
	}
	if n.Own {
		title += "\n" + OwnDescription
	}
	fmt.Fprintf(d.w, `<g><title>%s</title><rect x="%.2f" y="%d" width="%.2f" height="%d" rx="2" fill="%s"/>`,
		XMLText(title), x, y, wd, d.o.RowHeight-1, d.colour(n))
	if label := fit(n.Name, wd-6, float64(d.o.FontSize)*0.6); label != "" {
		fmt.Fprintf(d.w, `<text x="%.2f" y="%d">%s</text>`, x+3, y+d.o.RowHeight-4, XMLText(label))
	}
	fmt.Fprintln(d.w, "</g>")
	cx := x
	for _, c := range n.Children {
		d.node(c, cx, level+1)
		cx += float64(d.width(c)) * d.scale
	}
}

// root returns the tree's root (the percentage base).
func (d *svgDrawer) root() *Node { return d.t.Root }

// fit cuts s to what fits in px pixels at charW pixels per character.
func fit(s string, px, charW float64) string {
	n := int(px / charW)
	r := []rune(s)
	switch {
	case n < 3:
		return ""
	case len(r) <= n:
		return s
	}
	return string(r[:n-2]) + ".."
}

func (d *svgDrawer) colour(n *Node) string {
	if n == d.t.Root {
		return "rgb(210,210,210)"
	}
	if n.Own {
		return "rgb(190,190,180)" // the capture's own machinery: drawn apart, in grey
	}
	if d.t.Diff() {
		if d.maxDelta == 0 || n.Total == 0 {
			return "rgb(235,235,235)"
		}
		i := int(200 * float64(abs(n.Total)) / float64(d.maxDelta))
		if n.Total > 0 {
			return fmt.Sprintf("rgb(255,%d,%d)", 235-i, 235-i)
		}
		return fmt.Sprintf("rgb(%d,%d,255)", 235-i, 235-i)
	}
	// Warm palette, one colour per package.
	h := fnv.New32a()
	h.Write([]byte(PackageOf(n.Name)))
	v := h.Sum32()
	r := 205 + int(v%50)
	g := 80 + int((v>>8)%150)
	b := 40 + int((v>>16)%50)
	return fmt.Sprintf("rgb(%d,%d,%d)", r, g, b)
}

// XMLText escapes s for the text of an SVG (XML) element: markup
// characters become entities, and characters XML does not allow at all
// (NUL and other controls, invalid UTF-8), which a function name from a
// hostile input may hold, become visible escapes such as \x00.
func XMLText(s string) string {
	clean := utf8.ValidString(s)
	for _, r := range s {
		if !xmlRune(r) {
			clean = false
			break
		}
	}
	if clean {
		return html.EscapeString(s)
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !xmlRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return html.EscapeString(b.String())
}

// xmlRune reports whether XML 1.0 allows r in text.
func xmlRune(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || (r >= 0x20 && r != 0x7f && r != 0xfffe && r != 0xffff)
}
