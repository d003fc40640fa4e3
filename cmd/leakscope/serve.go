package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/cmd/leakscope/bundles"
	"github.com/leakscope/leakscope/ingest"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/web"
)

// sampleBundles seeds a new data directory with the sample captures.
var sampleBundles fs.FS = bundles.FS

// serveOptions are the flags of `leakscope serve`.
type serveOptions struct {
	addr       string
	data       string
	token      string
	maxUpload  byteSize
	maxBytes   byteSize
	quota      byteSize
	publicRead bool
	noSamples  bool
	// metricsSuspects and metricsCaptures bound /metrics.
	metricsSuspects, metricsCaptures int
	// analysisTimeout and analysisHeap bound each analysis.
	analysisTimeout time.Duration
	analysisHeap    byteSize
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fsx := newFlagSet("serve", "serve [--addr 127.0.0.1:7070] [--data DIR]",
		`Serves the workbench (captures, overview, flame graphs, ancestry, timeline,
downloads) and its JSON API. Bound to a loopback address it answers local
clients only; on any other address every request to the API (reads too,
unless --public-read) needs the token, given by --token or LEAKSCOPE_TOKEN,
or generated and printed. Uploads are capped twice, checked while they
stream: each may unpack to --max-unpacked, and all captures together may
take --quota (and leave 1 GiB of the disk free).`, stderr)
	var o serveOptions
	fsx.StringVar(&o.addr, "addr", "127.0.0.1:7070", "listen `address` (HOST:PORT; port 0 picks a free one)")
	fsx.StringVar(&o.data, "data", defaultDataDir(), "data `directory` holding the uploaded captures")
	fsx.StringVar(&o.token, "token", os.Getenv("LEAKSCOPE_TOKEN"), "`token` required on non-loopback addresses (default $LEAKSCOPE_TOKEN)")
	o.maxUpload, o.maxBytes, o.quota = web.DefaultMaxUpload, byteSize(bundle.DefaultLimits.MaxBytes), web.DefaultQuota
	fsx.Var(&o.maxUpload, "max-upload", "largest upload body in `bytes` (suffixes K, M, G, T)")
	fsx.Var(&o.maxBytes, "max-unpacked", "largest unpacked capture in `bytes` (suffixes K, M, G, T)")
	fsx.Var(&o.quota, "quota", "most `bytes` all captures in the data directory may take, their kept analyses included (suffixes K, M, G, T)")
	fsx.BoolVar(&o.publicRead, "public-read", false, "on a non-loopback address, let anyone who reaches it read every capture without the token")
	fsx.IntVar(&o.metricsSuspects, "metrics-suspects", web.DefaultMetricsSuspects, "suspects per capture that /metrics exports one by one (the rest summed)")
	fsx.IntVar(&o.metricsCaptures, "metrics-captures", web.DefaultMetricsCaptures, "newest captures per service that /metrics exports (the rest counted)")
	fsx.BoolVar(&o.noSamples, "no-samples", false, "do not install the sample captures into a new data directory")
	fsx.DurationVar(&o.analysisTimeout, "analysis-timeout", analysis.DefaultTimeout, "stop a capture's analysis after `DURATION`, showing it cut (0: no limit)")
	o.analysisHeap = analysis.DefaultMaxHeap
	fsx.Var(&o.analysisHeap, "analysis-heap", "stop a capture's analysis when its heap grows past `SIZE`, showing it cut (suffixes K, M, G, T; 0: no limit)")
	pos, err := parseFlags(fsx, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("serve takes no arguments (got %q)", pos)
	}
	return serve(ctx, o, stdout, stderr)
}

func serve(ctx context.Context, o serveOptions, stdout, stderr io.Writer) error {
	// Listen first: an address that cannot be bound fails before a
	// token is made up and printed.
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer ln.Close()
	loopback := web.IsLoopback(o.addr)
	if !loopback && o.token == "" {
		var b [16]byte
		rand.Read(b[:])
		o.token = hex.EncodeToString(b[:])
		what := "reads and writes need"
		if o.publicRead {
			what = "writes need"
		}
		printf(stderr, "leakscope serve: %s is not a loopback address; %s the token %s (Authorization: Bearer TOKEN)\n", o.addr, what, o.token)
	}
	if !loopback && o.publicRead {
		printf(stderr, "leakscope serve: WARNING: --public-read: anyone who can reach %s can read every capture (stacks, file paths, labels, raw dumps) without a token\n", o.addr)
	}
	seed := sampleBundles
	if o.noSamples {
		seed = nil
	}
	store, err := web.OpenStore(o.data, seed, bundle.Limits{MaxBytes: int64(o.maxBytes)}, nil)
	if err != nil {
		return err
	}
	store.SetQuota(int64(o.quota))
	store.SetAnalysis(analysis.Options{Timeout: noLimit(o.analysisTimeout), MaxHeap: int64(noLimit(o.analysisHeap))})
	srv := &http.Server{
		Handler: web.NewRouter(store, web.Options{Token: o.token, Loopback: loopback, PublicRead: o.publicRead, MaxUploadBytes: int64(o.maxUpload),
			MetricsSuspects: o.metricsSuspects, MetricsCaptures: o.metricsCaptures, Transitions: ingest.Transitions}),
		ReadHeaderTimeout: 10 * time.Second,
		// Answers and uploads have idle deadlines per write and read
		// (web.DefaultWriteIdle, DefaultReadIdle), not a total one: a large
		// download may take its time, a stalled client is dropped.
		IdleTimeout: 2 * time.Minute,
	}
	host := ln.Addr().String()
	printf(stdout, "leakscope workbench on http://%s/ (data %s)\n", host, store.Dir())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("serve: shut down: %w", err)
	}
	return nil
}

// defaultDataDir is $XDG_DATA_HOME/leakscope, else ~/.local/share/leakscope.
func defaultDataDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "leakscope")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "share", "leakscope")
	}
	return "leakscope-data"
}
