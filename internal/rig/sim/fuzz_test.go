package sim

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// Fuzz targets for everything that parses client input. Their seed corpora run as
// ordinary tests; `go test -fuzz=FuzzX` explores further.

func fuzzTarget(t testing.TB) (*Server, target) {
	srv, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	return srv, target{r: srv.store.resources["pods"], ns: "demo"}
}

func FuzzDecodeContinue(f *testing.F) {
	f.Add("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MjI0LCJzdGFydCI6Ii93b3JrZXItMVx1MDAwMCJ9")
	f.Add("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTEsInN0YXJ0Ijoid29ya2VyLTFcdTAwMDAifQ")
	f.Add("")
	f.Add("!!!")
	f.Add("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiIuLi8uLi9ldGMifQ")
	_, tg := fuzzTarget(f)
	f.Fuzz(func(t *testing.T, token string) {
		rv, start, err := decodeContinue(tg, token)
		if err != nil {
			return
		}
		if rv == 0 || rv < -1 || start == "" {
			t.Fatalf("accepted token %q gave rv %d start %q", token, rv, start)
		}
		if len(start) < len("demo/") || start[:5] != "demo/" {
			t.Fatalf("start key %q escapes the namespace prefix", start)
		}
	})
}

func FuzzNegotiate(f *testing.F) {
	for _, s := range []string{
		"", "application/json", "*/*", "application/vnd.kubernetes.protobuf",
		"application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
		"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
		";;;,,=;as", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		mode, ok := negotiate(accept, true)
		if !ok && mode != modeObject {
			t.Fatalf("refused Accept %q yet chose mode %d", accept, mode)
		}
	})
}

func FuzzParseQueries(f *testing.F) {
	f.Add("labelSelector=app%3Dweb&limit=2")
	f.Add("fieldSelector=spec.bogus%3D1")
	f.Add("resourceVersion=0&limit=5&resourceVersionMatch=Exact")
	f.Add("watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=9")
	f.Add("labelSelector=a+in+(b,c),!d&fieldSelector=status.phase!%3DRunning")
	f.Add("continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MjI0LCJzdGFydCI6Ii93b3JrZXItMVx1MDAwMCJ9")
	_, tg := fuzzTarget(f)
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		if lq, serr := parseListQuery(tg, q, modeObject); serr == nil && lq.limit < 0 {
			t.Fatalf("negative limit from %q", raw)
		}
		if _, serr := parseWatchQuery(tg, q, modeObject); serr != nil && serr.Status.Code < 400 {
			t.Fatalf("error status %d from %q", serr.Status.Code, raw)
		}
	})
}

func FuzzParseTarget(f *testing.F) {
	for _, p := range []string{
		"/api/v1/pods", "/api/v1/namespaces/demo/pods/x", "/apis/apps/v1/namespaces/a/deployments",
		"/api/v1/namespaces/x/status", "/api/v1/watch/namespaces/a/pods", "/api//v1", "/apis/apps",
		"/api/v1/namespaces/a/pods/b/status/c",
	} {
		f.Add(p)
	}
	srv, _ := fuzzTarget(f)
	f.Fuzz(func(t *testing.T, path string) {
		tg, ok := srv.parseTarget(path)
		if ok && tg.r == nil {
			t.Fatalf("path %q parsed without a resource", path)
		}
	})
}

func FuzzApplyPatch(f *testing.F) {
	f.Add([]byte(`{"metadata":{"labels":{"a":null,"b":"c"}}}`), uint8(0))
	f.Add([]byte(`{"$patch":"replace","spec":{"x":[1,2]}}`), uint8(1))
	f.Add([]byte(`[{"op":"add","path":"/spec/containers/0","value":{}},{"op":"remove","path":"/metadata/labels/a"}]`), uint8(2))
	f.Add([]byte(`[{"op":"test","path":"/","value":1}]`), uint8(2))
	f.Add([]byte(`null`), uint8(0))
	f.Add([]byte(`{"spec":{"containers":[{"name":"c","$patch":"delete"},{"name":"d","image":"i"}],"$setElementOrder/containers":[{"name":"d"}]}}`), uint8(1))
	f.Add([]byte(`{"metadata":{"$deleteFromPrimitiveList/finalizers":["a"],"finalizers":["b"]},"spec":{"$retainKeys":["containers"]}}`), uint8(1))
	f.Add([]byte(`[{"op":"move","from":"/metadata/labels","path":"/spec/labels"},{"op":"copy","from":"/spec","path":"/x"}]`), uint8(2))
	types := []string{mediaMergePatch, mediaStrategicPatch, mediaJSONPatch}
	f.Fuzz(func(t *testing.T, patch []byte, kind uint8) {
		var target map[string]any
		if err := json.Unmarshal([]byte(`{"metadata":{"name":"p","labels":{"a":"b"}},"spec":{"containers":[{"name":"c"}]}}`), &target); err != nil {
			t.Fatal(err)
		}
		out, err := applyPatch(target, patch, types[int(kind)%len(types)], builtinRules["pods"])
		if err == nil && out == nil {
			t.Fatalf("patch %q gave no object and no error", patch)
		}
	})
}

// quantityRE is the real server's description of a valid quantity: every quantity
// parseQuantity accepts must match it.
var quantityRE = regexp.MustCompile(quantityPattern)

func FuzzParseQuantity(f *testing.F) {
	for _, s := range []string{"100m", "1.5Gi", "2e3", "1E", "-0.5", ".5", "5.", "1e-3", "+7Ki", "1KB", "e3", "..", "1e999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := parseQuantity(s)
		switch {
		case err == nil && q == nil:
			t.Fatalf("%q: no value and no error", s)
		case err == nil && !quantityRE.MatchString(s):
			t.Fatalf("%q accepted but does not match %s", s, quantityPattern)
		}
	})
}

func FuzzPreparePodCreate(f *testing.F) {
	f.Add([]byte(`{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"},"limits":{"cpu":"2","memory":"1Gi"}}}]},"status":{}}`))
	f.Add([]byte(`{"spec":{"resources":{"limits":{"cpu":"1"}},"initContainers":[{"resources":{"limits":{"memory":2}}}]}}`))
	f.Add([]byte(`{"spec":{"containers":[{"resources":{"requests":{"cpu":"-1"}}}]}}`))
	f.Add([]byte(`{"spec":{"containers":[null,{"resources":[]}]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var m map[string]any
		if json.Unmarshal(body, &m) != nil || m == nil {
			return
		}
		if serr := preparePodCreate("p", m); serr != nil {
			if serr.Status.Code != 400 && serr.Status.Code != 422 {
				t.Fatalf("status %d for %s", serr.Status.Code, body)
			}
			return
		}
		st, _ := m["status"].(map[string]any)
		if st["phase"] != "Pending" || (st["qosClass"] != qosBestEffort && st["qosClass"] != qosBurstable && st["qosClass"] != qosGuaranteed) {
			t.Fatalf("status %v for %s", st, body)
		}
	})
}

func FuzzParseAttrs(f *testing.F) {
	for _, p := range []string{"/api/v1/pods?watch=1", "/api/v1/namespaces/a/pods/b/status", "/apis/apps/v1/watch/namespaces/a/deployments",
		"/api/v1/namespaces/a", "/api/v1/namespaces//pods", "/apis//", "/api/v1/pods?fieldSelector=metadata.name%3Dx", "/sim/faults"} {
		f.Add(p, "GET")
	}
	f.Fuzz(func(t *testing.T, target, method string) {
		req, err := http.NewRequest(method, "http://sim"+target, nil)
		if err != nil || !strings.HasPrefix(req.URL.Path, "/") {
			return
		}
		serr := authorize(&User{Name: "u"}, req)
		if serr != nil && serr.Status.Code != http.StatusForbidden {
			t.Fatalf("status %d for %s %s", serr.Status.Code, method, target)
		}
	})
}
