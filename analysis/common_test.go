package analysis

import (
	"testing"

	"github.com/leakscope/leakscope/ingest/bundle"
)

func TestSourceText(t *testing.T) {
	src := bundle.Source{Kind: "trace", Status: "truncated", Detail: "target went away", Counters: map[string]int64{"events": 22010, "trace_bytes": 301247, "windows": 4}}
	if got, want := SourceText(src), "trace truncated: target went away · events 22,010 · trace bytes 294.2 KiB · windows 4"; got != want {
		t.Errorf("SourceText = %q, want %q", got, want)
	}
}
