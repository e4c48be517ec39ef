package client

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// checkPatch checks a patch body is of its type's shape before it is sent:
// a JSON object for merge, strategic and apply patches, a JSON array for
// a JSON patch (apply may also be YAML, which is left to the server).
func checkPatch(pt PatchType, patch []byte) error {
	trimmed := bytes.TrimSpace(patch)
	switch pt {
	case MergePatch, StrategicMergePatch:
		if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
			return inputErr("patch", "a %s body must be a JSON object", pt)
		}
	case JSONPatch:
		if len(trimmed) == 0 || trimmed[0] != '[' || !json.Valid(trimmed) {
			return inputErr("patch", "a %s body must be a JSON array of operations", pt)
		}
	case ApplyPatch:
		if len(trimmed) == 0 {
			return inputErr("patch", "an apply patch must not be empty")
		}
	default:
		return inputErr("patch", "%s", fmt.Sprintf("patch type %q is not one of %s, %s, %s, %s", pt, MergePatch, JSONPatch, StrategicMergePatch, ApplyPatch))
	}
	return nil
}
