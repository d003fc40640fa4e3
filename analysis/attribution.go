package analysis

// attribution says where a goroutine group comes from: the creator's
// file and line, its chain of creators, and the trace span open when its
// members were created.
type attribution struct {
	creatorFile string
	creatorLine int
	ancestry    []string
	// span is the task or region most sampled members were created in
	// ("" when no trace shows it); spanHits how many of spanOf sampled
	// members.
	span             string
	spanHits, spanOf int
}

// attribute finds where the goroutines of a site were created.
func attribute(in *loaded, s *site) attribution {
	var a attribution
	// Creator's file and line: the frame of the creator function in the
	// dump's "created by" stack.
	if cs := s.creatorStackID; cs != 0 {
		for _, f := range in.st.framesOf(cs) {
			if f.Function == s.creator {
				a.creatorFile, a.creatorLine = f.File, f.Line
				break
			}
		}
	}
	// Ancestry: follow the most common creator goroutine.
	var topCreator, topN int64
	for g, c := range s.creatorGoids {
		if c > topN || c == topN && g < topCreator {
			topCreator, topN = g, c
		}
	}
	a.ancestry = in.pop.chain(s.creator, topCreator)
	if a.ancestry == nil {
		a.ancestry = []string{}
	}
	// Span open on the creator when members were created, from the trace.
	spanCount := map[string]int{}
	for _, g := range s.goids {
		t := in.tg[g]
		if t == nil || t.created == 0 || t.parent == 0 {
			continue
		}
		if sp := in.ix.openAt(t.parent, t.created); sp != nil {
			spanCount[sp.kind+" "+sp.name]++
		}
	}
	if best := topKey(toInt64(spanCount)); best != "" {
		a.span, a.spanHits, a.spanOf = best, spanCount[best], len(s.goids)
	}
	return a
}
