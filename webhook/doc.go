// Package webhook serves Kubernetes admission and conversion webhooks: the
// HTTPS server a controller.Manager runs beside its controllers
// (ManagerOptions.Webhook), with typed handlers.
//
//   - Admission (admission.k8s.io/v1 AdmissionReview): Validating[T] gets
//     the request with its objects decoded as T and returns warnings or an
//     error, which denies with its message (a *Denial picks the code);
//     Mutating[T] gets a copy of the object to change, and the JSON patch
//     (RFC 6902) the API server applies is computed from the copy before
//     and after, touching only what the handler changed (patch.go). The
//     request's operation, user, old object, dry-run flag and subresource
//     are on Request. Handler is the raw path under both.
//   - Conversion (apiextensions.k8s.io/v1 ConversionReview): a Converter
//     converts between a CRD's versions through a hub type; every object
//     of a request is converted or the request fails with a message naming
//     the object.
//   - Every request gets an answer: a body that is no review (malformed,
//     over Options.MaxRequestBytes, another apiVersion) is a 400, 413 or
//     415 naming what was wrong; a handler that panics or outlives the
//     request's timeout is answered as a denial (a failed conversion) with
//     the reason, never a dropped connection, and the API server's
//     failurePolicy decides what happens next. route.go says how a request
//     becomes a typed call.
//   - Certificates come from a mounted Secret's tls.crt and tls.key,
//     re-read on the next TLS handshake after they change (certs.go), or,
//     for development, from SelfSigned, which makes a CA and writes it into
//     the named webhook configurations' and CRDs' caBundle.
//   - Every replica serves, leader or not (the API server calls any of
//     them), so a handler's writes through Manager.Client, which is fenced
//     to the leader (controller's doc), are refused on the others: a
//     handler that must write (rare; webhooks declare sideEffects None)
//     uses the *kube.Client given to NewManager.
//   - Metrics per path: kwatch_webhook_requests_total, the latency
//     histogram kwatch_webhook_request_duration_seconds and
//     kwatch_webhook_answers_total by answer (allowed, denied, converted,
//     failed, rejected); a log line per denial, failure and refusal.
//
// The constructor starts nothing; Run serves until its context ends and
// returns after its goroutines.
package webhook
