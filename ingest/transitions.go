package ingest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/gotrace"
	"github.com/leakscope/leakscope/ingest/schema"
)

// Transitions is [gotrace.TransitionsFrom] for every bundle: raw traces kept
// compressed (a trace.out.gz, ingested as it was) are read through the
// decompressor ingest reads every file with. It is what the command hands
// to the workbench (an analysis.TransitionSource).
func Transitions(b *bundle.Bundle, goids []int64, from, to int64) ([]schema.Transition, error) {
	return gotrace.TransitionsFrom(b, openRaw, goids, from, to)
}

// openRaw opens the raw artifact name of b, decompressed.
func openRaw(b *bundle.Bundle, name string) (io.ReadCloser, error) {
	f, err := os.Open(filepath.Join(b.Dir, name))
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(f)
	magic, _ := br.Peek(4)
	plain, _, closeFn, err := decompressor(br, magic, DefaultMaxDecompressed)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &rawReader{Reader: plain, close: func() { closeFn(); f.Close() }}, nil
}

type rawReader struct {
	io.Reader
	close func()
}

func (r *rawReader) Close() error { r.close(); return nil }
