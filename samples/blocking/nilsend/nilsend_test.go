// Package nilsend: an event bus built by a struct literal forgets to make
// its channel; publishing sends on a nil channel, which blocks forever.
package nilsend

import "testing"

type event struct{ kind, obj string }

type bus struct {
	events chan event
	name   string
}

func newBus(name string) *bus { return &bus{name: name} } // events left nil

func (b *bus) publish(e event) { b.events <- e }

func TestPublish(t *testing.T) {
	b := newBus("pods")
	done := make(chan bool)
	go func() {
		b.publish(event{"add", "pod-1"})
		done <- true
	}()
	<-done
}
