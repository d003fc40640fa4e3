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
// as Markdown: text only by default, charts as tables with sparklines;
// opts.Images adds the images as files beside it or inline.
func Markdown(w io.Writer, rep *analysis.Report, opts Options) error {
	if !ValidImages(opts.Images) {
		return fmt.Errorf("markdown: unknown image mode %q (want %s, %s or %s)", opts.Images, ImagesText, ImagesFiles, ImagesInline)
	}
	if opts.Images == ImagesFiles && opts.ImageFile == nil {
		return fmt.Errorf("markdown: images as files need a place to write them (Options.ImageFile)")
	}
	d := build(rep, opts)
	blocks, err := markdownBlocks(d.blocks, opts)
	if err != nil {
		return err
	}
	d.blocks = blocks
	return writeMarkdown(w, d)
}

// markdownBlocks resolves the figures for Markdown: their text form, and
// the image itself as a file link or inline as the mode says; then drops
// the sections left empty.
func markdownBlocks(blocks []block, opts Options) ([]block, error) {
	out := make([]block, 0, len(blocks))
	used := map[string]int{}
	for _, b := range blocks {
		f, ok := b.(figure)
		if !ok {
			out = append(out, b)
			continue
		}
		switch opts.Images {
		case ImagesFiles:
			name := f.name
			if used[name]++; used[name] > 1 {
				name = fmt.Sprintf("%s-%d", name, used[name])
			}
			link, err := opts.ImageFile(name, []byte(f.svg))
			if err != nil {
				return nil, fmt.Errorf("write image %s: %w", name, err)
			}
			out = append(out, imageLink{caption: f.caption, link: link})
		case ImagesInline:
			out = append(out, imageLink{caption: f.caption, link: "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(f.svg))})
		}
		if f.alt != nil {
			out = append(out, f.alt)
		}
	}
	return withoutEmptySections(out), nil
}

// imageLink is a Markdown image: ![caption](link).
type imageLink struct{ caption, link string }

func (imageLink) isBlock() {}

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
		case imageLink:
			fmt.Fprintf(bw, "![%s](%s)\n\n", mdInline(b.caption), b.link)
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
