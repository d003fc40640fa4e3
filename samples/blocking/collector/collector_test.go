// Package collector: fetchAll fans out one worker per URL, each sending its
// result on an unbuffered channel. The collector returns at the first
// error, so the remaining workers block on send forever and the test's
// wait for the workers never ends.
package collector

import (
	"errors"
	"sync"
	"testing"
	"time"
)

type result struct {
	url string
	err error
}

type fetcher struct {
	wg sync.WaitGroup
}

func (f *fetcher) worker(url string, out chan<- result) {
	defer f.wg.Done()
	var err error
	if url == "bad" {
		err = errors.New("unreachable") // fails fast
	} else {
		time.Sleep(10 * time.Millisecond) // the fetch
	}
	out <- result{url: url, err: err}
}

func (f *fetcher) fetchAll(urls []string) error {
	out := make(chan result)
	for _, u := range urls {
		f.wg.Add(1)
		go f.worker(u, out)
	}
	for range urls {
		if r := <-out; r.err != nil {
			return r.err // the other workers are still sending
		}
	}
	return nil
}

func TestFetchAll(t *testing.T) {
	f := &fetcher{}
	urls := []string{"bad", "a", "b", "c", "d", "e"}
	if err := f.fetchAll(urls); err != nil {
		t.Log(err)
	}
	f.wg.Wait()
}
