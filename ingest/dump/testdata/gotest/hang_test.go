// Package gotest holds tests whose output the dump parser's tests read:
// one that hangs until go test's -timeout panics it, one that logs a
// goroutine dump (indented, as test logs are).
package gotest

import (
	"runtime"
	"testing"
)

func TestHang(t *testing.T) {
	never := make(chan int)
	go func() { <-never }()
	<-never
}

func TestLogStack(t *testing.T) {
	never := make(chan int)
	go func() { never <- 1 }()
	buf := make([]byte, 1<<20)
	t.Log(string(buf[:runtime.Stack(buf, true)]))
}
