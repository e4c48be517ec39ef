package sim

import (
	"net/http"

	"sigs.k8s.io/yaml"
)

// RequestCounts counts requests by kind (a plain value; zero means none).
type RequestCounts struct {
	List   uint64 `json:"list"`
	Watch  uint64 `json:"watch"`
	Get    uint64 `json:"get"`
	Create uint64 `json:"create"`
	Update uint64 `json:"update"`
	Patch  uint64 `json:"patch"`
	Delete uint64 `json:"delete"`
}

func (c *RequestCounts) add(o RequestCounts) {
	c.List += o.List
	c.Watch += o.Watch
	c.Get += o.Get
	c.Create += o.Create
	c.Update += o.Update
	c.Patch += o.Patch
	c.Delete += o.Delete
}

// Stats is a snapshot of the server's counters (GET /sim/stats returns it as JSON);
// a plain value taken at one moment.
type Stats struct {
	ResourceVersion uint64 `json:"resourceVersion"`
	// Requests sums ByResource.
	Requests   RequestCounts            `json:"requests"`
	ByResource map[string]RequestCounts `json:"byResource"`
	// Discovery counts /api, /apis, /version and group-version documents.
	Discovery uint64 `json:"discovery"`
	// NotFound counts requests for paths that name no resource.
	NotFound uint64 `json:"notFound"`
	// ActiveWatches is the number of open watch streams.
	ActiveWatches int64 `json:"activeWatches"`
	// TerminatedWatches counts watchers ended for falling out of the history window.
	TerminatedWatches uint64 `json:"terminatedWatches"`
	// FaultsInjected counts requests that took a queued fault (each uses one of
	// its Count), whether or not the fault then fired; FaultsFired says what did.
	FaultsInjected uint64 `json:"faultsInjected"`
	// FaultsFired counts, per fault type, the faults applied to requests and the
	// actions performed (see Server.FiredFaults). Never nil.
	FaultsFired map[FaultType]int64 `json:"faultsFired"`
	// Objects counts current objects per resource.
	Objects map[string]int `json:"objects"`
}

// Stats returns the request counters and object counts.
func (s *Server) Stats() Stats {
	st := Stats{ByResource: map[string]RequestCounts{}, Objects: map[string]int{},
		Discovery: s.discovery.Load(), NotFound: s.other.Load(), ActiveWatches: s.watchers.Load(),
		TerminatedWatches: s.terminated.Load(), FaultsInjected: s.faults.injected.Load(),
		FaultsFired: s.FiredFaults()}
	s.store.mu.RLock()
	st.ResourceVersion = s.store.rv
	resources := append([]*resource(nil), s.store.ordered...)
	for _, r := range resources {
		st.Objects[r.info.key()] = len(r.objs)
	}
	s.store.mu.RUnlock()
	for _, r := range resources {
		c := RequestCounts{
			List: r.counts[verbList].Load(), Watch: r.counts[verbWatch].Load(), Get: r.counts[verbGet].Load(),
			Create: r.counts[verbCreate].Load(), Update: r.counts[verbUpdate].Load(),
			Patch: r.counts[verbPatch].Load(), Delete: r.counts[verbDelete].Load(),
		}
		st.ByResource[r.info.key()] = c
		st.Requests.add(c)
	}
	return st
}

// ResetStats zeroes the request and fault counters (not the object counts or the RV).
func (s *Server) ResetStats() {
	s.store.mu.RLock()
	resources := append([]*resource(nil), s.store.ordered...)
	s.store.mu.RUnlock()
	for _, r := range resources {
		for i := range r.counts {
			r.counts[i].Store(0)
		}
	}
	s.discovery.Store(0)
	s.other.Store(0)
	s.terminated.Store(0)
	s.faults.injected.Store(0)
	s.faults.resetFired()
}

// FaultReport is the answer of the /sim/faults endpoint: the faults still
// queued and what has fired so far. A plain value taken at one moment.
type FaultReport struct {
	// Pending are the queued request faults with their remaining counts. Never nil.
	Pending []Fault `json:"pending"`
	// Fired is Server.FiredFaults: per type, the request faults applied and the
	// actions performed. Never nil.
	Fired map[FaultType]int64 `json:"fired"`
}

func (s *Server) faultReport() FaultReport {
	return FaultReport{Pending: s.Faults(), Fired: s.FiredFaults()}
}

// serveAdmin serves the /sim/ endpoints:
//
//	GET    /sim/faults  FaultReport: pending faults and fired counts
//	POST   /sim/faults  queue a Fault, or run an action (compact, expire-continue, drop-watches); FaultReport
//	DELETE /sim/faults  clear pending faults (fired counts stay); FaultReport
//	GET    /sim/stats   Stats
func (s *Server) serveAdmin(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/sim/stats" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, s.Stats())
	case r.URL.Path == "/sim/faults" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, s.faultReport())
	case r.URL.Path == "/sim/faults" && r.Method == http.MethodDelete:
		s.ClearFaults()
		writeJSON(w, http.StatusOK, s.faultReport())
	case r.URL.Path == "/sim/faults" && r.Method == http.MethodPost:
		body, serr := s.readBody(r)
		if serr != nil {
			writeStatus(w, serr)
			return
		}
		var f Fault
		if err := json.Unmarshal(body, &f); err != nil {
			writeStatus(w, errBadRequest("fault body is not a JSON Fault: "+err.Error()))
			return
		}
		if err := s.InjectFault(f); err != nil {
			writeStatus(w, errBadRequest(err.Error()))
			return
		}
		writeJSON(w, http.StatusCreated, s.faultReport())
	case r.URL.Path == "/sim/faults" || r.URL.Path == "/sim/stats":
		writeStatus(w, errMethodNotAllowed())
	default:
		writeStatus(w, errPathNotFound())
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeStatus(w, newStatus(http.StatusInternalServerError, "InternalError", err.Error(), nil))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// yamlToJSON converts a YAML request body.
func yamlToJSON(b []byte) ([]byte, error) { return yaml.YAMLToJSON(b) }
