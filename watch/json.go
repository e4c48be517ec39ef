package watch

import jsoniter "github.com/json-iterator/go"

// json is the one json-iterator configuration the package uses: compatible
// with encoding/json for struct tags and field matching, with decoded
// strings interned (see intern.go). It is kwatch's own frozen config, so
// the extension does not leak into other users of json-iterator.
var json = func() jsoniter.API {
	api := jsoniter.Config{EscapeHTML: true, SortMapKeys: true, ValidateJsonRawMessage: true}.Froze()
	api.RegisterExtension(&internExtension{})
	return api
}()
