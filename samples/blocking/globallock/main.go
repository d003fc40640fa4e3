// Command globallock guards its token cache with a package-level mutex.
// The refresher holds the mutex while it waits for the identity server's
// reply, which never comes; every lookup queues behind it. The mutex and
// the reply channel are reachable from globals, so the goroutineleak
// detector cannot prove anything leaked.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

var (
	cacheMu sync.Mutex
	tokens  = map[string]string{}
	replies = make(chan string)
)

func refresh(user string) {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	tokens[user] = <-replies // bug: waits under the lock, nobody replies
}

func lookup(user string) string {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	return tokens[user]
}

func main() {
	go refresh("admin")
	for cacheMu.TryLock() {
		cacheMu.Unlock()
	}
	for i := 0; i < 10; i++ {
		go func() { _ = lookup(fmt.Sprint("user-", i)) }()
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
