// Command spawner is the target of the probe package's integration test.
// It prints "ready", waits for a line on stdin (the tracer attaches in
// between), then for about two seconds (and at least 40 rounds) records a runtime/trace to the file
// named by its argument while it builds a known goroutine tree: parents
// create children that exit, children parked forever, and allocating
// children that create a grandchild; every round it also runs an iter.Pull
// coroutine to its end (a goroutine that ends without goexit1). It forces
// a GC every few rounds and exits 0.
package main

import (
	"bufio"
	"fmt"
	"iter"
	"os"
	"runtime"
	"runtime/trace"
	"sync"
	"time"
)

var (
	sinkMu sync.Mutex
	sink   [][]byte
	never  = make(chan struct{}) // never closed: parks goroutines forever
)

// minRounds makes the tree big enough for the test's counts (each round
// creates 40 goroutines: 1,600 at least).
const minRounds = 40

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "spawner:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 2 {
		return fmt.Errorf("usage: spawner TRACE_FILE")
	}
	runtime.MemProfileRate = 16 << 10
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return fmt.Errorf("wait for start: %w", err)
	}
	f, err := os.Create(os.Args[1])
	if err != nil {
		return err
	}
	if err := trace.Start(f); err != nil {
		return err
	}
	rounds := 0
	// At least minRounds rounds, however slow a loaded machine makes them:
	// the test counts what was created, not how fast.
	for deadline := time.Now().Add(2 * time.Second); rounds < minRounds || time.Now().Before(deadline); rounds++ {
		var wg sync.WaitGroup
		for p := 0; p < 10; p++ {
			wg.Add(1)
			go parent(&wg)
		}
		wg.Wait()
		pulled()
		if rounds%5 == 0 {
			runtime.GC()
		}
		sinkMu.Lock()
		sink = sink[:0]
		sinkMu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	trace.Stop()
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Printf("done rounds=%d\n", rounds)
	return nil
}

// parent creates one child of each kind and waits for those that end.
func parent(wg *sync.WaitGroup) {
	defer wg.Done()
	var cw sync.WaitGroup
	cw.Add(2)
	go func() { cw.Done() }() // exits at once
	go parked()               // never exits
	go allocator(&cw)
	cw.Wait()
}

// pulled runs a coroutine through iter.Pull until its sequence returns:
// the coroutine's goroutine then ends in coroswitch, not goexit1.
func pulled() int {
	next, stop := iter.Pull(func(yield func(int) bool) { yield(1) })
	defer stop()
	v, _ := next()
	next()
	return v
}

// parked blocks forever.
func parked() { <-never }

// allocator makes a 64 KiB allocation (sampled by the heap profiler at
// MemProfileRate 16 KiB) and starts a short-lived grandchild.
func allocator(wg *sync.WaitGroup) {
	b := make([]byte, 64<<10)
	sinkMu.Lock()
	sink = append(sink, b)
	sinkMu.Unlock()
	done := make(chan struct{})
	go func() {
		c := make([]byte, 100)
		sinkMu.Lock()
		sink = append(sink, c)
		sinkMu.Unlock()
		close(done)
	}()
	<-done
	wg.Done()
}
