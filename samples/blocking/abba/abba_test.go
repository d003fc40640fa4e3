// Package abba: two transfers lock their accounts in argument order, one
// a→b and the other b→a. Each takes its first lock, then waits for the
// other's: a lock-order cycle of two goroutines.
package abba

import (
	"sync"
	"testing"
)

type account struct {
	mu      sync.Mutex
	balance int
}

// bothHold makes the interleaving deterministic: each transfer takes its
// second lock only once both hold their first.
var bothHold sync.WaitGroup

func transfer(from, to *account, amount int) {
	from.mu.Lock()
	defer from.mu.Unlock()
	bothHold.Done()
	bothHold.Wait()
	to.mu.Lock()
	defer to.mu.Unlock()
	from.balance -= amount
	to.balance += amount
}

func TestTransfer(t *testing.T) {
	a, b := &account{balance: 100}, &account{balance: 100}
	bothHold.Add(2)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); transfer(a, b, 10) }()
	go func() { defer wg.Done(); transfer(b, a, 20) }()
	wg.Wait()
}
