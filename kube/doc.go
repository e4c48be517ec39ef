// Package kube is kwatch's connection to a Kubernetes API server: where
// the server is and how to talk to it, shared by the list/watch streams of
// package watch and the writes of package client.
//
//   - Config from kubeconfig (LoadKubeconfig, DefaultConfig: KUBECONFIG
//     merged, first file wins per key, context override), in-cluster
//     (InClusterConfig, with a rotating service-account token) or by hand,
//     with bearer tokens, token files, basic auth, client certificates and
//     exec credential plugins (cached until expiry, re-run on a 401).
//     Config prints with secrets redacted under any fmt verb.
//   - A Client over HTTP/2 with health pings on TLS, or HTTP/1.1 on plain
//     http (credentials refused over plain http to a host, or through a
//     proxy, that is not loopback; user info in a server address refused,
//     see server.go). Config.HTTP.Timeout bounds each request that is not a
//     watch.
//   - A client-side token bucket (Config.RateLimit.QPS and Burst; DefaultQPS
//     and DefaultBurst) shared by every request of one Client, and the server's
//     flow control honoured: Send repeats a repeatable request (a GET, a
//     write guarded by a precondition, an apply) answered 429, or 503 with
//     Retry-After, after the wait the server names, at most
//     Config.RateLimit.MaxRetries times. A POST is never silently sent twice.
//   - Every non-2xx answer as a *StatusError (code, reason, message,
//     details, causes naming fields), in JSON or protobuf, with predicates:
//     IsNotFound, IsConflict, IsAlreadyExists, IsInvalid, IsForbidden,
//     IsUnauthorized, IsGone, IsTooManyRequests, IsRetryable,
//     IsResourceVersionTooLarge; ErrorFromResponse turns any response into
//     one, DecodeStatus any Status body.
//   - Discovery (Discover, cached; Refresh) and Resolve, which finds the
//     Resource a user means by any of its names ("po", "deploy", "Pod",
//     "deployments.apps"); a Resource names its paths.
//   - TypedResource pairs a Resource with the Go type its objects decode
//     into (Typed, NewTyped), once per program: the handle every typed
//     entry point of package client and package controller takes. A
//     k8s.io/api type paired with a resource of another kind, group or
//     version is refused when the pair is made.
package kube
