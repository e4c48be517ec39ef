package sim

import (
	"net/http"
	"strings"
)

// The discovery documents, generated from the registered resources in the shapes of
// the real captures: legacy (/api, /apis, /api/v1, /apis/<g>, /apis/<g>/<v>) and
// aggregated (apidiscovery.k8s.io/v2, which kubectl asks for first).

type groupVersion struct {
	GroupVersion string `json:"groupVersion"`
	Version      string `json:"version"`
}

type apiGroup struct {
	Kind             string         `json:"kind,omitempty"`
	APIVersion       string         `json:"apiVersion,omitempty"`
	Name             string         `json:"name"`
	Versions         []groupVersion `json:"versions"`
	PreferredVersion groupVersion   `json:"preferredVersion"`
}

type apiResource struct {
	Name         string   `json:"name"`
	SingularName string   `json:"singularName"`
	Namespaced   bool     `json:"namespaced"`
	Group        string   `json:"group,omitempty"`
	Version      string   `json:"version,omitempty"`
	Kind         string   `json:"kind"`
	Verbs        []string `json:"verbs"`
	ShortNames   []string `json:"shortNames,omitempty"`
	Categories   []string `json:"categories,omitempty"`
}

type apiResourceList struct {
	Kind         string        `json:"kind"`
	APIVersion   string        `json:"apiVersion,omitempty"`
	GroupVersion string        `json:"groupVersion"`
	Resources    []apiResource `json:"resources"`
}

type discoveryKind struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

type discoverySub struct {
	Subresource  string        `json:"subresource"`
	ResponseKind discoveryKind `json:"responseKind"`
	Verbs        []string      `json:"verbs"`
}

type discoveryResource struct {
	Resource         string         `json:"resource"`
	ResponseKind     discoveryKind  `json:"responseKind"`
	Scope            string         `json:"scope"`
	SingularResource string         `json:"singularResource"`
	Verbs            []string       `json:"verbs"`
	ShortNames       []string       `json:"shortNames,omitempty"`
	Categories       []string       `json:"categories,omitempty"`
	Subresources     []discoverySub `json:"subresources,omitempty"`
}

type discoveryVersion struct {
	Version   string              `json:"version"`
	Resources []discoveryResource `json:"resources"`
	Freshness string              `json:"freshness"`
}

type discoveryGroup struct {
	Metadata struct {
		Name string `json:"name,omitempty"`
	} `json:"metadata"`
	Versions []discoveryVersion `json:"versions"`
}

type discoveryList struct {
	Kind       string           `json:"kind"`
	APIVersion string           `json:"apiVersion"`
	Metadata   struct{}         `json:"metadata"`
	Items      []discoveryGroup `json:"items"`
}

var resourceVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// versionInfo is what /version reports: a current Kubernetes minor.
const versionInfo = `{"major":"1","minor":"37","emulationMajor":"1","emulationMinor":"37","minCompatibilityMajor":"1","minCompatibilityMinor":"36","gitVersion":"v1.37.2-kwatch-sim","gitCommit":"0000000000000000000000000000000000000000","gitTreeState":"clean","buildDate":"2026-11-30T00:00:00Z","goVersion":"go1.26","compiler":"gc","platform":"linux/amd64"}`

// groups returns the registered resources by group (core first) and version, in
// registration order.
func (s *Server) groups() (names []string, byGroup map[string][][]*resource) {
	s.store.mu.RLock()
	defer s.store.mu.RUnlock()
	byGroup = map[string][][]*resource{}
	for _, r := range s.store.ordered {
		g := r.info.Group
		if _, ok := byGroup[g]; !ok {
			names = append(names, g)
		}
		vs := byGroup[g]
		found := false
		for i, v := range vs {
			if v[0].info.Version == r.info.Version {
				vs[i] = append(v, r)
				found = true
			}
		}
		if !found {
			vs = append(vs, []*resource{r})
		}
		byGroup[g] = vs
	}
	return names, byGroup
}

// serveDiscovery answers discovery paths; false if path is not one.
func (s *Server) serveDiscovery(w http.ResponseWriter, r *http.Request) bool {
	path := strings.TrimSuffix(r.URL.Path, "/")
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	names, byGroup := s.groups()
	var doc any
	switch {
	case path == "/version":
		s.discovery.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(versionInfo))
		return true
	case path == "/api" || path == "/apis":
		mode, _ := negotiate(r.Header.Get("Accept"), true)
		if mode == modeAggregated {
			doc = aggregated(path == "/api", names, byGroup)
			w.Header().Set("Vary", "Accept")
			s.discovery.Add(1)
			writeJSONType(w, contentType(modeAggregated, false), doc)
			return true
		}
		if path == "/api" {
			doc = map[string]any{"kind": "APIVersions", "versions": []string{"v1"},
				"serverAddressByClientCIDRs": []any{map[string]string{"clientCIDR": "0.0.0.0/0", "serverAddress": r.Host}}}
		} else {
			doc = apiGroupList(names, byGroup)
		}
	case len(segs) == 2 && segs[0] == "api":
		doc = resourceList("", segs[1], byGroup[""])
	case len(segs) == 2 && segs[0] == "apis" && segs[1] != "":
		g := groupDoc(segs[1], byGroup[segs[1]])
		if g == nil {
			return false
		}
		g.Kind, g.APIVersion = "APIGroup", "v1"
		doc = g
	case len(segs) == 3 && segs[0] == "apis":
		doc = resourceList(segs[1], segs[2], byGroup[segs[1]])
	default:
		return false
	}
	if doc == nil || doc == (*apiResourceList)(nil) {
		return false
	}
	s.discovery.Add(1)
	writeJSONType(w, "application/json", doc)
	return true
}

func writeJSONType(w http.ResponseWriter, ct string, doc any) {
	b, _ := json.Marshal(doc)
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "no-cache, private")
	_, _ = w.Write(b)
}

func groupDoc(name string, versions [][]*resource) *apiGroup {
	if name == "" || len(versions) == 0 {
		return nil
	}
	g := &apiGroup{Name: name}
	for _, v := range versions {
		g.Versions = append(g.Versions, groupVersion{GroupVersion: name + "/" + v[0].info.Version, Version: v[0].info.Version})
	}
	g.PreferredVersion = g.Versions[0]
	return g
}

func apiGroupList(names []string, byGroup map[string][][]*resource) any {
	groups := []*apiGroup{}
	for _, n := range names {
		if g := groupDoc(n, byGroup[n]); g != nil {
			groups = append(groups, g)
		}
	}
	return map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
}

// statusVerbs are the verbs of a status subresource.
var statusVerbs = []string{"get", "patch", "update"}

func resourceList(group, version string, versions [][]*resource) *apiResourceList {
	for _, v := range versions {
		if v[0].info.Version != version {
			continue
		}
		l := &apiResourceList{Kind: "APIResourceList", GroupVersion: v[0].info.apiVersion()}
		if group != "" {
			l.APIVersion = "v1"
		}
		for _, r := range v {
			ri := r.info
			l.Resources = append(l.Resources, apiResource{Name: ri.Resource, SingularName: ri.Singular,
				Namespaced: ri.Namespaced, Kind: ri.Kind, Verbs: resourceVerbs, ShortNames: ri.ShortNames,
				Categories: ri.Categories})
			if scalable(r) {
				l.Resources = append(l.Resources, apiResource{Name: ri.Resource + "/scale", Namespaced: ri.Namespaced,
					Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: statusVerbs})
			}
			if ri.StatusSubresource {
				l.Resources = append(l.Resources, apiResource{Name: ri.Resource + "/status",
					Namespaced: ri.Namespaced, Kind: ri.Kind, Verbs: statusVerbs})
			}
		}
		return l
	}
	return nil
}

func aggregated(core bool, names []string, byGroup map[string][][]*resource) discoveryList {
	out := discoveryList{Kind: "APIGroupDiscoveryList", APIVersion: "apidiscovery.k8s.io/v2", Items: []discoveryGroup{}}
	for _, n := range names {
		if (n == "") != core {
			continue
		}
		var g discoveryGroup
		g.Metadata.Name = n
		for _, v := range byGroup[n] {
			dv := discoveryVersion{Version: v[0].info.Version, Freshness: "Current"}
			for _, r := range v {
				ri := r.info
				scope := "Cluster"
				if ri.Namespaced {
					scope = "Namespaced"
				}
				dr := discoveryResource{Resource: ri.Resource,
					ResponseKind: discoveryKind{Kind: ri.Kind}, Scope: scope, SingularResource: ri.Singular,
					Verbs: resourceVerbs, ShortNames: ri.ShortNames, Categories: ri.Categories}
				if scalable(r) {
					dr.Subresources = append(dr.Subresources, discoverySub{Subresource: "scale",
						ResponseKind: discoveryKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}, Verbs: statusVerbs})
				}
				if ri.StatusSubresource {
					dr.Subresources = append(dr.Subresources, discoverySub{Subresource: "status", ResponseKind: discoveryKind{Kind: ri.Kind},
						Verbs: statusVerbs})
				}
				dv.Resources = append(dv.Resources, dr)
			}
			g.Versions = append(g.Versions, dv)
		}
		out.Items = append(out.Items, g)
	}
	return out
}
