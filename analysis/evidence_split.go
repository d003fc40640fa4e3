package analysis

import (
	"slices"
)

// Mixed sites. A site gathers the goroutines parked at one line with one
// creator function, but the wait-for graph decides each member apart: a
// pool whose instances are partly stuck (their releasers are gone) and
// partly in flight (a goroutine that can run will release them) holds
// both. Judged as one, the stuck part is a share of a group that can be
// woken and is lost among the live ones; so, in the latest snapshot,
// the members the program shows stuck for certain (every statement that
// could end their wait is known, and none can still run) become a site
// of their own whenever others of the site are woken by what the
// program shows. Each part's counts, goids, creators and persistence are
// its own members'; its earlier counts are those members parked there
// identically since then (the goroutines' since).

// splitMixed parts every mixed site of in (see above), each part just
// after the site it came from.
func splitMixed(in *loaded, w *waitGraph) {
	sd := in.detail
	if sd == nil || sd.truncated || w == nil {
		return
	}
	stuck, woken := map[*site][]*gor{}, map[*site]bool{}
	for _, x := range w.gs {
		s := x.site
		if s == nil || x.class != classParked {
			continue
		}
		switch {
		case x.prog != nil && !reachedBy(x):
			stuck[s] = append(stuck[s], x.gor)
		case x.reach == reachMention && x.wokeHow != "":
			woken[s] = true
		}
	}
	if len(stuck) == 0 {
		return
	}
	out := make([]*site, 0, len(in.sites)+len(stuck))
	parted := map[*site]bool{}
	for _, s := range in.sites {
		out = append(out, s)
		if ms := stuck[s]; len(ms) > 0 && woken[s] && splittable(s) {
			p := s.part(ms, in.d.snapshots, sd)
			out = append(out, p)
			parted[s], parted[p] = true, true
		}
	}
	in.sites = out
	repersist(sd, parted)
}

// repersist sums again, in one pass, the persistence of the parted
// sites' members, and the longest wait of the parts left in place.
func repersist(sd *snapDetail, parted map[*site]bool) {
	wait := map[*site]int64{}
	for s := range parted {
		s.persist = persistStat{}
	}
	for _, g := range sd.gs {
		if s := g.site; parted[s] {
			s.persist.add(g, sd.ts)
			wait[s] = max(wait[s], g.wait)
		}
	}
	for s := range parted {
		if s.maxWaitTS == sd.ts {
			s.maxWait = wait[s]
		}
	}
}

// splittable reports a site whose counts are all the dumps' own, so that
// they can be parted by member.
func splittable(s *site) bool {
	return !s.fromProfile && s.histPoints == 0 && s.ts == nil && s.exact && len(s.counts) > 0
}

// part moves members ms (of the latest snapshot, at times snaps) out of
// s into a new site, and returns it; repersist then sums both parts'
// persistence and waits.
func (s *site) part(ms []*gor, snaps []int64, sd *snapDetail) *site {
	p := *s
	p.counts = make([]float64, len(s.counts))
	p.creatorGoids = map[int64]int64{}
	p.goids, p.spread = nil, nil
	p.maxWaitTS, p.leaked = sd.ts, 0
	moved := map[int64]bool{}
	for _, g := range ms {
		g.site = &p
		moved[g.goid] = true
		p.goids = append(p.goids, g.goid)
		if g.creator != 0 {
			p.creatorGoids[g.creator]++
			if s.creatorGoids[g.creator]--; s.creatorGoids[g.creator] <= 0 {
				delete(s.creatorGoids, g.creator)
			}
		}
		if g.leaked {
			p.leaked++
		}
		for i, ts := range snaps {
			if g.since <= ts && i < len(p.counts) {
				p.counts[i]++
			}
		}
	}
	slices.Sort(p.goids)
	p.spread = p.goids
	for i := range s.counts {
		s.counts[i] = max(0, s.counts[i]-p.counts[i])
	}
	p.prevCount, p.survived, p.exactSurvived = 0, 0, 0
	for i := 0; i+1 < len(p.counts); i++ {
		p.prevCount += int64(p.counts[i]) // each was parked here in the next snapshot too
	}
	p.survived, p.exactSurvived = p.prevCount, p.prevCount
	s.prevCount, s.survived, s.exactSurvived = max(0, s.prevCount-p.prevCount), max(0, s.survived-p.survived), max(0, s.exactSurvived-p.exactSurvived)
	s.goids = slices.DeleteFunc(slices.Clone(s.goids), func(g int64) bool { return moved[g] })
	s.spread = slices.DeleteFunc(slices.Clone(s.spread), func(g int64) bool { return moved[g] })
	s.leaked = max(0, s.leaked-p.leaked)
	s.only, p.only = &memberSet{goids: p.goids}, &memberSet{goids: p.goids, in: true}
	return &p
}
