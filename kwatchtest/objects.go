package kwatchtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kwatch/kwatch/internal/rig/sim"
)

// Resources are named as the in-process API names them: "pods", "configmaps",
// "deployments.apps", or any plural that is unique ("deployments"). The
// default resources are pods, namespaces, configmaps, secrets, events,
// services, nodes, deployments, replicasets, statefulsets and leases.

// Object is one stored object as the server serves it.
type Object struct {
	Namespace, Name, UID string
	// ResourceVersion is metadata.resourceVersion.
	ResourceVersion string
	// JSON is the body the server serves; the caller owns it.
	JSON []byte
}

// Into decodes the object into v (a *corev1.Pod, a slim struct, a map).
func (o Object) Into(v any) error { return json.Unmarshal(o.JSON, v) }

func fromSim(o sim.Object) Object {
	return Object{Namespace: o.Namespace, Name: o.Name, UID: o.UID,
		ResourceVersion: formatRV(o.ResourceVersion), JSON: bytes.Clone(o.JSON)}
}

func formatRV(rv uint64) string { return strconv.FormatUint(rv, 10) }

// Create stores a new object in resource and returns it as stored (uid,
// resourceVersion, creationTimestamp set; generateName works). obj is JSON or
// YAML ([]byte or string), or any value that marshals to an object, such as a
// typed *corev1.ConfigMap; its kind and apiVersion may be left out. Like the real
// server's create it discards the status of kinds with a status subresource
// (a pod is Pending); use SetStatus to give one, as a kubelet or controller would.
func (s *Server) Create(resource string, obj any) (Object, error) {
	b, err := toJSON(obj)
	if err != nil {
		return Object{}, err
	}
	o, err := s.srv.Create(resource, b)
	if err != nil {
		return Object{}, err
	}
	return fromSim(o), nil
}

// Apply stores every object in docs, creating each one or replacing the one of
// the same name, and returns them in order. Each doc is a YAML stream (string or
// []byte, documents separated by "---"; a kind List adds its items), a JSON
// object, or a value that marshals to one; every object needs kind and
// apiVersion, which name its resource. Status is stored as given.
func (s *Server) Apply(docs ...any) ([]Object, error) {
	var out []Object
	for _, d := range docs {
		objs, err := splitDocs(d)
		if err != nil {
			return out, err
		}
		for _, b := range objs {
			o, err := s.applyOne(b)
			if err != nil {
				return out, err
			}
			out = append(out, o)
		}
	}
	return out, nil
}

// MustApply is Apply, failing the test on an error.
func (s *Server) MustApply(docs ...any) []Object {
	out, err := s.Apply(docs...)
	if err != nil {
		s.fatalf("kwatchtest: apply: %v", err)
	}
	return out
}

type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"metadata"`
}

func (s *Server) applyOne(b []byte) (Object, error) {
	var tm typeMeta
	if err := json.Unmarshal(b, &tm); err != nil {
		return Object{}, fmt.Errorf("kwatchtest: %w", err)
	}
	if tm.Kind == "" || tm.APIVersion == "" {
		return Object{}, fmt.Errorf("kwatchtest: object %q has no kind or apiVersion; use Create with its resource", tm.Metadata.Name)
	}
	res, err := s.srv.ResourceFor(tm.APIVersion, tm.Kind)
	if err != nil {
		return Object{}, err
	}
	if _, err := s.srv.Get(res, tm.Metadata.Namespace, tm.Metadata.Name); err != nil || tm.Metadata.Name == "" {
		o, err := s.srv.Create(res, b)
		if err != nil {
			return Object{}, err
		}
		return s.keepStatus(res, o, b)
	}
	o, err := s.srv.Update(res, b) // in-process: the status is written as given
	if err != nil {
		return Object{}, err
	}
	return fromSim(o), nil
}

// keepStatus writes the status a created object came with, which the create
// discarded, so seeded objects look as the doc says.
func (s *Server) keepStatus(res string, created sim.Object, doc []byte) (Object, error) {
	var st struct {
		Status json.RawMessage `json:"status"`
	}
	if json.Unmarshal(doc, &st) != nil || len(st.Status) == 0 || string(st.Status) == "{}" || string(st.Status) == "null" {
		return fromSim(created), nil
	}
	patch, _ := json.Marshal(map[string]json.RawMessage{"status": st.Status})
	o, err := s.srv.Patch(res, created.Namespace, created.Name, patch)
	if err != nil {
		return Object{}, err
	}
	return fromSim(o), nil
}

// SetStatus merges status into the object's status, as a kubelet or a
// controller writing the status subresource would, and returns the object.
// status is JSON or YAML, or a value that marshals to the status object.
func (s *Server) SetStatus(resource, namespace, name string, status any) (Object, error) {
	b, err := toJSON(status)
	if err != nil {
		return Object{}, err
	}
	patch, _ := json.Marshal(map[string]json.RawMessage{"status": b})
	o, err := s.srv.Patch(resource, namespace, name, patch)
	if err != nil {
		return Object{}, err
	}
	return fromSim(o), nil
}

// Patch applies a JSON merge patch to an object, status included, and returns it.
func (s *Server) Patch(resource, namespace, name string, mergePatch any) (Object, error) {
	b, err := toJSON(mergePatch)
	if err != nil {
		return Object{}, err
	}
	o, err := s.srv.Patch(resource, namespace, name, b)
	if err != nil {
		return Object{}, err
	}
	return fromSim(o), nil
}

// Delete removes an object at once, whatever its finalizers or grace period,
// as if whoever they wait for were done. A client's DELETE through the API
// behaves as on a real server instead: finalizers and a bound pod's grace
// period keep the object, marked with deletionTimestamp.
func (s *Server) Delete(resource, namespace, name string) error {
	_, err := s.srv.Delete(resource, namespace, name)
	return err
}

// Get returns the server's current state of one object; a missing object is an
// error for which IsNotFound reports true.
func (s *Server) Get(resource, namespace, name string) (Object, error) {
	o, err := s.srv.Get(resource, namespace, name)
	if err != nil {
		return Object{}, err
	}
	return fromSim(o), nil
}

// List returns every object of resource in namespace ("" for all namespaces),
// sorted by namespace and name.
func (s *Server) List(resource, namespace string) ([]Object, error) {
	_, m, err := s.srv.Snapshot(resource)
	if err != nil {
		return nil, err
	}
	out := make([]Object, 0, len(m))
	for _, o := range m {
		if namespace == "" || o.Namespace == namespace {
			out = append(out, fromSim(o))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// ListInto is List decoded into the caller's type: ListInto[corev1.Pod](srv, "pods", "demo").
func ListInto[T any](s *Server, resource, namespace string) ([]T, error) {
	objs, err := s.List(resource, namespace)
	if err != nil {
		return nil, err
	}
	out := make([]T, len(objs))
	for i, o := range objs {
		if err := o.Into(&out[i]); err != nil {
			return nil, fmt.Errorf("kwatchtest: decode %s/%s: %w", o.Namespace, o.Name, err)
		}
	}
	return out, nil
}

// IsNotFound reports whether err says an object does not exist.
func IsNotFound(err error) bool {
	var se *sim.StatusError
	return errors.As(err, &se) && se.Code() == 404
}

// toJSON turns a []byte or string of JSON or YAML, or any other value, into JSON.
func toJSON(v any) ([]byte, error) {
	var b []byte
	switch v := v.(type) {
	case []byte:
		b = v
	case string:
		b = []byte(v)
	case json.RawMessage:
		b = v
	default:
		j, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("kwatchtest: marshal %T: %w", v, err)
		}
		return j, nil
	}
	j, err := yaml.YAMLToJSON(b) // JSON is YAML
	if err != nil {
		return nil, fmt.Errorf("kwatchtest: %w", err)
	}
	return j, nil
}

// splitDocs turns one doc into the JSON of each object it holds.
func splitDocs(d any) ([][]byte, error) {
	var parts []string
	switch v := d.(type) {
	case []byte:
		parts = splitYAML(string(v))
	case string:
		parts = splitYAML(v)
	default:
		b, err := toJSON(v)
		if err != nil {
			return nil, err
		}
		return [][]byte{b}, nil
	}
	var out [][]byte
	for _, p := range parts {
		b, err := toJSON(p)
		if err != nil {
			return nil, err
		}
		if string(b) == "null" {
			continue // an empty document
		}
		var list struct {
			Kind  string            `json:"kind"`
			Items []json.RawMessage `json:"items"`
		}
		if json.Unmarshal(b, &list) == nil && strings.HasSuffix(list.Kind, "List") {
			for _, it := range list.Items {
				out = append(out, it)
			}
			continue
		}
		out = append(out, b)
	}
	return out, nil
}

// splitYAML splits a YAML stream at its "---" lines.
func splitYAML(s string) []string {
	var parts []string
	var cur strings.Builder
	for line := range strings.Lines(s) {
		if t := strings.TrimRight(line, " \t\r\n"); t == "---" || strings.HasPrefix(t, "--- ") {
			parts = append(parts, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteString(line)
	}
	return append(parts, cur.String())
}
