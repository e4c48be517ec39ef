package controller

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"
)

// DefaultStaleAfter is how long an informer may go without any event,
// bookmark or list before readiness calls it stale. With bookmarks on, a
// healthy watch hears from the server about once a minute even on a quiet
// resource.
const DefaultStaleAfter = 5 * time.Minute

// Handler serves the manager's probes and, when ManagerOptions.Metrics is
// an http.Handler (metrics.Set is), its metrics:
//
//   - /healthz: 200 while the manager is running (liveness: the process
//     is not wedged).
//   - /readyz: 200 once every informer has synced, is watching and heard
//     from the server within DefaultStaleAfter, and the webhook server
//     (ManagerOptions.Webhook) serves; 503 otherwise. Both answer
//     a JSON body naming each informer's state.
//   - /metrics: the metrics, if any.
func (m *Manager) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		m.mu.Lock()
		running := m.running
		m.mu.Unlock()
		writeProbe(w, running, nil)
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		ready, states := m.readiness(time.Now())
		writeProbe(w, ready, states)
	})
	if h, ok := m.opts.Metrics.(http.Handler); ok {
		mux.Handle("/metrics", h)
	}
	return mux
}

// informerState is one informer's line in a probe's body.
type informerState struct {
	Name            string `json:"name"`
	Synced          bool   `json:"synced"`
	Watching        bool   `json:"watching"`
	SecondsSince    int64  `json:"secondsSinceLastActivity,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
	LastError       string `json:"lastError,omitempty"`
	Ready           bool   `json:"ready"`
}

// readiness reports whether every informer is ready at now, and each one's
// state.
func (m *Manager) readiness(now time.Time) (bool, []informerState) {
	ready := true
	var out []informerState
	for _, h := range m.Health() {
		s := informerState{Name: h.Name, Synced: h.Synced, Watching: h.Watching, ResourceVersion: h.ResourceVersion}
		if !h.LastActivity.IsZero() {
			s.SecondsSince = int64(now.Sub(h.LastActivity) / time.Second)
		}
		if h.LastError != nil {
			s.LastError = h.LastError.Error()
		}
		s.Ready = h.Synced && h.Watching && !h.LastActivity.IsZero() && now.Sub(h.LastActivity) < DefaultStaleAfter
		ready = ready && s.Ready
		out = append(out, s)
	}
	if w := m.webhookState(); w != nil {
		ready = ready && w.Ready
		out = append(out, *w)
	}
	slices.SortFunc(out, func(a, b informerState) int { return strings.Compare(a.Name, b.Name) })
	return ready, out
}

func writeProbe(w http.ResponseWriter, ok bool, states []informerState) {
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(struct {
		OK        bool            `json:"ok"`
		Informers []informerState `json:"informers,omitempty"`
	}{ok, states})
}
