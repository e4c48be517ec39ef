package watch

import jsoniter "github.com/json-iterator/go"

// json is the one json-iterator configuration the package uses, with
// decoded strings interned and arrays decoded to their exact length (see
// intern.go and slices.go). It is kwatch's own frozen config, so the
// extension does not leak into other users of json-iterator.
//
// Struct field names are matched as Kubernetes' own decoder matches them:
// case-sensitively, and as written (ObjectFieldMustBeSimpleString). The
// API server writes field names as plain identifiers; reading them without
// unescaping saves an allocation per field of every large struct, about 40%
// of a pod's allocations. A field name written with an escape ("n\u0061me")
// is therefore not recognised and its value is skipped, and one holding an
// escaped quote makes the object fail to decode with an error; map keys
// (labels, annotations) and all values are unescaped as usual.
var json = func() jsoniter.API {
	api := jsoniter.Config{EscapeHTML: true, SortMapKeys: true, ValidateJsonRawMessage: true,
		ObjectFieldMustBeSimpleString: true, CaseSensitive: true}.Froze()
	api.RegisterExtension(&internExtension{})
	return api
}()
