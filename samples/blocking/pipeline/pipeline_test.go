// Package pipeline: a three-stage pipeline (read, parse, store). The store
// stage stops at the first bad record and returns; parse blocks sending to
// it, and read blocks sending to parse.
package pipeline

import (
	"errors"
	"strconv"
	"sync"
	"testing"
)

func read(lines []string, out chan<- string, wg *sync.WaitGroup) {
	defer wg.Done()
	defer close(out)
	for _, l := range lines {
		out <- l
	}
}

func parse(in <-chan string, out chan<- int, wg *sync.WaitGroup) {
	defer wg.Done()
	defer close(out)
	for l := range in {
		n, err := strconv.Atoi(l)
		if err != nil {
			n = -1
		}
		out <- n
	}
}

func store(in <-chan int) (sum int, err error) {
	for n := range in {
		if n < 0 {
			return sum, errors.New("bad record") // bug: stops draining in
		}
		sum += n
	}
	return sum, nil
}

func TestPipeline(t *testing.T) {
	lines := []string{"1", "x", "3", "4", "5", "6"}
	raw, nums := make(chan string), make(chan int)
	var wg sync.WaitGroup
	wg.Add(2)
	go read(lines, raw, &wg)
	go parse(raw, nums, &wg)
	if _, err := store(nums); err != nil {
		t.Log(err)
	}
	wg.Wait()
}
