package webhook

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
)

// Converter converts the objects of one custom resource between its
// versions, hub and spoke: every version converts to and from the hub
// type H, so n versions need 2(n-1) functions, and a conversion between
// two spokes goes through the hub. Build it with NewConverter and
// AddVersion before serving; it is then safe for concurrent use.
//
// The converted object keeps the source's metadata, except labels and
// annotations (the API server refuses any other metadata change): when
// the conversion copied the metadata (the converted object has the name)
// they are the converted object's, so a conversion may move a field into
// an annotation and back; when it did not, the source's are kept, so a
// type that forgets to copy its ObjectMeta loses nothing. apiVersion is
// the desired one and kind the source's.
type Converter struct {
	hubType  reflect.Type
	versions map[string]version // by apiVersion ("example.com/v1")
}

// version is one apiVersion's two functions, on encoded objects.
type version struct {
	toHub   func(raw []byte) (any, error) // returns a *H
	fromHub func(hub any) ([]byte, error) // takes a *H
}

// NewConverter returns a Converter whose hub is the version hubAPIVersion
// ("group/version"), of Go type H.
func NewConverter[H any](hubAPIVersion string) *Converter {
	c := &Converter{hubType: reflect.TypeFor[H](), versions: map[string]version{}}
	c.versions[hubAPIVersion] = version{
		toHub: func(raw []byte) (any, error) {
			h := new(H)
			return h, json.Unmarshal(raw, h)
		},
		fromHub: func(hub any) ([]byte, error) { return json.Marshal(hub) },
	}
	return c
}

// AddVersion adds a spoke: apiVersion's Go type T and its conversions to
// and from the hub H, which must be the type c was built with. Each
// function fills dst, a zero value, from src; an error fails the whole
// request with its message.
func AddVersion[T, H any](c *Converter, apiVersion string, toHub func(src *T, dst *H) error, fromHub func(src *H, dst *T) error) error {
	if ht := reflect.TypeFor[H](); ht != c.hubType {
		return fmt.Errorf("webhook: AddVersion %s: hub type %v, but the converter's hub is %v", apiVersion, ht, c.hubType)
	}
	if _, dup := c.versions[apiVersion]; dup {
		return fmt.Errorf("webhook: AddVersion: %s is already added", apiVersion)
	}
	c.versions[apiVersion] = version{
		toHub: func(raw []byte) (any, error) {
			src, h := new(T), new(H)
			if err := json.Unmarshal(raw, src); err != nil {
				return nil, err
			}
			return h, toHub(src, h)
		},
		fromHub: func(hub any) ([]byte, error) {
			dst := new(T)
			if err := fromHub(hub.(*H), dst); err != nil {
				return nil, err
			}
			return json.Marshal(dst)
		},
	}
	return nil
}

// Versions lists the apiVersions c converts between, sorted.
func (c *Converter) Versions() []string {
	out := make([]string, 0, len(c.versions))
	for v := range c.versions {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// objectHead is what a conversion reads of every object before its version's
// type decodes it.
type objectHead struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Metadata   json.RawMessage `json:"metadata"`
}

// Convert converts every object of req to req.DesiredAPIVersion, or none:
// the first failure fails the request with a message naming the object.
func (c *Converter) Convert(req *ConversionRequest) ConversionResponse {
	fail := func(format string, args ...any) ConversionResponse {
		return ConversionResponse{UID: req.UID, ConvertedObjects: []json.RawMessage{},
			Result: Status{Status: "Failure", Message: fmt.Sprintf(format, args...)}}
	}
	to, ok := c.versions[req.DesiredAPIVersion]
	if !ok {
		return fail("webhook: cannot convert to %s: the converter knows %v", req.DesiredAPIVersion, c.Versions())
	}
	out := make([]json.RawMessage, len(req.Objects))
	for i, raw := range req.Objects {
		var head objectHead
		if err := json.Unmarshal(raw, &head); err != nil {
			return fail("webhook: objects[%d] is not a JSON object: %v", i, err)
		}
		if head.APIVersion == req.DesiredAPIVersion {
			out[i] = raw
			continue
		}
		from, ok := c.versions[head.APIVersion]
		if !ok {
			return fail("webhook: objects[%d] (%s): cannot convert from %q: the converter knows %v",
				i, objectName(head.Metadata), head.APIVersion, c.Versions())
		}
		conv, err := convertOne(from, to, raw)
		if err == nil {
			conv, err = restoreHead(conv, head, req.DesiredAPIVersion)
		}
		if err != nil {
			return fail("webhook: objects[%d] (%s) from %s to %s: %v",
				i, objectName(head.Metadata), head.APIVersion, req.DesiredAPIVersion, err)
		}
		out[i] = conv
	}
	return ConversionResponse{UID: req.UID, ConvertedObjects: out, Result: Status{Status: "Success"}}
}

func convertOne(from, to version, raw []byte) ([]byte, error) {
	hub, err := from.toHub(raw)
	if err != nil {
		return nil, err
	}
	return to.fromHub(hub)
}

// restoreHead sets apiVersion, kind and the source's metadata (keeping
// the converted labels and annotations) on a converted object.
func restoreHead(conv []byte, head objectHead, apiVersion string) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(conv, &m); err != nil || m == nil {
		return nil, fmt.Errorf("the converted object is not a JSON object")
	}
	m["apiVersion"], _ = json.Marshal(apiVersion)
	m["kind"], _ = json.Marshal(head.Kind)
	if len(head.Metadata) > 0 {
		md, err := mergeMetadata(head.Metadata, m["metadata"])
		if err != nil {
			return nil, err
		}
		m["metadata"] = md
	}
	return json.Marshal(m)
}

func mergeMetadata(src, conv json.RawMessage) (json.RawMessage, error) {
	var s, c map[string]json.RawMessage
	if err := json.Unmarshal(src, &s); err != nil {
		return nil, fmt.Errorf("metadata is not an object: %v", err)
	}
	_ = json.Unmarshal(conv, &c)
	if name, ok := c["name"]; !ok || string(name) == `""` {
		return src, nil // the conversion did not copy the metadata: keep the source's
	}
	for _, k := range []string{"labels", "annotations"} {
		if v, ok := c[k]; ok && string(v) != "null" && string(v) != "{}" {
			s[k] = v
		} else {
			delete(s, k)
		}
	}
	return json.Marshal(s)
}

// objectName is "namespace/name" from an object's metadata, for messages.
func objectName(md json.RawMessage) string {
	var m struct{ Namespace, Name string }
	_ = json.Unmarshal(md, &m)
	if m.Namespace != "" {
		return m.Namespace + "/" + m.Name
	}
	return m.Name
}
