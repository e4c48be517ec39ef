//go:build tools

// Package apiserver only records the command this module builds:
// k8s.io/kubernetes/cmd/kube-apiserver.
package apiserver

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
