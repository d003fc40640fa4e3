package analysis

// basisServed is the basis of an origin read from the members' own
// stacks: a library's serving loop (net/http's Serve, a gRPC server's
// stream loop) starts them per connection or request and calls the
// user's code on them.
const basisServed = "served"

// servedOrigin is the origin of goroutines a library's serving loop
// starts per connection or request: the outermost frame of the user's
// code on the members' own stack (the handler the loop called), when
// the function holding the go statement is a library's and most
// creator goroutines are still running it (the loop that accepts the
// next connection, read from the latest dump). Their creation chain then
// leads to whoever started the server, which says nothing of the leak;
// it is kept as context. Nil when the site is not such a group.
func servedOrigin(in *loaded, s *site) *Origin {
	if s.creator == "" || in.detail == nil || len(s.creatorGoids) == 0 {
		return nil
	}
	if in.st.code.of(s.creator, "").owner == OwnerUser {
		return nil
	}
	handler := -1
	for i := len(s.frames) - 1; i >= 0; i-- {
		if isUser(s.frames[i]) {
			handler = i
			break
		}
	}
	if handler < 0 {
		return nil
	}
	var serving, all, loop int64
	for cg, n := range s.creatorGoids {
		all += n
		g := in.detail.byGoid[cg]
		if g == nil || !runs(in.st.framesOf(g.stack), s.creator) {
			continue
		}
		serving += n
		loop = cg
	}
	if 2*serving <= all {
		return nil
	}
	f := s.frames[handler]
	return &Origin{Function: f.Function, File: f.File, Line: f.Line, Basis: basisServed, Goid: loop, Members: serving, Sampled: all}
}

// runs reports whether a stack has a frame of function fn.
func runs(frames []Frame, fn string) bool {
	for _, f := range frames {
		if f.Function == fn {
			return true
		}
	}
	return false
}
