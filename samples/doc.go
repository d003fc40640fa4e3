// Package samples holds small leaky (and deliberately healthy) Go services
// used to exercise leakscope end to end, and the helpers to run them.
//
// Each subdirectory is a `package main` that imports only the standard
// library and samples/internal/service, which implements what they share.
// It serves net/http/pprof and a /work endpoint, prints
// exactly one first line to stdout ("listening on http://HOST:PORT") and
// exits cleanly on SIGINT or SIGTERM. Next to main.go, leak.json declares
// the ground truth: which goroutine or heap leaks the program plants, or
// that it is healthy and must not be flagged.
//
// [Load] and [All] read the ground truth; [Start] builds a sample and runs
// it for real, for tests in capture, analysis and web.
package samples
