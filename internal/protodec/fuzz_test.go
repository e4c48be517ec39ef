package protodec

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FuzzDecode feeds bytes to the table decoders of ObjectMeta, Status,
// APIResourceList and LabelSelector, and requires each to agree with the generated Unmarshal whenever
// it accepts the bytes (decodeBoth), copying or aliasing strings.
func FuzzDecode(f *testing.F) {
	meta := sampleMeta()
	for _, m := range []interface{ Marshal() ([]byte, error) }{
		&meta,
		&metav1.Status{Status: "Failure", Code: 409, Details: &metav1.StatusDetails{Name: "a", Causes: []metav1.StatusCause{{Field: "x"}}}},
		&metav1.APIResourceList{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "pods", Namespaced: true, Verbs: []string{"get"}}}},
		&metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "In", Values: []string{"v"}}}},
	} {
		b, err := m.Marshal()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x0a, 0x80, 0x00})                                                 // a non-minimal length
	f.Add([]byte{0x5a, 0x04, 0x12, 0x01, 'v', 0x0a})                                // a label entry whose key runs past it
	f.Add([]byte{0x0b, 0x0c})                                                       // groups
	f.Add([]byte{0x02, 0x00})                                                       // field 0, which the generated code refuses
	f.Add([]byte{0x38, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}) // a generation past 64 bits
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, alias := range []bool{false, true} {
			decodeBoth[metav1.ObjectMeta](t, b, alias)
			decodeBoth[metav1.Status](t, b, alias)
			decodeBoth[metav1.APIResourceList](t, b, alias)
			decodeBoth[metav1.LabelSelector](t, b, alias)
		}
	})
}
