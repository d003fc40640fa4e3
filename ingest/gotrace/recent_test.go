package gotrace

import (
	"fmt"
	"testing"
)

// TestRecentStrings: the last recentLen strings put are found with their
// ids, older ones are not, and an equal string with other bytes in memory
// is found too.
func TestRecentStrings(t *testing.T) {
	var c recentStrings[int]
	for i := range recentLen + 2 {
		c.put(fmt.Sprint("name", i), i)
	}
	for i := range recentLen + 2 {
		id, ok := c.get(fmt.Sprint("name", i))
		if want := i >= 2; ok != want || (ok && id != i) {
			t.Errorf("get(name%d) = %d, %v; want %d, %v", i, id, ok, i, want)
		}
	}
	c.reset()
	if _, ok := c.get("name9"); ok {
		t.Error("found after reset")
	}
}
