package sim

import (
	stdjson "encoding/json"
	"slices"
	"strconv"

	"sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// Field ownership is computed with sigs.k8s.io/structured-merge-diff, the library
// the real server uses for it, so that merging, conflicts, pruning and the
// FieldsV1 encoding are the real ones. The real server gives it the OpenAPI schema
// of each kind; the simulator has none, so it builds a schema for each write from
// the objects involved and the rules in fieldrules.go: every map it sees is a
// struct with the fields present (or, where the rules say so, a map of data or an
// atomic value), every list atomic unless the rules key it or make it a set.

// The two named types of the library's deduced schema, which custom resources use
// outside their metadata.
const (
	typeAtomic  = "__untyped_atomic_"
	typeDeduced = "__untyped_deduced_"
)

var (
	untyped    = schema.Untyped
	scalarRef  = schema.TypeRef{Inlined: schema.Atom{Scalar: &untyped}}
	atomicRef  = namedRef(typeAtomic)
	deducedRef = namedRef(typeDeduced)
)

func namedRef(name string) schema.TypeRef { return schema.TypeRef{NamedType: &name} }

// deducedTypes are the library's deduced schema types, copied into every schema.
func deducedTypes() []schema.TypeDef {
	return []schema.TypeDef{
		{Name: typeAtomic, Atom: schema.Atom{Scalar: &untyped,
			List: &schema.List{ElementType: atomicRef, ElementRelationship: schema.Atomic},
			Map:  &schema.Map{ElementType: atomicRef, ElementRelationship: schema.Atomic}}},
		{Name: typeDeduced, Atom: schema.Atom{Scalar: &untyped,
			List: &schema.List{ElementType: atomicRef, ElementRelationship: schema.Atomic},
			Map:  &schema.Map{ElementType: deducedRef, ElementRelationship: schema.Separable}}},
	}
}

// objectSchema is a schema that covers a set of objects of one kind.
type objectSchema struct {
	schema *schema.Schema
	root   schema.TypeRef
}

// schemaBuilder builds the type of each path from the values found there.
type schemaBuilder struct {
	rules kindRules
	cr    bool // a custom resource: deduced outside metadata
}

// buildSchema returns a schema that types every one of objs (decoded objects of
// resource r, converted with smdValue).
func buildSchema(r *resource, objs ...any) objectSchema {
	rules, builtin := rulesFor(r)
	b := schemaBuilder{rules: rules, cr: !builtin}
	return objectSchema{schema: &schema.Schema{Types: deducedTypes()}, root: b.ref("", 0, objs, nil)}
}

// typed converts an object (from smdValue) to a typed value of the schema.
func (os objectSchema) typed(v any, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	return typed.AsTyped(value.NewValueInterface(v), os.schema, os.root, opts...)
}

// ref is the type of the values vals found at path (depth members below the root).
// defaults, for the items of a keyed list, are the values of absent key fields.
func (b *schemaBuilder) ref(path string, depth int, vals []any, defaults map[string]any) schema.TypeRef {
	if b.cr && depth == 1 && path != "metadata" {
		return deducedRef
	}
	var maps []map[string]any
	var lists [][]any
	scalar := false
	for _, v := range vals {
		switch x := v.(type) {
		case map[string]any:
			maps = append(maps, x)
		case []any:
			lists = append(lists, x)
		case nil:
		default:
			scalar = true
		}
	}
	var atom schema.Atom
	if scalar || (len(maps) == 0 && len(lists) == 0) {
		atom.Scalar = &untyped
	}
	rule := b.rules[path]
	if len(maps) > 0 {
		atom.Map = b.mapType(path, depth, rule, maps, defaults)
	}
	if len(lists) > 0 {
		atom.List = b.listType(path, depth, rule, lists)
	}
	return schema.TypeRef{Inlined: atom}
}

func (b *schemaBuilder) mapType(path string, depth int, rule fieldRule, maps []map[string]any, defaults map[string]any) *schema.Map {
	switch rule.shape {
	case shapeAtomic:
		return &schema.Map{ElementType: atomicRef, ElementRelationship: schema.Atomic}
	case shapeMap:
		return &schema.Map{ElementType: deducedRef, ElementRelationship: schema.Separable}
	}
	var keys []string
	for _, m := range maps {
		for k := range m {
			if !slices.Contains(keys, k) && (!b.cr || depth > 0 || k == "metadata" || k == "apiVersion" || k == "kind") {
				keys = append(keys, k)
			}
		}
	}
	for k := range defaults {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	t := &schema.Map{ElementType: deducedRef, ElementRelationship: schema.Separable}
	for _, k := range keys {
		var child []any
		for _, m := range maps {
			if v, ok := m[k]; ok {
				child = append(child, v)
			}
		}
		t.Fields = append(t.Fields, schema.StructField{Name: k, Type: b.ref(childPath(path, k), depth+1, child, nil),
			Default: defaults[k]})
	}
	return t
}

func (b *schemaBuilder) listType(path string, depth int, rule fieldRule, lists [][]any) *schema.List {
	switch rule.shape {
	case shapeKeyed:
		var items []any
		for _, l := range lists {
			items = append(items, l...)
		}
		return &schema.List{ElementType: b.ref(path+"[]", depth+1, items, rule.keyDefaults),
			ElementRelationship: schema.Associative, Keys: rule.keys}
	case shapeSet:
		return &schema.List{ElementType: scalarRef, ElementRelationship: schema.Associative}
	}
	return &schema.List{ElementType: atomicRef, ElementRelationship: schema.Atomic}
}

// smdValue copies a decoded JSON value into the types the library reads: numbers
// (json.Number here) become int64 or float64.
func smdValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = smdValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = smdValue(e)
		}
		return out
	case stdjson.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return n
		}
		f, _ := strconv.ParseFloat(string(x), 64)
		return f
	}
	return v
}

// fromSMD turns a value the library produced back into a decoded JSON value of
// the simulator's (json.Number for numbers), by a round trip through JSON.
func fromSMD(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}
