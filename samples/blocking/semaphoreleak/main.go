// Command semaphoreleak limits concurrent uploads with a channel
// semaphore; the error path returns without releasing its slot. After
// four failures every slot is gone and each new upload blocks acquiring.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

type limiter struct {
	slots chan struct{}
}

func (l *limiter) do(op func() error) error {
	l.slots <- struct{}{} // acquire
	if err := op(); err != nil {
		return err // bug: the slot is never released
	}
	<-l.slots
	return nil
}

func upload(l *limiter, id int) {
	err := l.do(func() error {
		if id < 4 {
			return errors.New("upload: 503")
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "upload", id, err)
	}
}

func main() {
	l := &limiter{slots: make(chan struct{}, 4)}
	for i := 0; i < 4; i++ {
		upload(l, i)
	}
	for i := 4; i < 14; i++ {
		go upload(l, i)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
