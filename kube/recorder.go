package kube

import (
	"context"
	"net/http"
	"strings"
)

// Written is one write the server accepted, as package client reports it
// to a client's WriteRecorder.
type Written struct {
	Resource        Resource
	Namespace, Name string
	// ResourceVersion is the version in the server's answer (for a
	// delete, of the object as the answer shows it, if it did).
	ResourceVersion string
	// UID is the object's uid when the answer carried it.
	UID string
	// Labels are the written object's labels, as the answer shows them.
	Labels map[string]string
	// Deleted marks a delete.
	Deleted bool
	// Uncertain marks a write whose outcome is unknown: it may have been
	// done, but no answer said so (the connection broke or the context
	// ended while it was out, the answer could not be read, or the answer
	// was one after which the write may still complete:
	// AnswerOutcomeUnknown).
	// ResourceVersion, UID and Labels are empty, and Name too for a
	// create (its name may be the server's, from generateName).
	Uncertain bool
}

// OutcomeUnknown reports whether a write answered with HTTP status code
// may still be done by the server: 500 (the server failed after it may
// have stored it), 504 (its own request timeout: the storage layer may
// still commit), and 502 and 503, which a proxy or load balancer between
// the client and the server (or the API server's aggregator in front of
// an extension server) answers itself when its upstream connection broke,
// possibly after it had forwarded the request. Any other answer is the
// outcome. A write with no answer at all is unknown too; that is the
// caller's to tell.
func OutcomeUnknown(code int) bool {
	switch code {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// AnswerOutcomeUnknown reports whether a write (method, the HTTP verb)
// the server answered with se may still be done: when an earlier attempt
// of it may have been (se.EarlierOutcomeUnknown: a 503 that Client.Send
// retried, whose attempt the server may have done before a later one was
// refused, say with a 409 of the version that attempt wrote), or
// OutcomeUnknown(se.Code), but for the one 500 that says a create, update
// or patch was refused before anything was stored, an admission webhook
// that could not be called under failurePolicy Fail. The API server calls admission webhooks
// before it writes to storage, and answers that failure as InternalError
// with the message "Internal error occurred: failed calling webhook
// <name>: ..." (captured from kube-apiserver by the conformance suite's
// webhook cases). Taken as unknown, every write of a controller whose
// webhook is down would hold its key for the settle time of a write of
// unknown outcome, as if the server might still apply it.
//
// A delete is not refused so: kube-apiserver deletes an object of a
// graceful-deletion strategy (a pod) whose grace period comes to 0 in two
// steps, each calling the validating webhooks, and stores the first (the
// deletionTimestamp, a new resourceVersion) before the second call can
// fail; the kubelet or the pod collector may then finish the delete. Nor is
// a conversion webhook's failure: the answer's conversion runs after the
// write is stored.
func AnswerOutcomeUnknown(method string, se *StatusError) bool {
	if se.EarlierOutcomeUnknown {
		return true
	}
	if !OutcomeUnknown(int(se.Code)) {
		return false
	}
	return method == http.MethodDelete || se.Code != http.StatusInternalServerError ||
		se.Reason != "InternalError" || !strings.HasPrefix(se.Message, admissionCallFailed)
}

// admissionCallFailed begins the message of kube-apiserver's 500 for an
// admission webhook it could not call (apierrors' InternalError wording
// around the admission plugin's "failed calling webhook").
const admissionCallFailed = "Internal error occurred: failed calling webhook "

// WriteRecorder learns of the writes a Client's server accepted: package
// client calls it after every create, update, patch, apply and delete of
// one object whose answer was a success, and after one whose outcome is
// unknown (Written.Uncertain), dry runs excepted, with the request's
// context. It must be quick and must not write.
type WriteRecorder func(ctx context.Context, w Written)

// WithWriteRecorder returns a client that reports its accepted writes to
// rec and is otherwise c (as WithWriteInterceptor). A recorder already on
// c is called first.
func (c *Client) WithWriteRecorder(rec WriteRecorder) *Client {
	cp := *c
	if inner := c.recorder; inner != nil {
		cp.recorder = func(ctx context.Context, w Written) { inner(ctx, w); rec(ctx, w) }
	} else {
		cp.recorder = rec
	}
	return &cp
}

// RecordWrite reports w to the client's WriteRecorder, if it has one.
// Package client calls it; a write sent another way (Send, Do) may too.
func (c *Client) RecordWrite(ctx context.Context, w Written) {
	if c.recorder != nil {
		c.recorder(ctx, w)
	}
}
