package kube

import (
	"net/url"
	"strings"
	"testing"
)

func TestScopeValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		scope Scope
		want  string // a part of the error; "" for none
	}{
		{"zero", Scope{}, ""},
		{"all three", Scope{Namespace: "demo", LabelSelector: "app=web,tier!=db", FieldSelector: "spec.nodeName=n1"}, ""},
		{"set-based labels", Scope{LabelSelector: "app in (a,b),!legacy"}, ""},
		{"namespace with a slash", Scope{Namespace: "a/b"}, "Scope.Namespace"},
		{"namespace in capitals", Scope{Namespace: "Demo"}, "Scope.Namespace"},
		{"namespace too long", Scope{Namespace: strings.Repeat("n", 64)}, "Scope.Namespace"},
		{"bad label selector", Scope{LabelSelector: "app in ("}, "Scope.LabelSelector"},
		{"bad field selector", Scope{FieldSelector: "spec.nodeName"}, "Scope.FieldSelector"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.scope.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

func TestScopeQueryAndString(t *testing.T) {
	for _, tc := range []struct {
		scope     Scope
		query, st string
	}{
		{Scope{}, "", ""},
		{Scope{Namespace: "demo"}, "", "namespace=demo"},
		{Scope{LabelSelector: "app=web"}, "labelSelector=app%3Dweb", "labels=app=web"},
		{Scope{Namespace: "demo", LabelSelector: "a", FieldSelector: "metadata.name=x"},
			"fieldSelector=metadata.name%3Dx&labelSelector=a", "namespace=demo,labels=a,fields=metadata.name=x"},
	} {
		q := url.Values{}
		tc.scope.SetQuery(q)
		if got := q.Encode(); got != tc.query {
			t.Errorf("%#v.SetQuery: got %q, want %q", tc.scope, got, tc.query)
		}
		if got := tc.scope.String(); got != tc.st {
			t.Errorf("%#v.String() = %q, want %q", tc.scope, got, tc.st)
		}
	}
}
