package dump

import (
	"fmt"
	"io"
	"strings"
)

// render reads all of r into a stable text form for golden files.
func render(r io.Reader) string {
	var sb strings.Builder
	rd := NewReader(r)
	for {
		g, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintf(&sb, "error: %v\n", err)
			return sb.String()
		}
		writeGoroutine(&sb, g)
	}
	fmt.Fprintf(&sb, "end: lines=%d bytes=%d skipped=%d\n", rd.Lines(), rd.Bytes(), rd.SkippedLines())
	if rd.Truncated() {
		fmt.Fprintf(&sb, "truncated: %s\n", rd.TruncationDetail())
	}
	return sb.String()
}

func writeGoroutine(sb *strings.Builder, g *Goroutine) {
	fmt.Fprintf(sb, "goroutine %d line=%d state=%q", g.ID, g.Line, g.State)
	if g.WaitMinutes != 0 {
		fmt.Fprintf(sb, " wait=%dm", g.WaitMinutes)
	}
	if g.LockedToThread {
		sb.WriteString(" locked")
	}
	if g.Bubble != 0 {
		fmt.Fprintf(sb, " bubble=%d", g.Bubble)
	}
	if g.Labels != "" {
		fmt.Fprintf(sb, " labels=%q", g.Labels)
	}
	if g.FramesElided {
		fmt.Fprintf(sb, " elided=%d", g.ElidedFrames)
	}
	if g.StackUnavailable {
		sb.WriteString(" unavailable")
	}
	if g.Ancestors != 0 {
		fmt.Fprintf(sb, " ancestors=%d", g.Ancestors)
	}
	sb.WriteString("\n")
	for _, f := range g.Frames {
		fmt.Fprintf(sb, "  %s %s:%d", f.Function, f.File, f.Line)
		if f.Inlined {
			sb.WriteString(" inlined")
		}
		sb.WriteString("\n")
	}
	if c := g.CreatedBy; c != nil {
		fmt.Fprintf(sb, "  created by %s in goroutine %d at %s:%d\n", c.Function, g.CreatorGoid, c.File, c.Line)
	}
}
