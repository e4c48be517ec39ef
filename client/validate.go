package client

import (
	"fmt"
	"strings"
)

// InputError is bad input found before anything is sent: a missing name,
// a namespace on a cluster-scoped resource, an object of another kind.
type InputError struct {
	What string // "name", "namespace", "kind", "apiVersion", "patch", "field manager"
	Err  error
}

func (e *InputError) Error() string { return "client: " + e.Err.Error() }

func (e *InputError) Unwrap() error { return e.Err }

func inputErr(what, format string, args ...any) error {
	return &InputError{What: what, Err: fmt.Errorf(format, args...)}
}

// checkTarget checks the namespace and name of a single-object request.
func (r *Client[T]) checkTarget(ns, name string) error {
	if err := r.checkNamespace(ns, true); err != nil {
		return err
	}
	return checkName(name)
}

// checkNamespace checks ns for r's scope. needed says a namespaced
// request must name one (single objects, creates); lists and collection
// deletes may span all namespaces.
func (r *Client[T]) checkNamespace(ns string, needed bool) error {
	switch {
	case !r.res.Namespaced && ns != "":
		return inputErr("namespace", "%s is cluster-scoped, but namespace %q was given", r.res, ns)
	case r.res.Namespaced && ns == "" && needed:
		return inputErr("namespace", "%s is namespaced, but no namespace was given (metadata.namespace is empty)", r.res)
	case ns != "":
		return checkSegment("namespace", ns)
	}
	return nil
}

func checkName(name string) error {
	if name == "" {
		return inputErr("name", "no name given (metadata.name is empty)")
	}
	return checkSegment("name", name)
}

// checkSegment refuses what cannot be one path segment. The server
// refuses these names too; refusing them here keeps a name from naming
// another path.
func checkSegment(what, s string) error {
	if s == "." || s == ".." || strings.ContainsAny(s, "/%") {
		return inputErr(what, "%s %q may not be %q or contain '/' or '%%'", what, s, s)
	}
	return nil
}
