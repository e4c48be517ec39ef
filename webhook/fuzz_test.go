package webhook

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/kwatch/kwatch/internal/jsonpatch"
)

// The fuzz targets run their seeds as ordinary tests; make fuzz runs them
// for a while.

func admissionSeeds(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE","object":{"spec":{"size":1}}}}`))
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview"}`))
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"UPDATE","object":{"spec":{"size":"x"}},"oldObject":null}}`))
	f.Add([]byte(`{{`))
	f.Add([]byte(``))
}

// FuzzDecodeAdmissionReview: any body decodes or fails with ErrBadReview,
// and the handler path answers it without panicking.
func FuzzDecodeAdmissionReview(f *testing.F) {
	admissionSeeds(f)
	s, err := New(Options{SelfSigned: &SelfSigned{}, Logger: quietLogger()})
	if err != nil {
		f.Fatal(err)
	}
	if err := s.Admission("/mutate", Mutating(defaultWidget)); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		rv, err := DecodeAdmissionReview(body)
		if (rv == nil) == (err == nil) {
			t.Fatalf("DecodeAdmissionReview = %v, %v", rv, err)
		}
		code, out := post(t, s, "/mutate", body)
		if err == nil && code != http.StatusOK {
			t.Fatalf("a decodable review answered %d: %s", code, out)
		}
		if err != nil && code != http.StatusBadRequest {
			t.Fatalf("a bad review answered %d, want 400: %s", code, out)
		}
	})
}

// FuzzDecodeConversionReview: as FuzzDecodeAdmissionReview for conversions.
func FuzzDecodeConversionReview(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"u","desiredAPIVersion":"example.com/v2","objects":[{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"shape":"1/red"}}]}}`))
	f.Add([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"u","desiredAPIVersion":"example.com/v1","objects":[{"apiVersion":"example.com/v2","metadata":[]}]}}`))
	f.Add([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"u","desiredAPIVersion":"example.com/v1","objects":[1,null]}}`))
	f.Add([]byte(`[]`))
	s, err := New(Options{SelfSigned: &SelfSigned{}, Logger: quietLogger()})
	if err != nil {
		f.Fatal(err)
	}
	if err := s.Conversion("/convert", testConverter(f)); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		rv, err := DecodeConversionReview(body)
		if (rv == nil) == (err == nil) {
			t.Fatalf("DecodeConversionReview = %v, %v", rv, err)
		}
		code, out := post(t, s, "/convert", body)
		if (err == nil) != (code == http.StatusOK) {
			t.Fatalf("decode error %v but answered %d: %s", err, code, out)
		}
		if code == http.StatusOK {
			var ans ConversionReview
			if err := json.Unmarshal(out, &ans); err != nil || ans.Response == nil {
				t.Fatalf("answer %s does not decode: %v", out, err)
			}
			if r := ans.Response; r.Result.Status == "Success" && len(r.ConvertedObjects) != len(rv.Request.Objects) {
				t.Fatalf("success with %d objects of %d", len(r.ConvertedObjects), len(rv.Request.Objects))
			}
		}
	})
}

// FuzzMutationPatch: for any object sent and any change a handler made to
// it, the encoded patch, decoded and applied as the API server does (by
// encoding/json), yields the changed object; a document the diff refuses is
// an error, never a patch that does not apply.
func FuzzMutationPatch(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":[1,2]}`), []byte(`{"a":2,"c":{"d":null}}`))
	f.Add([]byte(`{"metadata":{"labels":{"x":"y"}}}`), []byte(`{"metadata":{"labels":{"x":"z","a/b":"c"}}}`))
	f.Add([]byte(`{"a/b":{"~":1}}`), []byte(`{"a/b":{}}`))
	f.Add([]byte("{\"a/b\":{\"\xff\":0}}"), []byte(`{"a/b":{}}`))
	f.Fuzz(func(t *testing.T, sent, changed []byte) {
		patch, err := mutationPatch(sent, sent, changed)
		if err != nil || patch == nil {
			return // a document refused, or nothing changed
		}
		var ops []jsonpatch.Op
		if err := json.Unmarshal(patch, &ops); err != nil {
			t.Fatalf("patch %s does not decode: %v", patch, err)
		}
		var doc, want any
		if json.Unmarshal(sent, &doc) != nil || json.Unmarshal(changed, &want) != nil {
			t.Fatalf("mutationPatch accepted %q, %q, which encoding/json refuses", sent, changed)
		}
		got, err := jsonpatch.Apply(doc, ops)
		if err != nil {
			t.Fatalf("patch %s of %s does not apply: %v", patch, sent, err)
		}
		if !reflect.DeepEqual(normalize(got), normalize(want)) {
			t.Fatalf("patch %s of %s gives %v, want %s", patch, sent, got, changed)
		}
	})
}
