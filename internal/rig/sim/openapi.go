package sim

import (
	"net/http"
	"strings"
)

// A minimal OpenAPI v3: kubectl create/apply first checks, per kind, whether the
// server's PATCH operation takes the fieldValidation query parameter; if it does,
// kubectl leaves validation to the server (which the simulator skips). Without these
// documents kubectl falls back to client-side validation and fails on a missing
// /openapi/v2. Only what that check reads is served: paths with a PATCH operation
// carrying x-kubernetes-group-version-kind and the parameter. No schemas.

// serveOpenAPI answers /openapi/v3 and /openapi/v3/<gv>; false for other paths.
func (s *Server) serveOpenAPI(w http.ResponseWriter, r *http.Request) bool {
	path := strings.TrimSuffix(r.URL.Path, "/")
	if path != "/openapi/v3" && !strings.HasPrefix(path, "/openapi/v3/") {
		return false
	}
	names, byGroup := s.groups()
	if path == "/openapi/v3" {
		paths := map[string]any{}
		for _, g := range names {
			for _, v := range byGroup[g] {
				gv := gvPath(v[0].info)
				paths[gv] = map[string]string{"serverRelativeURL": "/openapi/v3/" + gv + "?hash=" + v[0].info.Version}
			}
		}
		s.discovery.Add(1)
		writeJSONType(w, "application/json", map[string]any{"paths": paths})
		return true
	}
	want := strings.TrimPrefix(path, "/openapi/v3/")
	for _, g := range names {
		for _, v := range byGroup[g] {
			if gvPath(v[0].info) == want {
				s.discovery.Add(1)
				writeJSONType(w, "application/json", openAPIDoc(v))
				return true
			}
		}
	}
	return false
}

// gvPath is "api/v1" or "apis/<group>/<version>".
func gvPath(ri ResourceInfo) string {
	if ri.Group == "" {
		return "api/" + ri.Version
	}
	return "apis/" + ri.Group + "/" + ri.Version
}

func openAPIDoc(resources []*resource) map[string]any {
	paths := map[string]any{}
	for _, r := range resources {
		ri := r.info
		p := "/" + gvPath(ri) + "/"
		if ri.Namespaced {
			p += "namespaces/{namespace}/"
		}
		p += ri.Resource + "/{name}"
		paths[p] = map[string]any{"patch": map[string]any{
			"operationId": "patch" + ri.Kind,
			"x-kubernetes-group-version-kind": map[string]string{
				"group": ri.Group, "version": ri.Version, "kind": ri.Kind},
			"parameters": []any{map[string]any{"name": "fieldValidation", "in": "query",
				"schema": map[string]string{"type": "string"}}},
			"responses": map[string]any{"200": map[string]string{"description": "OK"}},
		}}
	}
	return map[string]any{"openapi": "3.0.0",
		"info":  map[string]string{"title": "Kubernetes (kwatch simulator)", "version": "v1.37.2"},
		"paths": paths}
}
