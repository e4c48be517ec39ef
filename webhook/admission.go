package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	jsoniter "github.com/json-iterator/go"
)

// Handler answers admission requests: the raw path, for handlers that read
// the encoded objects themselves. The server fills in the response's uid,
// recovers a panic into a denial and bounds the call by the request's
// timeout (ctx). Validating and Mutating are the typed easy paths.
type Handler interface {
	Admit(ctx context.Context, req *AdmissionRequest) AdmissionResponse
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, req *AdmissionRequest) AdmissionResponse

// Admit calls f.
func (f HandlerFunc) Admit(ctx context.Context, req *AdmissionRequest) AdmissionResponse {
	return f(ctx, req)
}

// Warnings are messages the API server passes to the client with its
// answer (kubectl prints each as "Warning: ...").
type Warnings []string

// Denial is an error a typed handler returns to deny a request with a
// status code and reason of its choice. Any other error denies with 403
// Forbidden and the error's text as the message.
type Denial struct {
	Code    int32  // HTTP status the client sees; 403 when 0
	Reason  string // a StatusReason such as "Invalid"; "Forbidden" when empty and Code is 0
	Message string
}

func (d *Denial) Error() string { return d.Message }

// Allowed is the response that admits a request.
func Allowed(warnings ...string) AdmissionResponse {
	return AdmissionResponse{Allowed: true, Warnings: warnings}
}

// Denied is the response that refuses a request with 403 Forbidden and
// msg, which the client sees after the API server's "admission webhook
// <name> denied the request: ".
func Denied(msg string) AdmissionResponse {
	return DeniedErr(errors.New(msg))
}

// DeniedErr is the response that refuses a request because of err: a
// *Denial keeps its code and reason, anything else is 403 Forbidden.
func DeniedErr(err error) AdmissionResponse {
	st := &Status{Status: "Failure", Code: http.StatusForbidden, Reason: "Forbidden", Message: err.Error()}
	var d *Denial
	if errors.As(err, &d) && d.Code != 0 {
		st.Code, st.Reason = d.Code, d.Reason
	}
	return AdmissionResponse{Allowed: false, Result: st}
}

// errored is the denial of a request the handler could not judge (an
// object that does not decode, a panic, a timeout).
func errored(code int32, msg string) AdmissionResponse {
	return AdmissionResponse{Result: &Status{Status: "Failure", Code: code, Message: msg}}
}

// objectJSON decodes and encodes the handlers' objects: json-iterator in
// its encoding/json-compatible mode (the same field tags and rules),
// several times faster on typed k8s.io/api objects.
var objectJSON = jsoniter.ConfigCompatibleWithStandardLibrary

// Request is an admission request with its objects decoded as T (a
// k8s.io/api type, a custom resource's Go type, or a slim struct holding
// only the fields the handler reads). Object is nil on DELETE, OldObject
// nil on CREATE and CONNECT.
type Request[T any] struct {
	*AdmissionRequest
	Object    *T
	OldObject *T
}

func decodeRequest[T any](req *AdmissionRequest) (*Request[T], *AdmissionResponse) {
	r := &Request[T]{AdmissionRequest: req}
	var err error
	if r.Object, err = decodeObject[T](req.Object); err != nil {
		resp := errored(http.StatusBadRequest, fmt.Sprintf("webhook: request.object does not decode as %T: %v", r.Object, err))
		return nil, &resp
	}
	if r.OldObject, err = decodeObject[T](req.OldObject); err != nil {
		resp := errored(http.StatusBadRequest, fmt.Sprintf("webhook: request.oldObject does not decode as %T: %v", r.OldObject, err))
		return nil, &resp
	}
	return r, nil
}

// decodeObject decodes raw into a fresh *T; absent (or null) is nil.
func decodeObject[T any](raw json.RawMessage) (*T, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	obj := new(T)
	if err := objectJSON.Unmarshal(raw, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// Validating returns a validating Handler: fn sees the decoded request and
// admits it by returning a nil error (with any warnings), or denies it with
// the error's message (a *Denial for another code). fn must not change the
// objects it is given; to change them write a Mutating handler.
func Validating[T any](fn func(ctx context.Context, req *Request[T]) (Warnings, error)) Handler {
	return HandlerFunc(func(ctx context.Context, raw *AdmissionRequest) AdmissionResponse {
		req, bad := decodeRequest[T](raw)
		if bad != nil {
			return *bad
		}
		warn, err := fn(ctx, req)
		if err != nil {
			resp := DeniedErr(err)
			resp.Warnings = warn
			return resp
		}
		return Allowed(warn...)
	})
}

// Mutating returns a mutating Handler: fn gets obj, a copy of req.Object
// that it changes (defaults, labels), and the response carries the JSON
// patch from the object as decoded to obj as fn left it; the patch only
// touches what fn changed, so fields T does not know are kept. An error
// denies as in Validating. On DELETE (no object) fn is not called and the
// request is admitted.
func Mutating[T any](fn func(ctx context.Context, req *Request[T], obj *T) (Warnings, error)) Handler {
	return HandlerFunc(func(ctx context.Context, raw *AdmissionRequest) AdmissionResponse {
		req, bad := decodeRequest[T](raw)
		if bad != nil {
			return *bad
		}
		if req.Object == nil {
			return Allowed()
		}
		obj, _ := decodeObject[T](raw.Object) // decoded once already: cannot fail
		before, err := objectJSON.Marshal(obj)
		if err != nil {
			return errored(http.StatusInternalServerError, fmt.Sprintf("webhook: encode %T: %v", obj, err))
		}
		warn, err := fn(ctx, req, obj)
		if err != nil {
			resp := DeniedErr(err)
			resp.Warnings = warn
			return resp
		}
		after, err := objectJSON.Marshal(obj)
		if err != nil {
			return errored(http.StatusInternalServerError, fmt.Sprintf("webhook: encode %T: %v", obj, err))
		}
		resp := Allowed(warn...)
		if resp.Patch, err = mutationPatch(raw.Object, before, after); err != nil {
			return errored(http.StatusInternalServerError, err.Error())
		}
		if resp.Patch != nil {
			resp.PatchType = "JSONPatch"
		}
		return resp
	})
}
