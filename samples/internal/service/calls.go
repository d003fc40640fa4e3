package service

import (
	"fmt"
	"net/http"
	"sync/atomic"
)

// calls counts the calls a sample makes to the code it plants a leak in,
// so that a test can compare what the analysis estimates per call with
// what the program did.
var calls atomic.Int64

// Called counts one call of the sample's leaking (or, in a healthy twin,
// fixed) code path; /calls serves the count.
func Called() { calls.Add(1) }

func init() {
	http.HandleFunc("/calls", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "%d\n", calls.Load())
	})
}
