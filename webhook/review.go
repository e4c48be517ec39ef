package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The API versions and kinds this package speaks. The API server sends the
// first of a configuration's admissionReviewVersions (and a CRD's
// conversionReviewVersions) that it supports; register only "v1".
const (
	AdmissionAPIVersion  = "admission.k8s.io/v1"
	AdmissionKind        = "AdmissionReview"
	ConversionAPIVersion = "apiextensions.k8s.io/v1"
	ConversionKind       = "ConversionReview"
)

// Operation is the write an admission request is about.
type Operation string

// The operations of admission.k8s.io/v1.
const (
	Create  Operation = "CREATE"
	Update  Operation = "UPDATE"
	Delete  Operation = "DELETE"
	Connect Operation = "CONNECT"
)

// GroupVersionKind names a kind as an AdmissionRequest carries it.
type GroupVersionKind struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// GroupVersionResource names a resource as an AdmissionRequest carries it.
type GroupVersionResource struct {
	Group    string `json:"group"`
	Version  string `json:"version"`
	Resource string `json:"resource"`
}

// UserInfo is who made the request the API server is admitting.
type UserInfo struct {
	Username string              `json:"username,omitempty"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty"`
	Extra    map[string][]string `json:"extra,omitempty"`
}

// AdmissionRequest is the request of an admission.k8s.io/v1
// AdmissionReview, field for field. Object and OldObject are the encoded
// objects (OldObject on UPDATE and DELETE, Object absent on DELETE);
// Options the operation's options (CreateOptions, UpdateOptions,
// DeleteOptions).
type AdmissionRequest struct {
	UID                string                `json:"uid"`
	Kind               GroupVersionKind      `json:"kind"`
	Resource           GroupVersionResource  `json:"resource"`
	SubResource        string                `json:"subResource,omitempty"`
	RequestKind        *GroupVersionKind     `json:"requestKind,omitempty"`
	RequestResource    *GroupVersionResource `json:"requestResource,omitempty"`
	RequestSubResource string                `json:"requestSubResource,omitempty"`
	Name               string                `json:"name,omitempty"`
	Namespace          string                `json:"namespace,omitempty"`
	Operation          Operation             `json:"operation"`
	UserInfo           UserInfo              `json:"userInfo"`
	Object             json.RawMessage       `json:"object,omitempty"`
	OldObject          json.RawMessage       `json:"oldObject,omitempty"`
	DryRun             *bool                 `json:"dryRun,omitempty"`
	Options            json.RawMessage       `json:"options,omitempty"`
}

// IsDryRun reports whether the write will not be persisted: a webhook with
// side effects must then make none.
func (r *AdmissionRequest) IsDryRun() bool { return r.DryRun != nil && *r.DryRun }

// Status is the metav1.Status of a denial.
type Status struct {
	Status  string `json:"status,omitempty"`
	Message string `json:"message,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Code    int32  `json:"code,omitempty"`
}

// AdmissionResponse is the response of an AdmissionReview. Patch is the
// JSON patch (RFC 6902) of a mutating webhook, PatchType "JSONPatch" with it.
type AdmissionResponse struct {
	UID              string            `json:"uid"`
	Allowed          bool              `json:"allowed"`
	Result           *Status           `json:"status,omitempty"`
	Patch            []byte            `json:"patch,omitempty"`
	PatchType        string            `json:"patchType,omitempty"`
	AuditAnnotations map[string]string `json:"auditAnnotations,omitempty"`
	Warnings         []string          `json:"warnings,omitempty"`
}

// AdmissionReview is the envelope of both directions.
type AdmissionReview struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	Request    *AdmissionRequest  `json:"request,omitempty"`
	Response   *AdmissionResponse `json:"response,omitempty"`
}

// ConversionRequest asks to convert Objects to DesiredAPIVersion.
type ConversionRequest struct {
	UID               string            `json:"uid"`
	DesiredAPIVersion string            `json:"desiredAPIVersion"`
	Objects           []json.RawMessage `json:"objects"`
}

// ConversionResponse answers a ConversionRequest: every object converted,
// in order, with Result.Status "Success", or none and "Failure" with a
// message.
type ConversionResponse struct {
	UID              string            `json:"uid"`
	ConvertedObjects []json.RawMessage `json:"convertedObjects"`
	Result           Status            `json:"result"`
}

// ConversionReview is the envelope of both directions.
type ConversionReview struct {
	APIVersion string              `json:"apiVersion"`
	Kind       string              `json:"kind"`
	Request    *ConversionRequest  `json:"request,omitempty"`
	Response   *ConversionResponse `json:"response,omitempty"`
}

// ErrBadReview is wrapped by every error of DecodeAdmissionReview and
// DecodeConversionReview: the body is not a review this package serves.
var ErrBadReview = errors.New("webhook: bad review")

// DecodeAdmissionReview parses an AdmissionReview request body: JSON, of
// apiVersion admission.k8s.io/v1 and kind AdmissionReview, with a request
// carrying a uid and an operation. Errors wrap ErrBadReview and name what
// was wrong.
func DecodeAdmissionReview(body []byte) (*AdmissionReview, error) {
	var rv AdmissionReview
	if err := decodeStrictEnvelope(body, &rv); err != nil {
		return nil, err
	}
	if err := checkTypeMeta(rv.APIVersion, rv.Kind, AdmissionAPIVersion, AdmissionKind); err != nil {
		return nil, err
	}
	switch r := rv.Request; {
	case r == nil:
		return nil, fmt.Errorf("%w: AdmissionReview has no request", ErrBadReview)
	case r.UID == "":
		return nil, fmt.Errorf("%w: AdmissionReview request.uid is empty", ErrBadReview)
	case r.Operation == "":
		return nil, fmt.Errorf("%w: AdmissionReview request.operation is empty", ErrBadReview)
	}
	return &rv, nil
}

// DecodeConversionReview parses a ConversionReview request body: JSON, of
// apiVersion apiextensions.k8s.io/v1 and kind ConversionReview, with a
// request carrying a uid and a desiredAPIVersion. Errors wrap ErrBadReview.
func DecodeConversionReview(body []byte) (*ConversionReview, error) {
	var rv ConversionReview
	if err := decodeStrictEnvelope(body, &rv); err != nil {
		return nil, err
	}
	if err := checkTypeMeta(rv.APIVersion, rv.Kind, ConversionAPIVersion, ConversionKind); err != nil {
		return nil, err
	}
	switch r := rv.Request; {
	case r == nil:
		return nil, fmt.Errorf("%w: ConversionReview has no request", ErrBadReview)
	case r.UID == "":
		return nil, fmt.Errorf("%w: ConversionReview request.uid is empty", ErrBadReview)
	case r.DesiredAPIVersion == "":
		return nil, fmt.Errorf("%w: ConversionReview request.desiredAPIVersion is empty", ErrBadReview)
	}
	return &rv, nil
}

// decodeStrictEnvelope decodes one JSON object into v, refusing trailing
// data; the error names the offset of a syntax error.
func decodeStrictEnvelope(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return fmt.Errorf("%w: the body is empty", ErrBadReview)
	}
	if objectJSON.Unmarshal(body, v) == nil {
		return nil // the fast path; a failure is decoded again below for its message
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("%w: the body is not JSON (offset %d): %v", ErrBadReview, se.Offset, err)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: the body is not JSON: it ends inside a value (%d bytes)", ErrBadReview, len(body))
		}
		return fmt.Errorf("%w: %v", ErrBadReview, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: data after the review object at offset %d", ErrBadReview, dec.InputOffset())
	}
	return fmt.Errorf("%w: the body does not decode as a review", ErrBadReview)
}

func checkTypeMeta(apiVersion, kind, wantVersion, wantKind string) error {
	if kind != wantKind {
		return fmt.Errorf("%w: kind %q, want %q", ErrBadReview, kind, wantKind)
	}
	if apiVersion != wantVersion {
		return fmt.Errorf("%w: %s apiVersion %q is not served, only %q (list only v1 in the configuration's review versions)",
			ErrBadReview, kind, apiVersion, wantVersion)
	}
	return nil
}
