package sim

import (
	"encoding/base64"
	"fmt"
)

// KubeconfigBytes renders a kubeconfig for a server URL, its CA (nil for
// plain HTTP) and bearer token ("" for none). Its one context, "sim", has
// namespace "default", as kubectl's own does.
func KubeconfigBytes(url string, caPEM []byte, token string) []byte {
	cluster := fmt.Sprintf("    server: %s\n", url)
	if len(caPEM) > 0 {
		cluster += fmt.Sprintf("    certificate-authority-data: %s\n", base64.StdEncoding.EncodeToString(caPEM))
	}
	user := "{}"
	if token != "" {
		user = fmt.Sprintf("\n    token: %s", token)
	}
	return []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: sim
  cluster:
%scontexts:
- name: sim
  context:
    cluster: sim
    user: sim
    namespace: default
current-context: sim
users:
- name: sim
  user: %s
`, cluster, user))
}
