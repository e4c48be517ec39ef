package sim

import (
	"net/url"
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
	types := []string{mediaMergePatch, mediaStrategicPatch, mediaJSONPatch}
	f.Fuzz(func(t *testing.T, patch []byte, kind uint8) {
		var target map[string]any
		if err := json.Unmarshal([]byte(`{"metadata":{"name":"p","labels":{"a":"b"}},"spec":{"containers":[{"name":"c"}]}}`), &target); err != nil {
			t.Fatal(err)
		}
		out, err := applyPatch(target, patch, types[int(kind)%len(types)])
		if err == nil && out == nil {
			t.Fatalf("patch %q gave no object and no error", patch)
		}
	})
}
