package main

import "sync/atomic"

// counter counts lookups.
type counter struct{ atomic.Int64 }
