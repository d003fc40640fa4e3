package main

import (
	"fmt"
	"io"

	"github.com/leakscope/leakscope/internal/format"
)

// What the command prints holds names from its inputs (files, functions,
// a bundle's node and executable, error messages quoting them). Each line
// goes out through printf or println, which write what fmt.Fprintf and
// fmt.Fprintln would with control characters other than newline and tab,
// invalid UTF-8 and bidirectional overrides escaped (format.Lines): no
// input can move the cursor, retitle the terminal or hide text.

func printf(w io.Writer, f string, args ...any) {
	io.WriteString(w, format.Lines(fmt.Sprintf(f, args...)))
}

func printLine(w io.Writer, args ...any) {
	io.WriteString(w, format.Lines(fmt.Sprintln(args...)))
}

// cleanWriter passes writes through format.Lines, for output written by
// library code (a capture's notices). A write is assumed to end at a
// character's end, as line-wise writers' do.
type cleanWriter struct{ w io.Writer }

func (c cleanWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(c.w, format.Lines(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
