package watch

import jsoniter "github.com/json-iterator/go"

// json is the one json-iterator configuration the package uses: compatible
// with encoding/json for struct tags and field matching.
var json = jsoniter.ConfigCompatibleWithStandardLibrary
