//go:build tools

// Package kubectl only records the command this module builds:
// k8s.io/kubernetes/cmd/kubectl.
package kubectl

import _ "k8s.io/kubernetes/cmd/kubectl"
