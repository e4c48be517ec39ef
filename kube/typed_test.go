package kube

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestPackageKind(t *testing.T) {
	for _, tc := range []struct {
		pkg, name            string
		group, version, kind string
		ok                   bool
	}{
		{"k8s.io/api/core/v1", "Pod", "core", "v1", "Pod", true},
		{"k8s.io/api/apps/v1", "Deployment", "apps", "v1", "Deployment", true},
		{"k8s.io/api/coordination/v1beta1", "Lease", "coordination", "v1beta1", "Lease", true},
		{"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1", "CustomResourceDefinition", "apiextensions", "v1", "CustomResourceDefinition", true},
		{"k8s.io/kube-aggregator/pkg/apis/apiregistration/v1", "APIService", "apiregistration", "v1", "APIService", true},
		// Not an API package's layout: no claim, no check.
		{"k8s.io/apimachinery/pkg/apis/meta/v1", "PartialObjectMetadata", "", "", "", false},
		{"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured", "Unstructured", "", "", "", false},
		{"example.com/widgets/api/v1", "Widget", "", "", "", false},
		{"k8s.io/api/core/internal", "Pod", "", "", "", false},
		{"k8s.io/api/v1", "Pod", "", "", "", false},
		{"main", "Pod", "", "", "", false},
	} {
		g, v, k, ok := packageKind(tc.pkg, tc.name)
		if g != tc.group || v != tc.version || k != tc.kind || ok != tc.ok {
			t.Errorf("packageKind(%q, %q) = %q, %q, %q, %v; want %q, %q, %q, %v",
				tc.pkg, tc.name, g, v, k, ok, tc.group, tc.version, tc.kind, tc.ok)
		}
	}
}

func TestGroupMatches(t *testing.T) {
	for _, tc := range []struct {
		dir, group string
		want       bool
	}{
		{"core", "", true},
		{"core", "core", false},
		{"apps", "apps", true},
		{"apps", "", false},
		{"coordination", "coordination.k8s.io", true},
		{"rbac", "rbac.authorization.k8s.io", true},
		{"apiserverinternal", "internal.apiserver.k8s.io", true},
		{"app", "apps", false},
		{"apps", "apps.example.com", true},
	} {
		if got := groupMatches(tc.dir, tc.group); got != tc.want {
			t.Errorf("groupMatches(%q, %q) = %v, want %v", tc.dir, tc.group, got, tc.want)
		}
	}
}

// A type declared outside the API packages claims no kind: any resource
// takes it. (The refusal of a k8s.io/api type of the wrong kind is tested
// where k8s.io/api may be imported: internal/bench's TestTypedRefusesOtherKind.)
func TestNewTypedTakesTypesThatClaimNoKind(t *testing.T) {
	type slim struct {
		metav1.TypeMeta
		metav1.ObjectMeta
	}
	if _, err := NewTyped[*slim](Deployments); err != nil {
		t.Errorf("slim type: %v", err)
	}
	if _, err := NewTyped[*unstructured.Unstructured](Pods); err != nil {
		t.Errorf("unstructured: %v", err)
	}
	if _, err := NewTyped[*metav1.PartialObjectMetadata](ReplicaSets); err != nil {
		t.Errorf("PartialObjectMetadata: %v", err)
	}
	tr := Typed[*slim](Pods)
	if tr.Resource().Resource != "pods" || tr.IsZero() || tr.String() != "pods" {
		t.Errorf("Typed(Pods) = %+v", tr)
	}
}

func TestNewTypedRefusesAResourceWithoutName(t *testing.T) {
	_, err := NewTyped[*unstructured.Unstructured](Resource{Version: "v1"})
	if err == nil || !strings.Contains(err.Error(), "no name") {
		t.Fatalf("err = %v, want one about the missing name", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("Typed of a resource without a name did not panic")
		}
	}()
	Typed[*unstructured.Unstructured](Resource{})
}
