// Command twobugs has two independent bugs. Each settlement request starts
// a goroutine that waits for a receipt nobody ever sends (one leaked
// goroutine per request), and once, two transfers between the same two
// accounts take the accounts' mutexes in opposite order and deadlock.
package main

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

type account struct {
	mu      sync.Mutex
	balance int
}

// transfer locks from, then to: two transfers in opposite directions
// deadlock once both hold their first lock.
func transfer(from, to *account, amount int, bothLocked *sync.WaitGroup) {
	from.mu.Lock()
	defer from.mu.Unlock()
	bothLocked.Done()
	bothLocked.Wait()
	to.mu.Lock()
	defer to.mu.Unlock()
	from.balance -= amount
	to.balance += amount
}

// awaitReceipt waits for the bank's receipt; the request that created the
// channel returns without ever sending on it.
func awaitReceipt(receipts <-chan string, id int) {
	r := <-receipts
	_ = r
	_ = id
}

func settleAccounts(id int) {
	receipts := make(chan string)
	go awaitReceipt(receipts, id)
	// bug: returns without sending a receipt or closing the channel
}

func main() {
	a, b := &account{balance: 100}, &account{balance: 100}
	var bothLocked sync.WaitGroup
	bothLocked.Add(2)
	go transfer(a, b, 10, &bothLocked)
	go transfer(b, a, 20, &bothLocked)
	go func() {
		for id := 0; ; id++ {
			settleAccounts(id)
			time.Sleep(100 * time.Millisecond)
		}
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
