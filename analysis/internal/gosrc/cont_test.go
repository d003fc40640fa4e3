package gosrc

import "testing"

const rangeSrc = `package main

import "time"

func consume(results chan int) {
	for range results {
		time.Sleep(time.Second) // @nap
	}
}

func work(jobs, results chan int) {
	for j := range jobs {
		results <- j // @send
	}
}

func main() {
	jobs, results := make(chan int), make(chan int)
	go work(jobs, results)
	go consume(results)
	jobs <- 1 // @feed
}
`

// TestRangeReceivesAgain checks that a goroutine in the body of a range
// over a channel receives from it again on its next turn: the receive
// lies in the loop's header, in none of go/cfg's nodes.
func TestRangeReceivesAgain(t *testing.T) {
	g := load(t, rangeSrc)
	send := g.wait(t, "chan send", g.at("main.work", "send"))
	if _, ok := g.can(send.Cases[0], -1, g.at("main.consume", "nap")); !ok {
		t.Error("a consumer sleeping in its range body cannot receive the worker's send")
	}
	feed := g.wait(t, "chan send", g.at("main.main", "feed"))
	if _, ok := g.can(feed.Cases[0], 0, g.at("main.work", "send")); !ok {
		t.Error("a worker blocked in its range body cannot take the next job")
	}
}
