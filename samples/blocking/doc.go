// Package blocking is leakscope's corpus of small blocking-bug programs and
// healthy look-alikes, each in its own directory with a truth.json (see
// [Truth]). Every program is its own Go module whose path has no dot (a
// test kernel's package path is its directory name, as in the benchmark
// kernels of real bugs), so `go test ./...` of the leakscope module never
// runs them; dev/corpus builds, runs and measures them (make
// accuracy). See README.md in this directory for the list.
package blocking
