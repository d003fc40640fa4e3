// Package flight keeps the last seconds of a Go program's execution trace
// in memory, with runtime/trace's flight recorder (Go 1.25+), and serves
// them on the program's default HTTP mux at [Path], beside the
// net/http/pprof endpoints. A leakscope capture fetches it first when it
// is there, so the capture's execution trace reaches back before the
// capture was triggered. One import is enough:
//
//	import _ "github.com/leakscope/leakscope/flight"
//
// The recorder starts when the package is initialised, keeping at least
// [DefaultMinAge] of trace within [DefaultMaxBytes]; the environment
// variable LEAKSCOPE_FLIGHT sets another age ("2m") or turns it off
// ("off"). A program with its own mux serves a [Recorder] from [Start]
// itself. Its cost is the runtime's tracer, always on (see the leakscope
// README's "Before the alert").
package flight

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/trace"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Path is where the recording is served, below the program's base URL.
const Path = "/debug/pprof/flight"

// Defaults of [Config].
const (
	DefaultMinAge   = time.Minute
	DefaultMaxBytes = 16 << 20
)

// Config sets how much trace a [Recorder] keeps: at least MinAge of it
// (0: DefaultMinAge) unless that takes more than MaxBytes (0:
// DefaultMaxBytes).
type Config struct {
	MinAge   time.Duration
	MaxBytes uint64
}

// Recorder is a running flight recorder. Its ServeHTTP answers GET with
// the recording (a Go execution trace) and is safe for concurrent use:
// requests are answered one at a time.
type Recorder struct {
	cfg Config
	fr  *trace.FlightRecorder
	mu  sync.Mutex
}

// Start starts a flight recorder. The runtime allows one at a time.
func Start(cfg Config) (*Recorder, error) {
	if cfg.MinAge <= 0 {
		cfg.MinAge = DefaultMinAge
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	fr := trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: cfg.MinAge, MaxBytes: cfg.MaxBytes})
	if err := fr.Start(); err != nil {
		return nil, fmt.Errorf("flight recorder: %w", err)
	}
	return &Recorder{cfg: cfg, fr: fr}, nil
}

// Config returns the recorder's settings, defaults filled in.
func (r *Recorder) Config() Config { return r.cfg }

// WriteTo writes the recording: the trace of the last MinAge or more.
func (r *Recorder) WriteTo(w io.Writer) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fr.WriteTo(w)
}

// Stop stops the recorder.
func (r *Recorder) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fr.Stop()
}

// ServeHTTP answers GET with the recording.
func (r *Recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="flight.trace"`)
	w.Header().Set("X-Flight-Min-Age", r.cfg.MinAge.String())
	// Once bytes are sent, a failure can only cut the trace short.
	if n, err := r.WriteTo(w); err != nil && n == 0 {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// fromEnv reads LEAKSCOPE_FLIGHT: "" for the defaults, "off", or an age.
func fromEnv(v string) (cfg Config, on bool, err error) {
	switch v {
	case "":
		return Config{}, true, nil
	case "off", "0", "false":
		return Config{}, false, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		if n, nerr := strconv.Atoi(v); nerr == nil {
			d, err = time.Duration(n)*time.Second, nil
		}
	}
	if err != nil || d <= 0 {
		return Config{}, false, errors.New("LEAKSCOPE_FLIGHT: want off or a duration (2m), not " + strconv.Quote(v))
	}
	return Config{MinAge: d}, true, nil
}

// Default is the recorder the import started (nil when it is off or
// failed to start).
var Default *Recorder

func init() {
	cfg, on, err := fromEnv(os.Getenv("LEAKSCOPE_FLIGHT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "leakscope/flight:", err)
		return
	}
	if !on {
		return
	}
	r, err := Start(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "leakscope/flight:", err)
		return
	}
	Default = r
	register(http.DefaultServeMux, r)
}

// register adds r to mux at Path as net/http/pprof registers its own
// ("GET /debug/pprof/...", which a plain path would conflict with), or,
// under GODEBUG=httpmuxgo121=1, where patterns have no method, plainly.
func register(mux *http.ServeMux, r *Recorder) {
	if strings.Contains(os.Getenv("GODEBUG"), "httpmuxgo121=1") {
		mux.Handle(Path, r)
		return
	}
	defer func() {
		if recover() != nil {
			mux.Handle(Path, r)
		}
	}()
	mux.Handle(http.MethodGet+" "+Path, r)
}
