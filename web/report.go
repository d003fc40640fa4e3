package web

import (
	"bytes"
	"fmt"
	"net/http"

	"github.com/leakscope/leakscope/analysis/report"
)

// reportHandler answers GET /api/captures/{id}/report: the leak report as
// JSON (the stable form of `leakscope report --format json`; it carries the
// overview's series, ranked suspects and leak-cause timeline), or with
// format=md|html the rendered report, or with postmortem=1 the postmortem;
// Markdown is text, its charts as tables with sparklines, unless
// images=inline embeds the images too.
// download=1 makes it an attachment.
func reportHandler(w http.ResponseWriter, r *http.Request, c *capture) {
	q := r.URL.Query()
	format := q.Get("format")
	if format == "" {
		format = "json"
	}
	postmortem := isTrue(q.Get("postmortem"))
	images := q.Get("images")
	if images != "" && images != report.ImagesText && images != report.ImagesInline {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("images=%q: a Markdown answer carries its images as text (default) or inline", images))
		return
	}
	var ctype, ext string
	switch format {
	case "json":
		ctype, ext = "application/json; charset=utf-8", "json"
	case "md", "markdown":
		format, ctype, ext = "md", "text/markdown; charset=utf-8", "md"
	case "html":
		ctype, ext = "text/html; charset=utf-8", "html"
	default:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("unknown report format %q (want json, md or html)", format))
		return
	}
	if postmortem && format == "json" {
		// The JSON report carries everything a postmortem is made from.
		postmortem = false
	}
	key := fmt.Sprintf("report %s %v %s", format, postmortem, images)
	body, status := c.answers.get(key, func() ([]byte, int) {
		rep, err := c.Report()
		if err != nil {
			return encodeError(statusOf(err), "analyze capture: "+err.Error())
		}
		var buf bytes.Buffer
		opts := report.Options{Postmortem: postmortem, Bundle: c.b, Mem: c.s.mem, Images: images}
		switch format {
		case "json":
			err = report.JSON(&buf, rep)
		case "md":
			err = report.Markdown(&buf, rep, opts)
		case "html":
			err = report.HTML(&buf, rep, opts)
		}
		if err != nil {
			return encodeError(http.StatusInternalServerError, "render report: "+err.Error())
		}
		return buf.Bytes(), http.StatusOK
	})
	if status != http.StatusOK {
		writeBody(w, status, body)
		return
	}
	if isTrue(q.Get("download")) {
		name := "report"
		if postmortem {
			name = "postmortem"
		}
		w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", c.id+"-"+name+"."+ext))
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "no-store")
	if format == "html" {
		// The rendered report is self-contained: no scripts at all.
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
	}
	w.Write(body)
}

func isTrue(s string) bool {
	switch s {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}
