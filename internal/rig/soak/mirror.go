package soak

import (
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// pod is the slim type the soak's informers decode into.
type pod struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
}

func podKey(p *pod) string { return p.Namespace + "/" + p.Name }

// mirror is a handler that rebuilds an informer's view from its calls and
// records calls that contradict earlier ones.
type mirror struct {
	enqueue func(string)

	mu         sync.Mutex
	state      map[string]string // key -> resourceVersion
	violations []string
	deletes    int
	tombstones int
}

func newMirror(enqueue func(string)) *mirror {
	return &mirror{state: map[string]string{}, enqueue: enqueue}
}

func (m *mirror) violate(format string, args ...any) {
	if len(m.violations) < 100 {
		m.violations = append(m.violations, fmt.Sprintf(format, args...))
	}
}

func (m *mirror) OnAdd(p *pod, _ bool) {
	k := podKey(p)
	m.mu.Lock()
	if _, ok := m.state[k]; ok {
		m.violate("add of known %s", k)
	}
	m.state[k] = p.ResourceVersion
	m.mu.Unlock()
	m.enqueue(k)
}

func (m *mirror) OnUpdate(old, p *pod) {
	k := podKey(p)
	m.mu.Lock()
	if rv, ok := m.state[k]; !ok || rv != old.ResourceVersion {
		m.violate("update of %s from %s but the handler had %q", k, old.ResourceVersion, rv)
	}
	m.state[k] = p.ResourceVersion
	m.mu.Unlock()
	m.enqueue(k)
}

func (m *mirror) OnDelete(p *pod, unknown bool) {
	k := podKey(p)
	m.mu.Lock()
	if _, ok := m.state[k]; !ok {
		m.violate("delete of unknown %s", k)
	}
	delete(m.state, k)
	m.deletes++
	if unknown {
		m.tombstones++
	}
	m.mu.Unlock()
	m.enqueue(k)
}

// reset forgets the state, for a new informer whose first calls are the
// adds of its initial list; counters and violations stay.
func (m *mirror) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state = map[string]string{}
}

func (m *mirror) snapshot() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]string, len(m.state))
	for k, v := range m.state {
		out[k] = v
	}
	return out
}

// diff counts keys whose resourceVersion differs between a and b, or that
// only one of them has.
func diff(a, b map[string]string) int {
	n := 0
	for k, v := range a {
		if b[k] != v {
			n++
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			n++
		}
	}
	return n
}
