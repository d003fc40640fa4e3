package samples

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// TruthFile is the name of the ground-truth file in every sample directory.
const TruthFile = "leak.json"

// Leak kinds.
const (
	// KindGoroutine is a leak of parked goroutines.
	KindGoroutine = "goroutine"
	// KindHeap is heap growth without a goroutine leak.
	KindHeap = "heap"
)

// Leak patterns: the vocabulary used in leak.json and by the analysis.
const (
	PatternChanSendNoReceiver     = "chan-send-no-receiver"
	PatternChanReceiveNeverClosed = "chan-receive-never-closed"
	PatternSelectWithoutCancel    = "select-without-cancel"
	PatternTickerNotStopped       = "ticker-not-stopped"
	PatternTimerNotStopped        = "timer-not-stopped"
	PatternWaitGroupNeverDone     = "waitgroup-never-done"
	PatternLockNeverReleased      = "lock-never-released"
	PatternCondNeverSignalled     = "cond-never-signalled"
	PatternNetworkNoDeadline      = "network-no-deadline"
	PatternUnboundedGoroutines    = "unbounded-goroutines"
	PatternHeapGrowth             = "heap-growth"
	// Incident patterns: library shapes the analysis names for a whole
	// incident (its rules of kind "incident").
	PatternInformerNotStopped    = "client-go-informer-not-stopped"
	PatternBroadcasterNotStopped = "client-go-event-broadcaster-not-shut-down"
	PatternWatchNotStopped       = "client-go-watch-not-stopped"
	PatternWatchPerReconcile     = "controller-runtime-watch-per-reconcile"
	PatternHTTPBodyNotClosed     = "http-body-not-closed"
	PatternErrgroupNeverReturns  = "errgroup-never-returns"
	PatternGRPCConnNotClosed     = "grpc-clientconn-not-closed"
	PatternGRPCStreamNotClosed   = "grpc-client-stream-not-closed"
	// PatternContextCancelDropped is a heap leak: contexts whose cancel
	// function is never called stay registered in their parent.
	PatternContextCancelDropped = "context-cancel-dropped"
	// PatternLibraryObject is an object a library makes (a *sql.DB, a
	// workqueue, a TracerProvider) created per call and never released:
	// its goroutines run library code only.
	PatternLibraryObject = "library-object-not-released"
	// PatternHTTPTransportPerCall is an http.Transport made per call
	// and dropped with its idle connections.
	PatternHTTPTransportPerCall = "http-transport-per-call"
	// PatternLockHeldWhileBlocked is a goroutine blocked while it holds
	// the lock other goroutines queue on, with no cycle.
	PatternLockHeldWhileBlocked = "lock-held-while-blocked"
)

// Patterns lists every valid pattern string, in a fixed order.
var Patterns = []string{
	PatternChanSendNoReceiver, PatternChanReceiveNeverClosed,
	PatternSelectWithoutCancel, PatternTickerNotStopped,
	PatternTimerNotStopped, PatternWaitGroupNeverDone,
	PatternLockNeverReleased, PatternCondNeverSignalled,
	PatternNetworkNoDeadline, PatternUnboundedGoroutines,
	PatternHeapGrowth, PatternInformerNotStopped,
	PatternBroadcasterNotStopped, PatternWatchNotStopped,
	PatternWatchPerReconcile,
	PatternHTTPBodyNotClosed, PatternErrgroupNeverReturns,
	PatternGRPCConnNotClosed, PatternGRPCStreamNotClosed,
	PatternContextCancelDropped, PatternLibraryObject,
	PatternHTTPTransportPerCall, PatternLockHeldWhileBlocked,
}

// ValidPattern reports whether p is one of [Patterns].
func ValidPattern(p string) bool {
	for _, q := range Patterns {
		if p == q {
			return true
		}
	}
	return false
}

// Leak is one planted leak.
type Leak struct {
	// Kind is KindGoroutine or KindHeap.
	Kind string `json:"kind"`
	// Pattern is one of [Patterns].
	Pattern string `json:"pattern"`
	// Function is, for goroutine leaks, the top-most main-package frame
	// the leaked goroutines are parked in; for heap leaks, the top-most
	// main-package frame of the allocating stack.
	Function string `json:"function"`
	// Creator is the function whose go statement created the leaked
	// goroutines ("created by" in a dump); empty for heap leaks.
	Creator string `json:"creator"`
	// MinCount30s is the number of leaked goroutines (or, for heap leaks,
	// the bytes in use attributed to Function) at least present after
	// 30 s at the default rate.
	MinCount30s int64 `json:"min_count_30s"`
	// Origin, for leaks whose goroutines run in a library, is the user's
	// function that creates them: the report must name it as its
	// incident's origin, with Pattern as the incident's pattern. Then
	// Function is a library function on the leaked goroutines' stacks (or
	// the innermost main-package one, when there is one) and Creator the
	// function in their "created by" line. A heap leak whose allocations
	// a library makes (a context's) may name its origin too: the user's
	// frame that calls the library, which is then also its Function.
	Origin string `json:"origin,omitempty"`
	// Fix is a phrase the incident's fix must contain.
	Fix string `json:"fix,omitempty"`
}

// Truth is the content of a sample's leak.json.
type Truth struct {
	// Name is the sample name; it equals the directory name.
	Name string `json:"name"`
	// Description is one sentence on what the program does.
	Description string `json:"description"`
	// Healthy samples plant no leak and must not be flagged.
	Healthy bool `json:"healthy"`
	// Leaks lists the planted leaks; empty when Healthy.
	Leaks []Leak `json:"leaks"`
}

// Sample is one sample program found by [All].
type Sample struct {
	// Name is the directory name.
	Name string
	// Dir is the sample directory (root joined with Name).
	Dir string
	// Truth is the parsed leak.json.
	Truth Truth
}

// Parse decodes and validates a leak.json document. It returns a non-nil
// *Truth exactly when the error is nil. Unknown fields are an error.
func Parse(r io.Reader) (*Truth, error) {
	data, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("read truth: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var t Truth
	if err := dec.Decode(&t); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("decode truth at offset %d: %w", se.Offset, err)
		}
		return nil, fmt.Errorf("decode truth: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("decode truth at offset %d: trailing data after object", dec.InputOffset())
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return &t, nil
}

// Validate checks the fields of t against the leak.json rules.
func (t *Truth) Validate() error {
	if t.Name == "" {
		return errors.New("truth: empty name")
	}
	if t.Healthy != (len(t.Leaks) == 0) {
		return fmt.Errorf("truth %q: healthy is %v but %d leaks are declared", t.Name, t.Healthy, len(t.Leaks))
	}
	for i, l := range t.Leaks {
		if err := l.validate(); err != nil {
			return fmt.Errorf("truth %q: leaks[%d]: %w", t.Name, i, err)
		}
	}
	return nil
}

func (l Leak) validate() error {
	switch l.Kind {
	case KindGoroutine:
		if l.Creator == "" {
			return errors.New("goroutine leak without creator")
		}
	case KindHeap:
		if l.Creator != "" {
			return fmt.Errorf("heap leak with creator %q", l.Creator)
		}
	default:
		return fmt.Errorf("unknown kind %q", l.Kind)
	}
	if !ValidPattern(l.Pattern) {
		return fmt.Errorf("unknown pattern %q", l.Pattern)
	}
	if l.Function == "" {
		return errors.New("empty function")
	}
	if l.MinCount30s <= 0 {
		return fmt.Errorf("min_count_30s %d is not positive", l.MinCount30s)
	}
	return nil
}

// Load reads dir/leak.json. The declared name must equal the base name of
// dir.
func Load(dir string) (Truth, error) {
	path := filepath.Join(dir, TruthFile)
	f, err := os.Open(path)
	if err != nil {
		return Truth{}, fmt.Errorf("load truth: %w", err)
	}
	defer f.Close()
	t, err := Parse(f)
	if err != nil {
		return Truth{}, fmt.Errorf("%s: %w", path, err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Truth{}, fmt.Errorf("load truth: %w", err)
	}
	if base := filepath.Base(abs); t.Name != base {
		return Truth{}, fmt.Errorf("%s: name %q does not match directory %q", path, t.Name, base)
	}
	return *t, nil
}

// LibraryModules are the nested modules under the samples root that hold
// samples built on real libraries (kube: k8s.io/client-go and
// sigs.k8s.io/controller-runtime; libs: grpc,
// errgroup and the standard library's leaking shapes the library rules
// name), kept out of the leakscope module's dependency graph.
var LibraryModules = []string{"kube", "libs"}

// All loads every sample under root: each direct subdirectory that holds
// a leak.json, and those of the [LibraryModules]. The result is sorted by
// name.
func All(root string) ([]Sample, error) {
	out, err := samplesIn(root)
	if err != nil {
		return nil, err
	}
	for _, m := range LibraryModules {
		if _, err := os.Stat(filepath.Join(root, m, "go.mod")); err != nil {
			continue
		}
		more, err := samplesIn(filepath.Join(root, m))
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// samplesIn loads the samples that are direct subdirectories of dir.
func samplesIn(dir string) ([]Sample, error) {
	root := dir
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("list samples: %w", err)
	}
	var out []Sample
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if _, err := os.Stat(filepath.Join(dir, TruthFile)); err != nil {
			continue
		}
		t, err := Load(dir)
		if err != nil {
			return nil, err
		}
		out = append(out, Sample{Name: e.Name(), Dir: dir, Truth: t})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
