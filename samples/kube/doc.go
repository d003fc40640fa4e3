// Package kube holds samples built on the real k8s.io/client-go (a fake
// clientset, real informers, watches, workqueues and event broadcasters)
// and sigs.k8s.io/controller-runtime (its fake client and a real
// controller with its workers and sources). It is a module of its own so
// that the leakscope module's dependency graph does not take them; `make deps` downloads it and the samples
// harness builds each sample here like any other.
package kube
