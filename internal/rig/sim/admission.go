package sim

import (
	"context"
	stdjson "encoding/json"
	"net/http"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Admission webhooks, as the real server calls them (admitcall.go makes
// the calls). A client's create, update, patch, apply and delete (not the
// in-process writes, which stand for controllers seeding state) is sent to
// every webhook of the stored MutatingWebhookConfigurations, then of the
// ValidatingWebhookConfigurations, configurations in name order, whose
// rules, namespaceSelector and objectSelector match it:
//
//   - rules: operations, apiGroups, apiVersions, resources ("pods",
//     "pods/status", "*" for every resource, "*/*" with subresources,
//     "pods/*", "*/status") and scope (Cluster, Namespaced, *);
//   - namespaceSelector on the labels of the object's namespace (of the
//     object itself for a namespace; ignored for other cluster-scoped
//     objects), objectSelector on the labels of the new or the old object;
//   - clientConfig.url only (a service reference fails the call), trusting
//     caBundle (the system roots when empty); ?timeout= and the call's
//     deadline from timeoutSeconds (10 s by default);
//   - failurePolicy Fail (the default) answers a failed call with the
//     real server's 500 naming the webhook, Ignore skips the webhook;
//   - sideEffects must be None or NoneOnDryRun (a configuration with
//     another value is refused with the real server's 422), so every
//     webhook takes dry runs; one stored in process without it is refused
//     a dry run with the real server's (v1beta1) 400;
//   - a denial is the webhook's code (at least 400) and reason with the
//     message "admission webhook "<name>" denied the request: <message>";
//     warnings become Warning headers; a mutating webhook's JSONPatch is
//     applied before the next webhook is called.
//
// Not simulated: matchConditions (CEL), matchPolicy Equivalent (a rule
// matches the version it names only), reinvocationPolicy, service
// references.

const (
	validatingConfigs = "validatingwebhookconfigurations.admissionregistration.k8s.io"
	mutatingConfigs   = "mutatingwebhookconfigurations.admissionregistration.k8s.io"
)

// webhookConfig is a stored Validating- or MutatingWebhookConfiguration,
// the fields the simulator reads.
type webhookConfig struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Webhooks []webhookSpec `json:"webhooks"`
}

type webhookSpec struct {
	Name         string `json:"name"`
	ClientConfig struct {
		URL      *string            `json:"url"`
		Service  stdjson.RawMessage `json:"service"`
		CABundle []byte             `json:"caBundle"`
	} `json:"clientConfig"`
	Rules                   []webhookRule         `json:"rules"`
	FailurePolicy           *string               `json:"failurePolicy"`
	NamespaceSelector       *metav1.LabelSelector `json:"namespaceSelector"`
	ObjectSelector          *metav1.LabelSelector `json:"objectSelector"`
	SideEffects             *string               `json:"sideEffects"`
	TimeoutSeconds          *int32                `json:"timeoutSeconds"`
	AdmissionReviewVersions []string              `json:"admissionReviewVersions"`
}

type webhookRule struct {
	Operations  []string `json:"operations"`
	APIGroups   []string `json:"apiGroups"`
	APIVersions []string `json:"apiVersions"`
	Resources   []string `json:"resources"`
	Scope       *string  `json:"scope"`
}

// requestUser is who sent a request, as a webhook's userInfo shows it.
type requestUser struct {
	Username string   `json:"username"`
	Groups   []string `json:"groups"`
}

type userKey struct{}

// withUser records who sent r for the admission of its writes.
func withUser(r *http.Request, u *User, admin bool) *http.Request {
	who := requestUser{Username: "system:admin", Groups: []string{"system:masters", "system:authenticated"}}
	if !admin && u != nil {
		who = requestUser{Username: u.Name, Groups: []string{"system:authenticated"}}
	}
	return r.WithContext(context.WithValue(r.Context(), userKey{}, who))
}

// admissionCtx is one client request's part in admission: who, whether a
// dry run, and the warnings the webhooks returned (one request, one
// goroutine: no lock).
type admissionCtx struct {
	ctx          context.Context
	user         requestUser
	dryRun       bool
	fieldManager string
	warnings     []string
}

func newAdmissionCtx(r *http.Request, fieldManager string) *admissionCtx {
	who, _ := r.Context().Value(userKey{}).(requestUser)
	if who.Username == "" {
		who = requestUser{Username: "system:admin", Groups: []string{"system:masters", "system:authenticated"}}
	}
	return &admissionCtx{ctx: r.Context(), user: who, dryRun: r.URL.Query().Get("dryRun") == "All", fieldManager: fieldManager}
}

// writeWarnings sends the webhooks' warnings as the real server does.
func (a *admissionCtx) writeWarnings(w http.ResponseWriter) {
	if a == nil {
		return
	}
	for _, msg := range a.warnings {
		w.Header().Add("Warning", `299 - "`+strings.ReplaceAll(msg, `"`, `\"`)+`"`)
	}
}

// admissionAttrs is one write as the webhooks see it.
type admissionAttrs struct {
	r         *resource
	sub       string
	operation string // CREATE, UPDATE, DELETE
	ns, name  string
	obj, old  map[string]any // obj nil on DELETE, old nil on CREATE
	adm       *admissionCtx
}

// webhooksConfigured reports whether any webhook configuration is stored:
// without one a write pays nothing for admission.
func (s *Server) webhooksConfigured() bool {
	st := s.store
	st.mu.RLock()
	defer st.mu.RUnlock()
	for _, k := range []string{validatingConfigs, mutatingConfigs} {
		if r := st.resources[k]; r != nil && len(r.objs) > 0 {
			return true
		}
	}
	return false
}

// loadWebhookConfigs reads the stored configurations of one kind, in name
// order. One that does not decode is skipped, as the real server would
// have refused it.
func (s *Server) loadWebhookConfigs(key string) []webhookConfig {
	st := s.store
	st.mu.RLock()
	r := st.resources[key]
	var raws [][]byte
	if r != nil {
		for _, k := range r.sortedLocked() {
			if o := r.objs[k]; o != nil {
				raws = append(raws, o.raw)
			}
		}
	}
	st.mu.RUnlock()
	out := make([]webhookConfig, 0, len(raws))
	for _, raw := range raws {
		var c webhookConfig
		if stdjson.Unmarshal(raw, &c) == nil {
			out = append(out, c)
		}
	}
	return out
}

// admit runs the mutating then the validating webhooks on a, returning the
// object as the mutating webhooks left it.
func (s *Server) admit(a *admissionAttrs) (map[string]any, *StatusError) {
	for _, kind := range []string{mutatingConfigs, validatingConfigs} {
		for _, cfg := range s.loadWebhookConfigs(kind) {
			for i := range cfg.Webhooks {
				h := &cfg.Webhooks[i]
				if !s.webhookMatches(h, a) {
					continue
				}
				obj, serr := s.callAdmissionWebhook(h, a, kind == mutatingConfigs)
				if serr != nil {
					return nil, serr
				}
				if obj != nil {
					a.obj = obj
				}
			}
		}
	}
	return a.obj, nil
}

func (s *Server) webhookMatches(h *webhookSpec, a *admissionAttrs) bool {
	if !slices.ContainsFunc(h.Rules, func(rule webhookRule) bool { return rule.matches(a) }) {
		return false
	}
	if !selectorMatches(h.ObjectSelector, labelsOf(a.obj)) && !selectorMatches(h.ObjectSelector, labelsOf(a.old)) {
		return false
	}
	if h.NamespaceSelector == nil {
		return true
	}
	switch {
	case a.r.info.key() == "namespaces":
		return selectorMatches(h.NamespaceSelector, labelsOf(a.obj)) || selectorMatches(h.NamespaceSelector, labelsOf(a.old))
	case !a.r.info.Namespaced:
		return true
	}
	return selectorMatches(h.NamespaceSelector, s.namespaceLabels(a.ns))
}

func (rule *webhookRule) matches(a *admissionAttrs) bool {
	in := func(list []string, v string) bool { return slices.Contains(list, v) || slices.Contains(list, "*") }
	if !in(rule.Operations, a.operation) || !in(rule.APIGroups, a.r.info.Group) || !in(rule.APIVersions, a.r.info.Version) {
		return false
	}
	if rule.Scope != nil {
		switch *rule.Scope {
		case "Cluster":
			if a.r.info.Namespaced {
				return false
			}
		case "Namespaced":
			if !a.r.info.Namespaced {
				return false
			}
		}
	}
	return slices.ContainsFunc(rule.Resources, func(entry string) bool {
		res, sub, _ := strings.Cut(entry, "/")
		if res != "*" && res != a.r.info.Resource {
			return false
		}
		return sub == a.sub || (sub == "*" && (a.sub != "" || res == "*"))
	})
}

func selectorMatches(sel *metav1.LabelSelector, set map[string]string) bool {
	if sel == nil {
		return true
	}
	ls, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false
	}
	return ls.Matches(labels.Set(set))
}

func labelsOf(m map[string]any) map[string]string {
	md, _ := m["metadata"].(map[string]any)
	out := map[string]string{}
	if l, ok := md["labels"].(map[string]any); ok {
		for k, v := range l {
			if s, ok := v.(string); ok {
				out[k] = s
			}
		}
	}
	return out
}

func (s *Server) namespaceLabels(ns string) map[string]string {
	st := s.store
	st.mu.RLock()
	defer st.mu.RUnlock()
	if o := st.resources["namespaces"].objs[ns]; o != nil {
		return o.labels
	}
	return map[string]string{"kubernetes.io/metadata.name": ns}
}

// admitWrite admits a client's create or update and commits what the
// mutating webhooks made of it. The webhooks are called without the
// store's lock (a webhook may read the server); the commit is then made
// only over the object they saw, so a write that raced in between makes
// the admission start again on the newer object, as the real server's
// update loop does. A client's own resourceVersion precondition fails as
// usual.
func (s *Server) admitWrite(op writeOp) (*object, bool, *StatusError) {
	if !op.r.info.Namespaced {
		op.ns = ""
	}
	for range 10 {
		cur, _ := s.current(op.r, op.ns, op.name)
		if (op.create && cur != nil) || (op.update && cur == nil) {
			return s.commitWrite(op) // the commit's own 409 or 404
		}
		a := &admissionAttrs{r: op.r, sub: op.owner.subresource, operation: "CREATE", ns: op.ns, name: op.name,
			obj: deepCopyJSON(op.m), adm: op.owner.adm}
		if cur != nil {
			a.operation = "UPDATE"
			if err := json.Unmarshal(cur.raw, &a.old); err != nil {
				return nil, false, newStatus(http.StatusInternalServerError, "InternalError", "stored object does not decode: "+err.Error(), nil)
			}
		}
		m, serr := s.admit(a)
		if serr != nil {
			return nil, false, serr
		}
		wo := op
		wo.m = m
		pinned := cur != nil && wo.precondRV == ""
		if pinned {
			wo.precondRV = cur.rvString()
		}
		o, created, serr := s.commitWrite(wo)
		if serr != nil && pinned && serr.Status.Reason == "Conflict" {
			continue
		}
		return o, created, serr
	}
	return nil, false, errConflict(op.r, op.name)
}

// admitDelete admits a client's delete of ns/name (the webhooks see the
// stored object as oldObject). A missing object is left to the delete's
// own 404.
func (s *Server) admitDelete(req *http.Request, t target) (*admissionCtx, *StatusError) {
	if !s.webhooksConfigured() {
		return nil, nil
	}
	cur, _ := s.current(t.r, t.ns, t.name)
	if cur == nil {
		return nil, nil
	}
	a := &admissionAttrs{r: t.r, operation: "DELETE", ns: t.ns, name: t.name, adm: newAdmissionCtx(req, "")}
	if err := json.Unmarshal(cur.raw, &a.old); err != nil {
		return nil, newStatus(http.StatusInternalServerError, "InternalError", "stored object does not decode: "+err.Error(), nil)
	}
	_, serr := s.admit(a)
	return a.adm, serr
}
