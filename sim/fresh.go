package sim

// Fresh returns a simulator with s's options, tasks and the fault plans s has made so far (call
// Prepare first to share them all; plans made later are the same, being drawn from the seed), but
// none of its request history, emitted faults or prefix cache. A benchmark gives each policy its
// own, so that every policy's first request for a task is a first attempt and meets the same
// planned fault, and no policy warms the prefix cache for another.
//
// (Added by the benchmark's author, issue 5 item 3; it only reads s.)
func (s *Server) Fresh() *Server {
	f := &Server{opts: s.opts, tasks: s.tasks, enc: s.enc, pl: s.pl,
		state: map[string]*taskState{}, stats: Stats{Outcomes: map[string]int{}}}
	s.mu.Lock()
	states := make(map[string]*taskState, len(s.state))
	for id, st := range s.state {
		states[id] = st
	}
	s.mu.Unlock()
	for id, st := range states {
		st.planMu.Lock()
		f.state[id] = &taskState{plan: st.plan, planErr: st.planErr, seen: map[uint64]int{}, repeats: map[*Fault]int{}, retries: map[string]int{}}
		st.planMu.Unlock()
	}
	return f
}
