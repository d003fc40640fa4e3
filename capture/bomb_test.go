package capture

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/leakscope/leakscope/ingest/profiles"
)

// TestWatchRefusesProfileBomb: a target serving a heap profile of 100 KB
// that decompresses to 70 MB of one sample repeated (1.7 GB parsed) is
// refused by the agent's watch with an error naming it, before pprof
// parses it.
func TestWatchRefusesProfileBomb(t *testing.T) {
	fn := &profile.Function{ID: 1, Name: "main.f", Filename: "f.go"}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn, Line: 1}}}
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
		{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}}, PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
		Period: 524288, Function: []*profile.Function{fn}, Location: []*profile.Location{loc},
		Sample: []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{1, 1, 1, 1}}}}
	var raw bytes.Buffer
	if err := p.WriteUncompressed(&raw); err != nil {
		t.Fatal(err)
	}
	// One sample more, ten million times: location 1, values 1,1,1,1.
	raw.Write(bytes.Repeat([]byte{0x12, 0x08, 0x0a, 0x01, 0x01, 0x12, 0x04, 0x01, 0x01, 0x01, 0x01}, 10_000_000))
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	zw.Write(raw.Bytes())
	zw.Close()
	mux := http.NewServeMux()
	mux.Handle("/debug/pprof/goroutine", pprof.Handler("goroutine"))
	mux.HandleFunc("/debug/pprof/heap", func(w http.ResponseWriter, r *http.Request) { w.Write(bomb.Bytes()) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	_, err := ReadTotals(context.Background(), srv.Client(), srv.URL)
	if !errors.Is(err, profiles.ErrTooLarge) {
		t.Fatalf("watch of a target serving a %d-byte profile bomb: %v, want ErrTooLarge", bomb.Len(), err)
	}
	if _, err := ReadSnapshot(context.Background(), srv.Client(), srv.URL); !errors.Is(err, profiles.ErrTooLarge) {
		t.Errorf("snapshot: %v, want ErrTooLarge", err)
	}
}
