package sim

import (
	"fmt"
	"net/http"
	"strconv"
)

// Status is the API's failure body (kind Status, apiVersion v1), field for field in
// the order the real server writes it.
type Status struct {
	Kind       string         `json:"kind"`
	APIVersion string         `json:"apiVersion"`
	Metadata   StatusMeta     `json:"metadata"`
	Status     string         `json:"status"`
	Message    string         `json:"message,omitempty"`
	Reason     string         `json:"reason,omitempty"`
	Details    *StatusDetails `json:"details,omitempty"`
	Code       int            `json:"code"`
}

// StatusMeta is the list metadata a Status may carry (a fresh continue token on 410).
type StatusMeta struct {
	Continue string `json:"continue,omitempty"`
}

// StatusDetails names the object a Status is about.
type StatusDetails struct {
	Name              string        `json:"name,omitempty"`
	Group             string        `json:"group,omitempty"`
	Kind              string        `json:"kind,omitempty"`
	Causes            []StatusCause `json:"causes,omitempty"`
	RetryAfterSeconds int           `json:"retryAfterSeconds,omitempty"`
}

// StatusCause is one reason behind an Invalid or Timeout status.
type StatusCause struct {
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	Field   string `json:"field,omitempty"`
}

// StatusError is the error the in-process API returns for a failed operation; its
// Status is exactly what the HTTP API sends. Match with errors.As. It is a value
// once returned: safe to read from any goroutine.
type StatusError struct {
	Status Status
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("sim: %d %s: %s", e.Status.Code, e.Status.Reason, e.Status.Message)
}

// Code returns the HTTP status code.
func (e *StatusError) Code() int { return e.Status.Code }

func newStatus(code int, reason, msg string, details *StatusDetails) *StatusError {
	return &StatusError{Status: Status{
		Kind: "Status", APIVersion: "v1", Status: "Failure",
		Message: msg, Reason: reason, Details: details, Code: code,
	}}
}

// resourceName is how the real server names a resource in messages: "pods", "deployments.apps".
func resourceName(r *resource) string { return r.info.key() }

func errNotFound(r *resource, name string) *StatusError {
	return newStatus(http.StatusNotFound, "NotFound", fmt.Sprintf("%s %q not found", resourceName(r), name),
		&StatusDetails{Name: name, Group: r.info.Group, Kind: r.info.Resource})
}

func errAlreadyExists(r *resource, name string) *StatusError {
	return newStatus(http.StatusConflict, "AlreadyExists", fmt.Sprintf("%s %q already exists", resourceName(r), name),
		&StatusDetails{Name: name, Group: r.info.Group, Kind: r.info.Resource})
}

func errConflict(r *resource, name string) *StatusError {
	return newStatus(http.StatusConflict, "Conflict", fmt.Sprintf(
		"Operation cannot be fulfilled on %s %q: the object has been modified; please apply your changes to the latest version and try again",
		resourceName(r), name), &StatusDetails{Name: name, Group: r.info.Group, Kind: r.info.Resource})
}

func errBadRequest(msg string) *StatusError {
	return newStatus(http.StatusBadRequest, "BadRequest", msg, nil)
}

// errInvalid is a 422 naming the object and each invalid field.
func errInvalid(group, kind, name string, causes ...StatusCause) *StatusError {
	msg := fmt.Sprintf("%s %q is invalid: ", kind, name)
	if group != "" {
		msg = fmt.Sprintf("%s.%s %q is invalid: ", kind, group, name)
	}
	list := ""
	for i, c := range causes {
		if i > 0 {
			list += ", "
		}
		list += c.Field + ": " + c.Message
	}
	if len(causes) > 1 {
		list = "[" + list + "]" // the real server brackets several errors
	}
	msg += list
	return newStatus(http.StatusUnprocessableEntity, "Invalid", msg,
		&StatusDetails{Name: name, Group: group, Kind: kind, Causes: causes})
}

// errListOptions is the 422 the real server gives for contradictory list/watch parameters.
func errListOptions(field, detail string) *StatusError {
	return errInvalid("meta.k8s.io", "ListOptions", "",
		StatusCause{Reason: "FieldValueForbidden", Message: "Forbidden: " + detail, Field: field})
}

func errGone(msg string) *StatusError {
	return newStatus(http.StatusGone, "Expired", msg, nil)
}

const (
	msgWatchTooOld    = "The resourceVersion for the provided watch is too old."
	msgListTooOld     = "The resourceVersion for the provided list is too old."
	msgContinueTooOld = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."
)

func errTooLargeRV(want, have uint64) *StatusError {
	return newStatus(http.StatusGatewayTimeout, "Timeout",
		fmt.Sprintf("Timeout: Too large resource version: %d, current: %d", want, have),
		&StatusDetails{Causes: []StatusCause{{Reason: "ResourceVersionTooLarge", Message: "Too large resource version"}},
			RetryAfterSeconds: 1})
}

func errPathNotFound() *StatusError {
	return newStatus(http.StatusNotFound, "NotFound", "the server could not find the requested resource", &StatusDetails{})
}

func errMethodNotAllowed() *StatusError {
	return newStatus(http.StatusMethodNotAllowed, "MethodNotAllowed",
		"the server does not allow this method on the requested resource", &StatusDetails{})
}

func errUnauthorized() *StatusError {
	return newStatus(http.StatusUnauthorized, "Unauthorized", "Unauthorized", nil)
}

func errNotAcceptable() *StatusError {
	return newStatus(http.StatusNotAcceptable, "NotAcceptable",
		"only the following media types are accepted: application/json, application/yaml", nil)
}

func errTooManyWatches(limit int) *StatusError {
	return newStatus(http.StatusTooManyRequests, "TooManyRequests",
		fmt.Sprintf("Too many requests: open watch streams at limit %d (Options.MaxWatchers)", limit),
		&StatusDetails{RetryAfterSeconds: 1})
}

// errInjected is the response for an injected error fault.
func errInjected(code, retryAfter int) *StatusError {
	d := &StatusDetails{RetryAfterSeconds: retryAfter}
	switch code {
	case http.StatusTooManyRequests:
		return newStatus(code, "TooManyRequests", "Too many requests, please try again later.", d)
	case http.StatusServiceUnavailable:
		return newStatus(code, "ServiceUnavailable", "the server is currently unable to handle the request", d)
	case http.StatusInternalServerError:
		return newStatus(code, "InternalError", "Internal error occurred: injected fault", d)
	default:
		return newStatus(code, "", "injected fault ("+strconv.Itoa(code)+")", d)
	}
}

// writeStatus sends a Status body with its code (and Retry-After when set).
func writeStatus(w http.ResponseWriter, e *StatusError) {
	b, err := json.Marshal(&e.Status)
	if err != nil { // cannot happen: Status holds only strings and ints
		b = []byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","code":500}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-cache, private")
	if d := e.Status.Details; d != nil && d.RetryAfterSeconds > 0 {
		h.Set("Retry-After", strconv.Itoa(d.RetryAfterSeconds))
	}
	w.WriteHeader(e.Status.Code)
	_, _ = w.Write(b)
}
