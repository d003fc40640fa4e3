// Package libs holds samples built on real libraries other than
// Kubernetes' (google.golang.org/grpc, golang.org/x/sync/errgroup) and on
// the standard library's leaking shapes the library rules name (an HTTP
// response body never closed, a context's cancel function dropped). It is
// a module of its own so that the leakscope module's dependency graph
// does not take grpc; `make deps` downloads it and the samples harness
// builds each sample here like any other.
package libs
