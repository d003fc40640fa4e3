// Command profgen writes every profile the Go runtime offers into a
// directory, after doing work that gives each one samples: parked and
// leaked goroutines, allocations, lock contention, blocking and CPU.
// Built with GOEXPERIMENT=goroutineleakprofile it also writes the
// goroutineleak profile. Each profile is written twice: NAME.pb.gz
// (protobuf) and NAME.txt (the legacy text form, debug=1).
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"
)

var sink [][]byte

func allocate(n int) {
	for i := 0; i < n; i++ {
		sink = append(sink, make([]byte, 4096))
	}
}

func leakSender() {
	ch := make(chan int)
	go func() { ch <- 1 }() // nobody ever receives
}

func parkOnChannel(ch chan struct{}) { <-ch }

func spin(d time.Duration) int {
	x := 0
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := 0; i < 1000; i++ {
			x += i * i
		}
	}
	return x
}

func contend() {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				mu.Lock()
				time.Sleep(10 * time.Microsecond)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

func main() {
	dir := os.Args[1]
	runtime.SetBlockProfileRate(1)
	runtime.SetMutexProfileFraction(1)
	runtime.MemProfileRate = 4096

	block := make(chan struct{})
	for i := 0; i < 25; i++ {
		go parkOnChannel(block)
	}
	for i := 0; i < 10; i++ {
		leakSender()
	}
	allocate(2000)
	contend()

	cpu, err := os.Create(filepath.Join(dir, "cpu.pb.gz"))
	check(err)
	check(pprof.StartCPUProfile(cpu))
	spin(300 * time.Millisecond)
	pprof.StopCPUProfile()
	check(cpu.Close())

	runtime.GC()
	for _, p := range pprof.Profiles() {
		f, err := os.Create(filepath.Join(dir, p.Name()+".pb.gz"))
		check(err)
		check(p.WriteTo(f, 0))
		check(f.Close())
	}
	// The legacy text form of every profile too (debug=1), which pprof
	// still parses: "goroutine profile: total N", "--- contention:",
	// "--- mutex:", "heap profile: ...".
	for _, p := range pprof.Profiles() {
		f, err := os.Create(filepath.Join(dir, p.Name()+".txt"))
		check(err)
		check(p.WriteTo(f, 1))
		check(f.Close())
	}
	fmt.Println(len(sink))
	close(block)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
