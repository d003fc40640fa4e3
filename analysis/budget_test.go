package analysis

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// TestAnalysisCut: an analysis whose context is cancelled, or whose
// deadline has passed, returns a *CutError saying so and which stage it
// stopped before, and no report.
func TestAnalysisCut(t *testing.T) {
	b, err := bundle.Open("../cmd/leakscope/bundles/stable-pool.lsb")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := AnalyzeContext(ctx, b, memory.DefaultAllocator, Options{})
	var cut *CutError
	if rep != nil || !errors.As(err, &cut) || !errors.Is(err, context.Canceled) || cut.Stage != "load" {
		t.Fatalf("cancelled: report %v, error %v; want a *CutError in load wrapping context.Canceled", rep != nil, err)
	}
	_, err = AnalyzeContext(context.Background(), b, memory.DefaultAllocator, Options{Timeout: time.Nanosecond})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "deadline of 1ns") {
		t.Fatalf("past its deadline: %v", err)
	}
	if _, err := AnalyzeContext(context.Background(), b, memory.DefaultAllocator, Options{Timeout: -1, MaxHeap: -1}); err != nil {
		t.Fatalf("no bounds: %v", err)
	}
}

// TestHeapBudget: the heap watch cancels with ErrHeapBudget once the live
// heap is past the limit above its start (a limit far below zero: at
// once, whatever the heap did since), and the cut says so with the
// budget.
func TestHeapBudget(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan struct{})
	defer close(done)
	go watchHeap(done, cancel, -1<<62)
	<-ctx.Done()
	bg := &budget{ctx: ctx, maxHeap: 1 << 30}
	err := bg.check("evidence")
	if !errors.Is(err, ErrHeapBudget) || err.Error() != "analysis cut short in its evidence stage: its heap grew past its budget of 1.0 GiB" {
		t.Fatalf("heap cut: %v", err)
	}
}
