package service

import (
	"flag"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"sync/atomic"
)

// calls counts the calls a sample makes to the code it plants a leak in,
// so that a test can compare what the analysis estimates per call with
// what the program did.
var calls atomic.Int64

// Called counts one call of the sample's leaking (or, in a healthy twin,
// fixed) code path; /calls serves the count.
func Called() { calls.Add(1) }

// The /calls line is the call count and the live heap, in bytes, right
// after a garbage collection that the request runs: what the program
// measures of its own heap per call.
//
// -memprofilerate sets runtime.MemProfileRate, so that a short run has
// enough heap samples to measure a leak per call by.
func init() {
	flag.Func("memprofilerate", "set runtime.MemProfileRate to this many bytes (default: the runtime's)", func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("want a byte count, got %q", v)
		}
		runtime.MemProfileRate = n
		return nil
	})
	http.HandleFunc("/calls", func(w http.ResponseWriter, _ *http.Request) {
		n := calls.Load()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Fprintf(w, "%d %d\n", n, ms.HeapAlloc)
	})
}
