package sim

// Change is one committed change as the server's history records it: what a
// watch from before it would deliver.
type Change struct {
	// Resource is the resource's key: "pods", "deployments.apps".
	Resource string
	// Type is "ADDED", "MODIFIED" or "DELETED".
	Type            string
	Namespace, Name string
	// ResourceVersion is the change's (for a delete, the deletion's).
	ResourceVersion uint64
}

// journal is one recording of changes.
type journal struct {
	resource string // "" records every resource
	changes  []Change
}

// Journal records every change to resource ("" for all) from now on, however
// small the watch history or whatever Compact and DropWatches do to it, until
// stop is called; changes returns what was recorded so far, in commit order. It
// is for tests that compare a client's stream of events with the server's.
func (s *Server) Journal(resource string) (changes func() []Change, stop func()) {
	j := &journal{resource: resource}
	st := s.store
	st.mu.Lock()
	st.journals = append(st.journals, j)
	st.mu.Unlock()
	changes = func() []Change {
		st.mu.Lock()
		defer st.mu.Unlock()
		return append([]Change(nil), j.changes...)
	}
	stop = func() {
		st.mu.Lock()
		defer st.mu.Unlock()
		for i, x := range st.journals {
			if x == j {
				st.journals = append(st.journals[:i], st.journals[i+1:]...)
				return
			}
		}
	}
	return changes, stop
}

// journalLocked records ev in every journal that wants it; mu is held.
func (s *store) journalLocked(ev event) {
	if len(s.journals) == 0 {
		return
	}
	key := ev.res.info.key()
	c := Change{Resource: key, Type: [...]string{evAdded: "ADDED", evModified: "MODIFIED", evDeleted: "DELETED"}[ev.typ],
		Namespace: ev.obj.namespace, Name: ev.obj.name, ResourceVersion: ev.rv}
	for _, j := range s.journals {
		if j.resource == "" || j.resource == key {
			j.changes = append(j.changes, c)
		}
	}
}
