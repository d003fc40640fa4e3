package report

import (
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// Options tunes rendering. The zero value renders a leak report without
// flame graphs.
type Options struct {
	// Postmortem writes the postmortem shape instead of the report.
	Postmortem bool
	// Bundle, when set, is read for flame graphs of the top suspects.
	Bundle *bundle.Bundle
	// Mem allocates while reading the bundle (nil: the default allocator).
	Mem memory.Allocator
	// Title overrides the document title.
	Title string
	// MaxSuspects bounds the suspects described in full (0 means 10).
	MaxSuspects int
	// FlameGraphs is how many top suspects get a flame graph (0 means 3,
	// negative none).
	FlameGraphs int
	// Images says how Markdown carries charts and flame graphs:
	// [ImagesText] (the default: text only, charts as tables with
	// sparklines, so the report pastes cleanly into an incident document),
	// [ImagesFiles] (the text, and each image written through ImageFile
	// and linked) or [ImagesInline] (the text, and each image embedded as
	// a data URI). HTML always embeds its images.
	Images string
	// ImageFile writes one SVG image named name (file-safe, no extension)
	// beside the Markdown and returns the link to it, for [ImagesFiles].
	ImageFile func(name string, svg []byte) (link string, err error)
}

// Image modes of [Options.Images].
const (
	ImagesText   = "text"
	ImagesFiles  = "files"
	ImagesInline = "inline"
)

// ValidImages reports whether mode is an image mode ("" is ImagesText).
func ValidImages(mode string) bool {
	return mode == "" || mode == ImagesText || mode == ImagesFiles || mode == ImagesInline
}

func (o Options) maxSuspects() int {
	if o.MaxSuspects <= 0 {
		return 10
	}
	return o.MaxSuspects
}

func (o Options) flameGraphs() int {
	if o.FlameGraphs == 0 {
		return 3
	}
	return max(0, o.FlameGraphs)
}

func (o Options) mem() memory.Allocator {
	if o.Mem == nil {
		return memory.DefaultAllocator
	}
	return o.Mem
}
