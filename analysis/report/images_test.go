package report_test

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/analysis/report"
)

var (
	mdHeading = regexp.MustCompile(`(?m)^(#{1,6}) `)
	mdImage   = regexp.MustCompile(`!\[[^\]]*\]\(([^)]+)\)`)
)

// TestMarkdownImages: Markdown is text by default (no image at all, charts
// as sparkline tables), images go to files beside it or inline only when
// asked, and no heading is left empty in any form.
func TestMarkdownImages(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	b := leakBundle(t, mem)
	rep, err := analysis.Analyze(b, mem, analysis.Options{Rules: analysis.DefaultRules()})
	if err != nil {
		t.Fatal(err)
	}
	for _, pm := range []bool{false, true} {
		render := func(o report.Options) string {
			t.Helper()
			o.Postmortem, o.Bundle, o.Mem = pm, b, mem
			var buf bytes.Buffer
			if err := report.Markdown(&buf, rep, o); err != nil {
				t.Fatal(err)
			}
			return buf.String()
		}
		text := render(report.Options{})
		if imgs := mdImage.FindAllString(text, -1); len(imgs) > 0 || strings.Contains(text, "base64") {
			t.Errorf("postmortem=%v: text Markdown holds images: %v", pm, imgs)
		}
		if !strings.Contains(text, "`▁▃▅▆█`") {
			t.Errorf("postmortem=%v: no sparkline of the growing series", pm)
		}
		noEmptyHeadings(t, text)

		files := map[string][]byte{}
		linked := render(report.Options{Images: report.ImagesFiles, ImageFile: func(name string, svg []byte) (string, error) {
			if _, dup := files[name]; dup {
				t.Errorf("image name %s used twice", name)
			}
			files[name] = svg
			return "pm-" + name + ".svg", nil
		}})
		links := mdImage.FindAllStringSubmatch(linked, -1)
		if len(links) == 0 || len(links) != len(files) {
			t.Fatalf("postmortem=%v: %d image links for %d files", pm, len(links), len(files))
		}
		for _, l := range links {
			name := strings.TrimSuffix(strings.TrimPrefix(l[1], "pm-"), ".svg")
			if svg, ok := files[name]; !ok || !bytes.HasPrefix(svg, []byte("<svg")) {
				t.Errorf("link %s names no SVG written", l[1])
			}
		}
		if strings.Contains(linked, "base64") {
			t.Errorf("postmortem=%v: images as files are also inlined", pm)
		}
		if !strings.Contains(linked, strings.Split(strings.SplitN(text, "| series |", 2)[1], "\n")[0]) {
			t.Errorf("postmortem=%v: the text form is missing beside the files", pm)
		}
		noEmptyHeadings(t, linked)

		inline := render(report.Options{Images: report.ImagesInline})
		if n := strings.Count(inline, "](data:image/svg+xml;base64,"); n != len(files) {
			t.Errorf("postmortem=%v: %d inline images, want %d", pm, n, len(files))
		}
	}
	var buf bytes.Buffer
	if err := report.Markdown(&buf, rep, report.Options{Images: "gif"}); err == nil {
		t.Error("unknown image mode accepted")
	}
	if err := report.Markdown(&buf, rep, report.Options{Images: report.ImagesFiles}); err == nil {
		t.Error("images as files without a writer accepted")
	}
	fail := errors.New("disk full")
	err = report.Markdown(&buf, rep, report.Options{Images: report.ImagesFiles, ImageFile: func(string, []byte) (string, error) { return "", fail }})
	if !errors.Is(err, fail) {
		t.Errorf("a failed image write: %v", err)
	}
}

// TestNoEmptyHeadings: a report of a bundle with nothing in it has no
// heading without content, in Markdown or HTML.
func TestNoEmptyHeadings(t *testing.T) {
	rep := &analysis.Report{}
	for _, pm := range []bool{false, true} {
		var md, h bytes.Buffer
		if err := report.Markdown(&md, rep, report.Options{Postmortem: pm}); err != nil {
			t.Fatal(err)
		}
		noEmptyHeadings(t, md.String())
		if err := report.HTML(&h, rep, report.Options{Postmortem: pm}); err != nil {
			t.Fatal(err)
		}
		if regexp.MustCompile(`</h[1-6]>\s*<h[1-6]`).MatchString(h.String()) && !deeperFollows(h.String()) {
			t.Errorf("postmortem=%v: HTML has an empty heading:\n%s", pm, h.String())
		}
	}
}

// noEmptyHeadings fails on a heading followed by another of the same or a
// higher level (or by the end) with nothing between.
func noEmptyHeadings(t *testing.T, md string) {
	t.Helper()
	lines := strings.Split(md, "\n")
	type hd struct {
		level int
		text  string
		body  bool
	}
	var open []hd
	check := func(level int) {
		for len(open) > 0 && open[len(open)-1].level >= level {
			if h := open[len(open)-1]; !h.body {
				t.Errorf("empty heading %q", h.text)
			}
			open = open[:len(open)-1]
		}
	}
	for _, l := range lines {
		if m := mdHeading.FindStringSubmatch(l); m != nil {
			check(len(m[1]))
			for i := range open {
				open[i].body = true // a subsection fills its parents
			}
			open = append(open, hd{level: len(m[1]), text: l})
			continue
		}
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "<a id=") && len(open) > 0 {
			open[len(open)-1].body = true
		}
	}
	check(1)
}

// deeperFollows reports whether every heading directly followed by a
// heading is followed by a deeper one (a section with subsections).
func deeperFollows(h string) bool {
	re := regexp.MustCompile(`</h([1-6])>\s*<h([1-6])`)
	for _, m := range re.FindAllStringSubmatch(h, -1) {
		if m[2] <= m[1] {
			return false
		}
	}
	return true
}
