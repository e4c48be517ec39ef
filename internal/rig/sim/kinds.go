package sim

import "fmt"

// ResourceFor returns the in-process name ("pods", "deployments.apps") of the
// resource whose objects have this apiVersion ("v1", "apps/v1") and kind.
func (s *Server) ResourceFor(apiVersion, kind string) (string, error) {
	s.store.mu.RLock()
	defer s.store.mu.RUnlock()
	for _, r := range s.store.ordered {
		if r.info.Kind == kind && r.info.apiVersion() == apiVersion {
			return r.info.key(), nil
		}
	}
	return "", fmt.Errorf("sim: no resource serves kind %q of apiVersion %q", kind, apiVersion)
}
