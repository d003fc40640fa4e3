// Command cgoprog records a Go execution trace in which C threads call
// into Go, one after another: each callback runs on a goroutine the
// runtime creates in a syscall and destroys when the thread drops back to
// C, and a later thread's callback gets the same goroutine id again. It
// prints how many callbacks it made.
package main

/*
#include <pthread.h>
#include <stdint.h>

extern void goCallback(int);

static void* worker(void* arg) {
	goCallback((int)(intptr_t)arg);
	return NULL;
}

// run starts n C threads one after another; each calls Go once and exits.
static void run(int n) {
	for (int i = 0; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, worker, (void*)(intptr_t)i) != 0) {
			return;
		}
		pthread_join(t, NULL);
	}
}
*/
import "C"

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/trace"
	"sync/atomic"
	"time"
)

var calls atomic.Int64

//export goCallback
func goCallback(n C.int) {
	calls.Add(1)
	time.Sleep(time.Millisecond) // block, so the callback has states to show
	runtime.Gosched()
}

func main() {
	out := flag.String("out", "trace.out", "trace file")
	threads := flag.Int("threads", 12, "C threads, one after another")
	flag.Parse()
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := trace.Start(f); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	C.run(C.int(*threads))
	trace.Stop()
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(calls.Load())
}
