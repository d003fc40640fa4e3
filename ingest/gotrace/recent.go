package gotrace

// recentStrings remembers the ids of the last few strings looked up.
// Rows repeat few values (region names, wait reasons, functions), mostly
// the very same string of the trace's table, which compares equal at once
// (same length, same bytes in memory): trying each of them costs less
// than hashing the string for a map, and no two of a handful of values
// push each other out, as they can in a slot picked by a hash.
type recentStrings[V any] struct {
	s    [recentLen]string
	v    [recentLen]V
	n    int // entries in use
	next int // the entry replaced next
}

const recentLen = 8

// get returns the id of s, if s is among the recent strings.
func (c *recentStrings[V]) get(s string) (V, bool) {
	for i := range c.n {
		if c.s[i] == s {
			return c.v[i], true
		}
	}
	var zero V
	return zero, false
}

// put remembers the id of s, in place of the oldest entry once full.
func (c *recentStrings[V]) put(s string, v V) {
	c.s[c.next], c.v[c.next] = s, v
	c.next = (c.next + 1) % recentLen
	c.n = min(c.n+1, recentLen)
}

// reset forgets every entry.
func (c *recentStrings[V]) reset() { *c = recentStrings[V]{} }
