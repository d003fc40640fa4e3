// Command deepvisit walks an ownership graph recursively, locking each
// node while it visits the node's children. The graph has a cycle
// (a deployment that lists its own replica set's owner), so deep in the
// recursion the walker locks a node it already holds.
package main

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

type node struct {
	name     string
	mu       sync.Mutex
	children []*node
	visits   int
}

func (n *node) visit(depth int) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.visits++
	total := 1
	for _, c := range n.children {
		total += c.visit(depth + 1)
	}
	return total
}

func chain(names ...string) []*node {
	ns := make([]*node, len(names))
	for i, name := range names {
		ns[i] = &node{name: name}
		if i > 0 {
			ns[i-1].children = append(ns[i-1].children, ns[i])
		}
	}
	return ns
}

func main() {
	ns := chain("ns", "deploy", "rs", "pod", "container", "volume", "claim", "pv", "class", "provisioner", "deploy-ref")
	last := ns[len(ns)-1]
	last.children = append(last.children, ns[1]) // the cycle
	go ns[0].visit(0)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
