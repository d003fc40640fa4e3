package gotrace

import "testing"

// TestCuer: the next generation is cued once cueAt of this one's events,
// estimated from the events per byte of the one before, are handed over,
// or at the end of this one if the estimate was too high; each
// generation cues once, and the estimate follows the generations.
func TestCuer(t *testing.T) {
	p := &parser{cue: make(chan struct{}, 1), perByte: 0.5}
	c := &chunk{off: 100, end: 1100} // 1000 bytes: 500 events expected, cued at 400
	cues := func() int {
		select {
		case <-p.cue:
			return 1
		default:
			return 0
		}
	}
	q := p.newCuer(c)
	if q.handed(300); cues() != 0 {
		t.Fatal("cued after 300 of 500 expected events")
	}
	if q.handed(100); cues() != 1 {
		t.Fatal("not cued after 400 of 500 expected events")
	}
	q.handed(100)
	if q.end(c); cues() != 0 {
		t.Fatal("cued twice in one generation")
	}
	if p.perByte != 0.5 {
		t.Fatalf("events per byte %v, want 0.5", p.perByte)
	}

	// Fewer events than expected: cued at the end, and the next
	// generation expects fewer.
	q = p.newCuer(c)
	if q.handed(100); cues() != 0 {
		t.Fatal("cued after 100 of 500 expected events")
	}
	if q.end(c); cues() != 1 {
		t.Fatal("not cued at the end of the generation")
	}
	if p.perByte != 0.1 {
		t.Fatalf("events per byte %v, want 0.1", p.perByte)
	}

	// Without an opener nothing is cued (the channel is nil: a send
	// would block for ever).
	p = &parser{}
	q = p.newCuer(c)
	q.handed(1000)
	q.end(c)
}
