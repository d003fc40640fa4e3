// Command sawtooth-heap is a healthy metrics shipper: it buffers samples in
// memory and ships the whole batch when it reaches 16 MiB or is two seconds
// old, then drops it. The heap climbs and falls in a sawtooth but does not
// grow over time, so it must not be flagged.
package main

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"sync"
	"time"

	"github.com/leakscope/leakscope/samples/internal/service"
)

// Batch is a set of encoded sample chunks waiting to be shipped.
type Batch struct {
	started time.Time
	chunks  [][]byte
	bytes   int
}

// Shipper accumulates chunks and ships full batches.
type Shipper struct {
	mu       sync.Mutex
	cur      *Batch
	maxBytes int
	maxAge   time.Duration
	shipped  int
	digest   [32]byte
}

// encodeChunk encodes one scrape as a 256 KiB chunk.
func encodeChunk(target string, n int) []byte {
	chunk := make([]byte, 256<<10)
	line := []byte(target + " up=1 scrape=" + strconv.Itoa(n) + "\n")
	for i := 0; i+len(line) <= len(chunk); i += len(line) {
		copy(chunk[i:], line)
	}
	return chunk
}

// Add buffers a chunk and ships the batch when it is full or old.
func (s *Shipper) Add(ctx context.Context, chunk []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		s.cur = &Batch{started: time.Now()}
	}
	s.cur.chunks = append(s.cur.chunks, chunk)
	s.cur.bytes += len(chunk)
	if s.cur.bytes >= s.maxBytes || time.Since(s.cur.started) >= s.maxAge {
		trace.WithRegion(ctx, "ship", func() { s.ship(s.cur) })
		s.cur = nil // the whole batch becomes garbage
	}
}

// ship pretends to upload b by hashing its first bytes.
func (s *Shipper) ship(b *Batch) {
	h := sha256.New()
	for _, c := range b.chunks {
		h.Write(c[:64])
	}
	copy(s.digest[:], h.Sum(nil))
	s.shipped++
}

// event scrapes one target.
func (s *Shipper) event(ctx context.Context, n int) {
	ctx, task := trace.NewTask(ctx, "scrape")
	defer task.End()
	target := "node-" + strconv.Itoa(n%16)
	pprof.Do(ctx, pprof.Labels("job", "node-exporter"), func(ctx context.Context) {
		var chunk []byte
		trace.WithRegion(ctx, "encode", func() { chunk = encodeChunk(target, n) })
		s.Add(ctx, chunk)
	})
}

// serveWork encodes and hashes one small scrape.
func serveWork(w http.ResponseWriter, r *http.Request) {
	ctx, task := trace.NewTask(r.Context(), "work")
	defer task.End()
	var sum [32]byte
	trace.WithRegion(ctx, "encode", func() {
		line := []byte("node-0 up=1\n")
		buf := make([]byte, 0, 4<<10)
		for len(buf)+len(line) <= cap(buf) {
			buf = append(buf, line...)
		}
		sum = sha256.Sum256(buf)
	})
	fmt.Fprintf(w, "%x\n", sum[:8])
}

func main() {
	o := service.Flags(20, "scrapes per second")
	flag.Parse()
	if err := run(*o); err != nil {
		fmt.Fprintln(os.Stderr, "sawtooth-heap:", err)
		os.Exit(1)
	}
}

func run(o service.Options) error {
	ctx, stop := service.Context(o.Duration)
	defer stop()
	srv, err := service.Listen(o.Addr)
	if err != nil {
		return err
	}
	s := &Shipper{maxBytes: 16 << 20, maxAge: 2 * time.Second}
	http.HandleFunc("/work", serveWork)
	srv.Start()
	service.Pace(ctx, o.Rate, s.event)
	return srv.Shutdown()
}
