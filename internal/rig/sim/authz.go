package sim

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
)

// User is an identity the server knows by a bearer token, allowed only what its
// Rules grant, like a static-token user under RBAC. A request it may not make gets
// 403 Forbidden with the real server's message. The zero value is not valid: Name and
// Token are required.
type User struct {
	// Name appears in 403 messages ("User \"nobody\" cannot list ..."). Required.
	Name string
	// Token is the user's bearer token. Required; unique among Users and different
	// from Options.BearerToken.
	Token string
	// Rules grant access; a request is allowed when any rule matches. Nil means
	// nothing is allowed but discovery (/api, /apis, /version, /openapi), which the
	// real server grants every authenticated user.
	Rules []Rule
}

// Rule grants verbs on resources, cluster-wide or in some namespaces. A rule with
// no Verbs or no Resources matches nothing.
type Rule struct {
	// Verbs are API verbs: get, list, watch, create, update, patch, delete,
	// deletecollection; "*" means all.
	Verbs []string
	// Resources are named as the in-process API names them: "pods",
	// "deployments.apps"; a subresource as "pods/status" or
	// "deployments.apps/status"; "*" means every resource and subresource.
	Resources []string
	// Namespaces restrict the rule to requests in these namespaces, like a
	// RoleBinding. Nil means everywhere, cluster-scoped requests included, like a
	// ClusterRoleBinding.
	Namespaces []string
}

// ruleVerbs are the verbs a Rule may name.
var ruleVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "*"}

// validateUsers checks Options.Users, naming the first bad field.
func validateUsers(users []User, admin string) error {
	tokens := make(map[string]int, len(users))
	for i, u := range users {
		switch {
		case u.Name == "":
			return fmt.Errorf("sim: Options.Users[%d].Name is required", i)
		case u.Token == "":
			return fmt.Errorf("sim: Options.Users[%d].Token is required (user %q)", i, u.Name)
		case u.Token == admin:
			return fmt.Errorf("sim: Options.Users[%d].Token (user %q) is Options.BearerToken, the admin's", i, u.Name)
		}
		if j, dup := tokens[u.Token]; dup {
			return fmt.Errorf("sim: Options.Users[%d].Token (user %q) is also Users[%d]'s", i, u.Name, j)
		}
		tokens[u.Token] = i
		for k, r := range u.Rules {
			for _, v := range r.Verbs {
				if !slices.Contains(ruleVerbs, v) {
					return fmt.Errorf("sim: Options.Users[%d].Rules[%d].Verbs: unknown verb %q (want one of %s)",
						i, k, v, strings.Join(ruleVerbs, ", "))
				}
			}
			for _, res := range r.Resources {
				if res == "" || strings.ContainsAny(res, " ") {
					return fmt.Errorf("sim: Options.Users[%d].Rules[%d].Resources: invalid resource %q", i, k, res)
				}
			}
		}
	}
	return nil
}

// cloneUsers deep-copies users so that the caller may reuse its slices.
func cloneUsers(users []User) []User {
	if users == nil {
		return nil
	}
	out := make([]User, len(users))
	for i, u := range users {
		out[i] = u
		out[i].Rules = make([]Rule, len(u.Rules))
		for k, r := range u.Rules {
			out[i].Rules[k] = Rule{Verbs: slices.Clone(r.Verbs), Resources: slices.Clone(r.Resources),
				Namespaces: slices.Clone(r.Namespaces)}
		}
	}
	return out
}

// authenticate finds who sent r: admin (every right), a User, or nobody known
// (ok false: 401). Without BearerToken and Users, everyone is the admin.
func (s *Server) authenticate(r *http.Request) (u *User, admin, ok bool) {
	if s.opts.BearerToken == "" && len(s.opts.Users) == 0 {
		return nil, true, true
	}
	tok, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !found {
		return nil, false, false
	}
	b := []byte(strings.TrimSpace(tok))
	if s.opts.BearerToken != "" && subtle.ConstantTimeCompare(b, []byte(s.opts.BearerToken)) == 1 {
		return nil, true, true
	}
	for i := range s.opts.Users {
		if subtle.ConstantTimeCompare(b, []byte(s.opts.Users[i].Token)) == 1 {
			return &s.opts.Users[i], false, true
		}
	}
	return nil, false, false
}

// requestAttrs is what authorization sees of a request, derived from the URL alone
// (before the resource is looked up) as the real server derives it: an unknown
// resource is still 403 for a user who may not use it.
type requestAttrs struct {
	resource bool   // a resource request (else a path, such as /sim/stats)
	verb     string // API verb, or the lower-case HTTP method for a path
	path     string
	group    string
	res, sub string // resource and subresource
	ns, name string
}

// parseAttrs applies the real server's request-info rules to r.
func parseAttrs(r *http.Request) requestAttrs {
	a := requestAttrs{verb: strings.ToLower(r.Method), path: r.URL.Path}
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var parts []string
	switch {
	case len(segs) >= 3 && segs[0] == "api":
		parts = segs[2:]
	case len(segs) >= 4 && segs[0] == "apis":
		a.group, parts = segs[1], segs[3:]
	default:
		return a
	}
	a.resource = true
	a.verb = map[string]string{http.MethodPost: "create", http.MethodGet: "get", http.MethodHead: "get",
		http.MethodPut: "update", http.MethodPatch: "patch", http.MethodDelete: "delete"}[r.Method]
	if parts[0] == "watch" && len(parts) > 1 {
		a.verb, parts = "watch", parts[1:]
	}
	if parts[0] == "namespaces" && len(parts) > 1 {
		a.ns = parts[1]
		if len(parts) > 2 && parts[2] != "status" && parts[2] != "finalize" {
			parts = parts[2:]
		}
	}
	a.res = parts[0]
	if len(parts) > 1 {
		a.name = parts[1]
	}
	if len(parts) > 2 {
		a.sub = parts[2]
	}
	q := r.URL.Query()
	switch {
	case a.name == "" && a.verb == "get" && (q.Get("watch") == "1" || q.Get("watch") == "true"):
		a.verb = "watch"
	case a.name == "" && a.verb == "get":
		a.verb = "list"
	case a.name == "" && a.verb == "delete":
		a.verb = "deletecollection"
	}
	if a.name == "" && (a.verb == "list" || a.verb == "watch") {
		if sel, err := fields.ParseSelector(q.Get("fieldSelector")); err == nil {
			a.name, _ = sel.RequiresExactMatch("metadata.name")
		}
	}
	return a
}

// discoveryPaths are the non-resource paths every authenticated user may get (the
// real server's system:discovery and system:public-info-viewer roles).
func isDiscoveryPath(p string) bool {
	for _, prefix := range []string{"/api", "/apis", "/version", "/openapi"} {
		if p == prefix || strings.HasPrefix(p, prefix+"/") {
			return true
		}
	}
	return false
}

// authorize returns nil if u may make the request, else the 403 the real server sends.
func authorize(u *User, r *http.Request) *StatusError {
	a := parseAttrs(r)
	if !a.resource {
		if a.verb == "get" && isDiscoveryPath(a.path) {
			return nil
		}
		return newStatus(http.StatusForbidden, "Forbidden",
			fmt.Sprintf("forbidden: User %q cannot %s path %q", u.Name, a.verb, a.path), &StatusDetails{})
	}
	for i := range u.Rules {
		if u.Rules[i].allows(&a) {
			return nil
		}
	}
	return errForbidden(u.Name, &a)
}

// allows reports whether the rule grants the request.
func (rule *Rule) allows(a *requestAttrs) bool {
	if !slices.Contains(rule.Verbs, "*") && !slices.Contains(rule.Verbs, a.verb) {
		return false
	}
	if rule.Namespaces != nil && (a.ns == "" || !slices.Contains(rule.Namespaces, a.ns)) {
		return false
	}
	key := a.res
	if a.group != "" {
		key += "." + a.group
	}
	if a.sub != "" {
		key += "/" + a.sub
	}
	return slices.Contains(rule.Resources, "*") || slices.Contains(rule.Resources, key)
}

// errForbidden words a denial as the real server does (status-403.json).
func errForbidden(user string, a *requestAttrs) *StatusError {
	res := a.res
	if a.sub != "" {
		res += "/" + a.sub
	}
	scope := "at the cluster scope"
	if a.ns != "" {
		scope = fmt.Sprintf("in the namespace %q", a.ns)
	}
	reason := fmt.Sprintf("User %q cannot %s resource %q in API group %q %s", user, a.verb, res, a.group, scope)
	gr := a.res
	if a.group != "" {
		gr += "." + a.group
	}
	msg := gr + " is forbidden: " + reason
	if a.name != "" {
		msg = fmt.Sprintf("%s %q is forbidden: %s", gr, a.name, reason)
	}
	return newStatus(http.StatusForbidden, "Forbidden", msg, &StatusDetails{Name: a.name, Group: a.group, Kind: a.res})
}
