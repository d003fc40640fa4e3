// Package kube holds samples built on the real k8s.io/client-go (a fake
// clientset, real informers, watches, workqueues and event broadcasters).
// It is a module of its own so that the leakscope module's dependency
// graph does not take client-go; `make deps` downloads it and the samples
// harness builds each sample here like any other.
package kube
