package sim_test

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// startConverter serves a hand-written conversion webhook for gadgets:
// v1 has spec.shape "size/color", v2 (storage) spec.size and spec.color.
func startConverter(t *testing.T, calls *atomic.Int64) (url, ca string) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var rv struct {
			Request struct {
				UID               string           `json:"uid"`
				DesiredAPIVersion string           `json:"desiredAPIVersion"`
				Objects           []map[string]any `json:"objects"`
			} `json:"request"`
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &rv); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		out := []map[string]any{}
		result := map[string]any{"status": "Success"}
		for _, o := range rv.Request.Objects {
			spec, _ := o["spec"].(map[string]any)
			switch rv.Request.DesiredAPIVersion {
			case "example.com/v2":
				var size int
				var color string
				shape, _ := spec["shape"].(string)
				if _, err := fmt.Sscanf(shape, "%d/%s", &size, &color); err != nil {
					result = map[string]any{"status": "Failure", "message": "bad shape " + shape}
				}
				o["spec"] = map[string]any{"size": size, "color": color}
			case "example.com/v1":
				o["spec"] = map[string]any{"shape": fmt.Sprintf("%v/%v", spec["size"], spec["color"])}
			}
			o["apiVersion"] = rv.Request.DesiredAPIVersion
			out = append(out, o)
		}
		if result["status"] != "Success" {
			out = nil
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
			"response": map[string]any{"uid": rv.Request.UID, "convertedObjects": out, "result": result}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/convert", base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
}

func gadgetCRD(url, ca string) []byte {
	version := func(name string, storage bool) map[string]any {
		return map[string]any{"name": name, "served": true, "storage": storage,
			"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}
	}
	b, _ := json.Marshal(map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "gadgets.example.com"},
		"spec": map[string]any{"group": "example.com", "scope": "Namespaced",
			"names":    map[string]any{"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
			"versions": []any{version("v1", false), version("v2", true)},
			"conversion": map[string]any{"strategy": "Webhook", "webhook": map[string]any{"conversionReviewVersions": []string{"v1"},
				"clientConfig": map[string]any{"url": url, "caBundle": ca}}}}})
	return b
}

func TestCRDConversionWebhook(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	var calls atomic.Int64
	url, ca := startConverter(t, &calls)
	code, out := do(t, h, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "", gadgetCRD(url, ca))
	require.Equal(t, 201, code, "%s", out)
	crd := getMap(t, h, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com")
	require.Contains(t, fmt.Sprint(crd["status"]), "Established", "the CRD is established at once")

	v1 := "/apis/example.com/v1/namespaces/default/gadgets"
	v2 := "/apis/example.com/v2/namespaces/default/gadgets"
	code, out, _ = send(t, h, http.MethodPost, v1, []byte(`{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"shape":"3/red"}}`))
	require.Equal(t, 201, code, "%s", out)
	require.Equal(t, map[string]any{"shape": "3/red"}, decodeMap(t, out)["spec"], "the answer is in the version written")

	stored, err := h.Server.Get("gadgets.example.com", "default", "g")
	require.NoError(t, err)
	require.Contains(t, string(stored.JSON), `"apiVersion":"example.com/v2"`)
	require.Contains(t, string(stored.JSON), `"size":3`)

	got := getMap(t, h, v2+"/g")
	require.Equal(t, "example.com/v2", got["apiVersion"])
	require.Equal(t, map[string]any{"size": float64(3), "color": "red"}, got["spec"])
	got = getMap(t, h, v1+"/g")
	require.Equal(t, "example.com/v1", got["apiVersion"])
	require.Equal(t, map[string]any{"shape": "3/red"}, got["spec"])

	list := getMap(t, h, v1)
	require.Equal(t, "example.com/v1", list["apiVersion"])
	require.Equal(t, map[string]any{"shape": "3/red"}, items(t, list)[0]["spec"])

	code, out, _ = send(t, h, http.MethodPut, v1+"/g", []byte(`{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"shape":"4/blue"}}`))
	require.Equal(t, 200, code, "%s", out)
	require.Equal(t, map[string]any{"size": float64(4), "color": "blue"}, getMap(t, h, v2+"/g")["spec"])

	req := h.NewRequest(t, http.MethodPatch, v1+"/g", strings.NewReader(`{"spec":{"shape":"5/green"}}`))
	req.Header.Set("Content-Type", "application/merge-patch+json")
	resp, err := h.Client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, map[string]any{"size": float64(5), "color": "green"}, getMap(t, h, v2+"/g")["spec"])

	code, out, _ = send(t, h, http.MethodPost, v1, []byte(`{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"bad"},"spec":{"shape":"square"}}`))
	require.Equal(t, 500, code, "%s", out)
	st := decodeMap(t, out)
	require.Equal(t, "InternalError", st["reason"])
	require.Equal(t, "Internal error occurred: conversion webhook for example.com/v1, Kind=Gadget failed: bad shape square", st["message"])

	code, out = do(t, h, http.MethodGet, v1+"?watch=1", "", nil)
	require.Equal(t, 400, code, "%s", out)
	require.Greater(t, calls.Load(), int64(5))
}
