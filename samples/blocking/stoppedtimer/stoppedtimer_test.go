// Package stoppedtimer: a retrier resets its backoff timer by calling Stop
// and then receiving from the timer's channel "to drain it". Since Go 1.23
// a stopped timer's channel delivers nothing, so the receive never returns.
package stoppedtimer

import (
	"sync"
	"testing"
	"time"
)

type retrier struct {
	timer   *time.Timer
	backoff time.Duration
}

func (r *retrier) reset() {
	if !r.timer.Stop() {
		<-r.timer.C
	}
	r.timer.Reset(r.backoff)
}

func (r *retrier) retry(op func() bool) {
	for !op() {
		r.backoff *= 2
		r.reset()
		<-r.timer.C
	}
}

func TestRetry(t *testing.T) {
	r := &retrier{timer: time.NewTimer(time.Hour), backoff: time.Millisecond}
	r.timer.Stop() // the initial timer is stopped and never reset
	attempts := 0
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.retry(func() bool { attempts++; return attempts > 3 })
	}()
	wg.Wait()
}
