package analysis

// leakSites returns, for the last goroutineleak profile in the bundle, the
// leaked goroutine count per location (function and line of the location
// frame).
func leakSites(p *profileData, st *stackTable) (map[Frame]int64, int64) {
	if len(p.leakTS) == 0 {
		return nil, 0
	}
	last := p.leakTS[len(p.leakTS)-1]
	out := map[Frame]int64{}
	var total int64
	for stack, m := range p.leak {
		v, ok := m[last]
		if !ok || v[0] == 0 {
			continue
		}
		loc, _ := locationFrame(st.framesOf(stack))
		out[Frame{Function: loc.Function, Line: loc.Line}] += v[0]
		total += v[0]
	}
	return out, total
}
