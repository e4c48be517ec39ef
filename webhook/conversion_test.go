package webhook

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// widgetV1 is the v1 shape: size and color in one string "size/color".
type widgetV1 struct {
	APIVersion string     `json:"apiVersion,omitempty"`
	Kind       string     `json:"kind,omitempty"`
	Metadata   objectMeta `json:"metadata"`
	Spec       struct {
		Shape string `json:"shape"`
	} `json:"spec"`
}

func v1ToHub(src *widgetV1, dst *widget) error {
	dst.Metadata = src.Metadata
	if _, err := fmt.Sscanf(src.Spec.Shape, "%d/%s", &dst.Spec.Size, &dst.Spec.Color); err != nil {
		return fmt.Errorf("spec.shape %q is not size/color", src.Spec.Shape)
	}
	return nil
}

func hubToV1(src *widget, dst *widgetV1) error {
	dst.Metadata = src.Metadata
	dst.Spec.Shape = fmt.Sprintf("%d/%s", src.Spec.Size, src.Spec.Color)
	return nil
}

func testConverter(t testing.TB) *Converter {
	c := NewConverter[widget]("example.com/v2")
	require.NoError(t, AddVersion(c, "example.com/v1", v1ToHub, hubToV1))
	return c
}

func conversionBody(t testing.TB, desired string, objs ...any) []byte {
	req := &ConversionRequest{UID: "c-1", DesiredAPIVersion: desired}
	for _, o := range objs {
		req.Objects = append(req.Objects, mustJSON(t, o))
	}
	return mustJSON(t, ConversionReview{APIVersion: ConversionAPIVersion, Kind: ConversionKind, Request: req})
}

func conversionAnswer(t testing.TB, s http.Handler, body []byte) *ConversionResponse {
	code, out := post(t, s, "/convert", body)
	require.Equal(t, http.StatusOK, code, "%s", out)
	var rv ConversionReview
	require.NoError(t, json.Unmarshal(out, &rv), "%s", out)
	require.Equal(t, ConversionAPIVersion, rv.APIVersion)
	require.NotNil(t, rv.Response)
	require.Equal(t, "c-1", rv.Response.UID)
	return rv.Response
}

func TestConversion(t *testing.T) {
	s := newTestServer(t, Options{})
	require.NoError(t, s.Conversion("/convert", testConverter(t)))
	v1 := map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "a", "namespace": "ns", "uid": "u-a", "resourceVersion": "7", "labels": map[string]any{"l": "1"}},
		"spec":     map[string]any{"shape": "3/red"}}
	v2 := map[string]any{"apiVersion": "example.com/v2", "kind": "Widget",
		"metadata": map[string]any{"name": "b", "uid": "u-b"}, "spec": map[string]any{"size": 4, "color": "blue"}}

	resp := conversionAnswer(t, s, conversionBody(t, "example.com/v2", v1, v2))
	require.Equal(t, "Success", resp.Result.Status, resp.Result.Message)
	require.Len(t, resp.ConvertedObjects, 2)
	got := decodeJSON(t, resp.ConvertedObjects[0])
	want := normalize(map[string]any{"apiVersion": "example.com/v2", "kind": "Widget",
		"metadata": map[string]any{"name": "a", "namespace": "ns", "uid": "u-a", "resourceVersion": "7", "labels": map[string]any{"l": "1"}},
		"spec":     map[string]any{"size": 3, "color": "red"}})
	require.Equal(t, want, got, "metadata the type does not know (uid, resourceVersion) is kept")
	require.JSONEq(t, string(mustJSON(t, v2)), string(resp.ConvertedObjects[1]), "an object already in the desired version passes as sent")

	// And back.
	resp = conversionAnswer(t, s, conversionBody(t, "example.com/v1", resp.ConvertedObjects[0]))
	require.Equal(t, "Success", resp.Result.Status, resp.Result.Message)
	require.Equal(t, normalize(v1), decodeJSON(t, resp.ConvertedObjects[0]))
}

func TestConversionFailsWhole(t *testing.T) {
	s := newTestServer(t, Options{})
	require.NoError(t, s.Conversion("/convert", testConverter(t)))
	good := map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "a"},
		"spec": map[string]any{"shape": "3/red"}}
	bad := map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "b", "namespace": "ns"},
		"spec": map[string]any{"shape": "square"}}
	tests := []struct {
		name    string
		desired string
		objs    []any
		want    string
	}{
		{"one object fails", "example.com/v2", []any{good, bad},
			`webhook: objects[1] (ns/b) from example.com/v1 to example.com/v2: spec.shape "square" is not size/color`},
		{"unknown desired version", "example.com/v3", []any{good},
			`webhook: cannot convert to example.com/v3: the converter knows [example.com/v1 example.com/v2]`},
		{"unknown source version", "example.com/v2", []any{map[string]any{"apiVersion": "example.com/v0", "metadata": map[string]any{"name": "z"}}},
			`webhook: objects[0] (z): cannot convert from "example.com/v0": the converter knows [example.com/v1 example.com/v2]`},
		{"not an object", "example.com/v2", []any{"text"}, "webhook: objects[0] is not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := conversionAnswer(t, s, conversionBody(t, tt.desired, tt.objs...))
			require.Equal(t, "Failure", resp.Result.Status)
			require.Contains(t, resp.Result.Message, tt.want)
			require.Empty(t, resp.ConvertedObjects)
		})
	}
}

func TestAddVersionChecksTheHub(t *testing.T) {
	c := NewConverter[widget]("example.com/v2")
	err := AddVersion(c, "example.com/v1", func(*widgetV1, *widgetV1) error { return nil }, func(*widgetV1, *widgetV1) error { return nil })
	require.ErrorContains(t, err, "hub type")
	require.NoError(t, AddVersion(c, "example.com/v1", v1ToHub, hubToV1))
	require.ErrorContains(t, AddVersion(c, "example.com/v1", v1ToHub, hubToV1), "already added")
}
