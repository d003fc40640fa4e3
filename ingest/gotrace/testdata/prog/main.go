// Command prog records a Go execution trace of a program that does known
// things, for the gotrace tests: tasks with subtasks, nested regions, log
// events, goroutines that leak (parked forever on a channel or a select),
// goroutines that end, a spawner whose children leak, GC, a task never
// ended and a region left open. With -out2 it records a second window
// after the first, in which the leaked goroutines are still parked.
//
// It prints a JSON summary of what it did (goroutine ids included) on
// stdout.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/trace"
	"strconv"
	"sync"
	"time"
)

// Summary is what the program did, for the test to check against.
type Summary struct {
	Main          int64   `json:"main"`
	ChanLeakers   []int64 `json:"chan_leakers"`
	SelectLeakers []int64 `json:"select_leakers"`
	Enders        []int64 `json:"enders"`
	Spawner       int64   `json:"spawner"`
	Spawned       []int64 `json:"spawned"`
	Window2Leaker int64   `json:"window2_leaker,omitempty"`
}

func goid() int64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	b = b[:bytes.IndexByte(b, ' ')]
	id, _ := strconv.ParseInt(string(b), 10, 64)
	return id
}

var sink [][]byte

func main() {
	out := flag.String("out", "trace.out", "trace file")
	out2 := flag.String("out2", "", "second trace window (optional)")
	small := flag.Bool("small", false, "do little (for fuzz seeds)")
	flag.Parse()

	f, err := os.Create(*out)
	if err != nil {
		fail(err)
	}
	if err := trace.Start(f); err != nil {
		fail(err)
	}
	var s Summary
	s.Main = goid()
	if *small {
		ctx, t := trace.NewTask(context.Background(), "small")
		trace.WithRegion(ctx, "r", func() { trace.Log(ctx, "k", "v") })
		done := make(chan int64)
		go func() { done <- goid() }()
		s.Enders = append(s.Enders, <-done)
		t.End()
	} else {
		work(&s)
	}
	trace.Stop()
	if err := f.Close(); err != nil {
		fail(err)
	}
	if *out2 != "" {
		f2, err := os.Create(*out2)
		if err != nil {
			fail(err)
		}
		if err := trace.Start(f2); err != nil {
			fail(err)
		}
		ids := make(chan int64)
		go func() {
			ids <- goid()
			<-make(chan int) // leaks, created in window 2
		}()
		s.Window2Leaker = <-ids
		time.Sleep(5 * time.Millisecond)
		trace.Stop()
		f2.Close()
	}
	json.NewEncoder(os.Stdout).Encode(s)
}

func work(s *Summary) {
	ctx, root := trace.NewTask(context.Background(), "root")
	ids := make(chan int64)

	// Subtasks of root, each with nested regions and a log.
	for _, name := range []string{"child1", "child2"} {
		cctx, child := trace.NewTask(ctx, name)
		trace.WithRegion(cctx, "outer", func() {
			trace.WithRegion(cctx, "inner", func() {
				trace.Log(cctx, "step", name)
			})
		})
		child.End()
	}

	// Goroutines that leak: 5 parked on a channel receive, 3 in a select.
	for i := 0; i < 5; i++ {
		go leakChan(ids)
		s.ChanLeakers = append(s.ChanLeakers, <-ids)
	}
	for i := 0; i < 3; i++ {
		go leakSelect(ids)
		s.SelectLeakers = append(s.SelectLeakers, <-ids)
	}

	// Goroutines that end: 20 workers that allocate.
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := goid()
			b := make([]byte, 1<<20)
			mu.Lock()
			s.Enders = append(s.Enders, id)
			sink = append(sink, b)
			mu.Unlock()
		}()
	}
	wg.Wait()

	// A spawner whose 4 children leak; the spawner itself ends.
	spawned := make(chan int64, 4)
	done := make(chan struct{})
	go func() {
		s.Spawner = goid()
		for i := 0; i < 4; i++ {
			go leakChan(spawned)
		}
		close(done)
	}()
	<-done
	for i := 0; i < 4; i++ {
		s.Spawned = append(s.Spawned, <-spawned)
	}

	// GC: allocation and explicit collections.
	for i := 0; i < 200; i++ {
		sink = append(sink, make([]byte, 64<<10))
	}
	sink = nil
	runtime.GC()
	runtime.GC()

	root.End()

	// A task never ended, with a region left open at the end of the trace.
	fctx, _ := trace.NewTask(context.Background(), "forever")
	trace.StartRegion(fctx, "open-region")
	time.Sleep(2 * time.Millisecond)
}

func leakChan(ids chan<- int64) {
	ids <- goid()
	<-make(chan int)
}

func leakSelect(ids chan<- int64) {
	ids <- goid()
	a, b := make(chan int), make(chan string)
	select {
	case <-a:
	case <-b:
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
