package sim

import "encoding/base64"

// normalizeSecret does what the real server's conversion and defaulting do
// to every secret written: stringData is merged into data (base64, winning
// over a data key of the same name) and never stored, and type defaults
// to Opaque.
func normalizeSecret(m map[string]any) *StatusError {
	if sd, ok := m["stringData"]; ok {
		strs, ok := sd.(map[string]any)
		if !ok && sd != nil {
			return errBadRequest(`Secret in version "v1" cannot be handled as a Secret: stringData: must be an object of strings`)
		}
		data, ok := m["data"].(map[string]any)
		if !ok {
			if m["data"] != nil {
				return errBadRequest(`Secret in version "v1" cannot be handled as a Secret: data: must be an object of base64 strings`)
			}
			data = map[string]any{}
		}
		for k, v := range strs {
			s, ok := v.(string)
			if !ok {
				return errBadRequest(`Secret in version "v1" cannot be handled as a Secret: stringData.` + k + `: must be a string`)
			}
			data[k] = base64.StdEncoding.EncodeToString([]byte(s))
		}
		if len(data) > 0 {
			m["data"] = data
		}
		delete(m, "stringData")
	}
	if t, _ := m["type"].(string); t == "" {
		m["type"] = "Opaque"
	}
	return nil
}
