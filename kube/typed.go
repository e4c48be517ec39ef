package kube

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
)

// TypedResource is an API resource together with the Go type its objects
// decode into: the pair every typed entry point of kwatch takes
// (client.For, controller.Cache, controller.Config.For, controller.Owns,
// ...), so that a program names it once:
//
//	var Pods = kube.Typed[*corev1.Pod](kube.Pods)
//
// T is a typed k8s.io/api object, a slim struct holding the fields the
// caller reads, *unstructured.Unstructured or
// *metav1.PartialObjectMetadata; the entry points require it to have the
// object's metadata getters (watch.Object). The zero value names no
// resource and is refused by every entry point. A TypedResource is a
// small value, safe to copy and to share.
type TypedResource[T any] struct {
	res Resource
}

// Typed returns the pair of res and T, for declarations of a fixed pair
// (a package-level var). It panics when T says it is another kind or
// version than res (see NewTyped), as regexp.MustCompile does on a bad
// pattern: the declaration is wrong and no run of the program can use it.
// Use NewTyped for a resource found at run time.
func Typed[T any](res Resource) TypedResource[T] {
	t, err := NewTyped[T](res)
	if err != nil {
		panic(err)
	}
	return t
}

// NewTyped returns the pair of res and T, or an error when res names no
// resource or T says it is another kind or version than res. A Go type
// says so when its package and name follow the Kubernetes API packages'
// layout, as every k8s.io/api type does (*appsv1.Deployment is apps/v1
// Deployment, whatever its objects hold). A slim struct, unstructured or
// metadata-only type says nothing of its kind here; the write client
// checks each object it sends instead.
func NewTyped[T any](res Resource) (TypedResource[T], error) {
	if res.Resource == "" || res.Version == "" {
		return TypedResource[T]{}, fmt.Errorf("kube: typed resource of %v: the resource has no name or version", reflect.TypeFor[T]())
	}
	if err := checkGoType(reflect.TypeFor[T](), res); err != nil {
		return TypedResource[T]{}, err
	}
	return TypedResource[T]{res: res}, nil
}

// Resource is the API resource the pair names.
func (t TypedResource[T]) Resource() Resource { return t.res }

// IsZero reports whether t is the zero value, which names no resource.
func (t TypedResource[T]) IsZero() bool { return t.res.Resource == "" }

// String is the resource's String ("pods", "deployments.apps").
func (t TypedResource[T]) String() string { return t.res.String() }

// checkGoType refuses a Go type whose package and name say it is another
// group, version or kind than res.
func checkGoType(t reflect.Type, res Resource) error {
	group, version, kind, ok := goTypeKind(t)
	if !ok {
		return nil
	}
	if kind == res.Kind && version == res.Version && groupMatches(group, res.Group) {
		return nil
	}
	return fmt.Errorf("kube: Go type %v (%s.%s) is not of resource %s: the type's package and name say %s/%s %s, the resource is %s %s",
		t, t.Elem().PkgPath(), t.Elem().Name(), res, group, version, kind, res.GroupVersion(), res.Kind)
}

// apiVersionDir is the last element of an API package's path: "v1",
// "v1beta1", "v2alpha1".
var apiVersionDir = regexp.MustCompile(`^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$`)

// goTypeKind reads the group, version and kind of a pointer to a struct
// declared in a Kubernetes API package: k8s.io/api/GROUP/VERSION or
// k8s.io/REPO/pkg/apis/GROUP/VERSION (but k8s.io/apimachinery), where the type's name is its kind
// and GROUP the first label of its API group (client-go's scheme
// registers them so). ok is false for any other type.
func goTypeKind(t reflect.Type) (group, version, kind string, ok bool) {
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return "", "", "", false
	}
	return packageKind(t.Elem().PkgPath(), t.Elem().Name())
}

// packageKind is goTypeKind for the type name of package path pkg.
func packageKind(pkg, name string) (group, version, kind string, ok bool) {
	parts := strings.Split(pkg, "/")
	n := len(parts)
	if n < 4 || parts[0] != "k8s.io" || name == "" || !apiVersionDir.MatchString(parts[n-1]) {
		return "", "", "", false
	}
	api := n == 4 && parts[1] == "api"
	// k8s.io/apimachinery's meta types (PartialObjectMetadata, Table)
	// stand for objects of any resource.
	apis := n >= 5 && parts[n-3] == "apis" && parts[n-4] == "pkg" && parts[1] != "apimachinery"
	if !api && !apis {
		return "", "", "", false
	}
	return parts[n-2], parts[n-1], name, true
}

// groupMatches reports whether the package directory dir names group:
// "core" the core group "", others their group's first label
// ("apps", "coordination" for coordination.k8s.io).
func groupMatches(dir, group string) bool {
	switch dir {
	case "core":
		return group == ""
	case "apiserverinternal": // the one package not named after its group
		return group == "internal.apiserver.k8s.io"
	}
	return group == dir || strings.HasPrefix(group, dir+".")
}
