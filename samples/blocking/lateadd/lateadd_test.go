// Package lateadd: each batch job adds itself to the WaitGroup from inside
// its own goroutine and then sends its result on an unbuffered channel;
// collect waits for the WaitGroup before it starts receiving. The senders
// wait for collect, and collect waits for the senders.
package lateadd

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type batch struct {
	wg      sync.WaitGroup
	results chan int
	started atomic.Int32
}

func (b *batch) spawn(n int) {
	go func() {
		b.wg.Add(1) // bug: Add belongs before the go statement
		b.started.Add(1)
		defer b.wg.Done()
		b.results <- n * n
	}()
}

func (b *batch) collect() []int {
	b.wg.Wait() // bug: waits before draining results
	close(b.results)
	var out []int
	for r := range b.results {
		out = append(out, r)
	}
	return out
}

func TestBatch(t *testing.T) {
	b := &batch{results: make(chan int)}
	for i := 0; i < 3; i++ {
		b.spawn(i)
	}
	for b.started.Load() < 3 { // the jobs are running
		time.Sleep(time.Millisecond)
	}
	t.Log(b.collect())
}
