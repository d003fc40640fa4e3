// Command mainblocked runs its migration in a goroutine and waits on a
// done channel; the migration recovers from a panic and returns without
// closing done, so main itself blocks forever.
package main

import (
	"fmt"
	"os"
)

func migrate(done chan<- struct{}) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintln(os.Stderr, "migration failed:", r)
			return // bug: done is never closed
		}
		close(done)
	}()
	var steps []string
	fmt.Println(steps[3])
}

func main() {
	done := make(chan struct{})
	go migrate(done)
	<-done
	fmt.Println("migrated")
}
