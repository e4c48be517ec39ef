package kube

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kwatch/kwatch/internal/termtext"
)

// StatusError is an error answered by the API server: a non-2xx response or
// an ERROR event inside a watch stream. It carries the server's Status.
type StatusError struct {
	Code    int32  // HTTP status code, such as 409
	Reason  string // machine-readable reason, such as "Conflict", "AlreadyExists" or "Expired"
	Message string // the server's human-readable message
	// Continue is the fresh continue token a 410 Expired list offers, if any.
	Continue string
	// RetryAfter is the server's Retry-After (header or details.retryAfterSeconds), if any.
	RetryAfter time.Duration
	// Details names the object the error is about, when the server says.
	Details StatusDetails
	// Causes are the server's detail causes: for a 422 Invalid one per
	// failing field, for an apply conflict one per conflicting field.
	Causes []StatusCause
	// Attempts is how many times Client.Send sent the request when it
	// sent it more than once (a 429 or 503 retried): this answer is the
	// last one's. 0 for a request sent once.
	Attempts int
	// EarlierOutcomeUnknown: an earlier attempt was answered with a code
	// after which the server may have done the request all the same (a
	// 503: OutcomeUnknown), so a write's outcome is unknown whatever this
	// answer says (AnswerOutcomeUnknown).
	EarlierOutcomeUnknown bool
}

// StatusDetails is the object a Status is about.
type StatusDetails struct {
	Name  string
	Group string
	Kind  string // the resource's kind or plural, as the server names it
	UID   string
}

// StatusCause is one cause of a Status.
type StatusCause struct {
	Type    string // "FieldValueInvalid", "FieldManagerConflict", ...; "reason" on the wire
	Message string
	Field   string // "metadata.name", "data[a b]"; may be empty
}

// String is "field: message", or the message alone without a field.
func (c StatusCause) String() string {
	if c.Field == "" {
		return c.Message
	}
	return c.Field + ": " + c.Message
}

// Error says the code, reason and message, with control characters in
// the server's words escaped (see termtext): an error is printed on
// terminals and logged, and a server must not drive either. Message and
// Reason keep the words as sent.
func (e *StatusError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(int(e.Code))
	}
	if e.Attempts > 1 {
		msg += fmt.Sprintf(" (the answer to the last of %d attempts)", e.Attempts)
	}
	if e.Reason != "" {
		return termtext.Escape(fmt.Sprintf("server answered %d %s: %s", e.Code, e.Reason, msg))
	}
	return termtext.Escape(fmt.Sprintf("server answered %d: %s", e.Code, msg))
}

// Fields lists the fields the causes name, in order, each once.
func (e *StatusError) Fields() []string {
	var out []string
	for _, c := range e.Causes {
		if c.Field != "" && !containsString(out, c.Field) {
			out = append(out, c.Field)
		}
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// OpError says which operation failed (list, watch, stream, discovery, or
// a write: create, update, patch, apply, delete), on which resource and,
// for a single object, which one.
type OpError struct {
	Op        string // "list", "watch", "stream", "discovery", "get", "create", ...
	Resource  string // "pods", "deployments.apps"; may be empty
	Namespace string // of the object; may be empty
	Name      string // of the object; empty for collections
	Err       error
}

func (e *OpError) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	if e.Resource != "" {
		b.WriteByte(' ')
		b.WriteString(e.Resource)
	}
	if e.Name != "" {
		b.WriteByte(' ')
		b.WriteString(strconv.Quote(e.Name))
	}
	if e.Namespace != "" {
		b.WriteString(" in namespace ")
		b.WriteString(strconv.Quote(e.Namespace))
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *OpError) Unwrap() error { return e.Err }

// AsStatus returns the *StatusError inside err, if any.
func AsStatus(err error) (*StatusError, bool) {
	var se *StatusError
	ok := errors.As(err, &se)
	return se, ok
}

func hasCode(err error, code int32) bool {
	se, ok := AsStatus(err)
	return ok && se.Code == code
}

// IsGone reports whether err says the requested resourceVersion or continue
// token is no longer available (410 Gone or Expired): the caller must relist.
func IsGone(err error) bool { return hasCode(err, http.StatusGone) }

// IsNotFound reports a 404.
func IsNotFound(err error) bool { return hasCode(err, http.StatusNotFound) }

// IsUnauthorized reports a 401: the credentials were refused.
func IsUnauthorized(err error) bool { return hasCode(err, http.StatusUnauthorized) }

// IsForbidden reports a 403: the credentials lack permission.
func IsForbidden(err error) bool { return hasCode(err, http.StatusForbidden) }

// IsConflict reports a 409 that is not AlreadyExists: a stale
// resourceVersion, a failed precondition or an apply conflict. Re-read the
// object and try again (RetryOnConflict in package client does).
func IsConflict(err error) bool {
	se, ok := AsStatus(err)
	return ok && se.Code == http.StatusConflict && se.Reason != "AlreadyExists"
}

// IsAlreadyExists reports a 409 AlreadyExists: a create of a name in use.
func IsAlreadyExists(err error) bool { return hasReason(err, http.StatusConflict, "AlreadyExists") }

// IsInvalid reports a 422 Invalid; StatusError.Causes name the failing
// fields.
func IsInvalid(err error) bool { return hasCode(err, http.StatusUnprocessableEntity) }

// IsBadRequest reports a 400.
func IsBadRequest(err error) bool { return hasCode(err, http.StatusBadRequest) }

// IsTooManyRequests reports a 429: the server's flow control refused the
// request; RetryAfter says when to try again.
func IsTooManyRequests(err error) bool { return hasCode(err, http.StatusTooManyRequests) }

// IsMethodNotSupported reports a 405: the resource does not take the verb.
func IsMethodNotSupported(err error) bool { return hasCode(err, http.StatusMethodNotAllowed) }

// IsUnsupportedMediaType reports a 415: the server cannot read the body's
// encoding (a protobuf body for a custom resource, a strategic merge patch
// of one).
func IsUnsupportedMediaType(err error) bool { return hasCode(err, http.StatusUnsupportedMediaType) }

func hasReason(err error, code int32, reason string) bool {
	se, ok := AsStatus(err)
	return ok && se.Code == code && se.Reason == reason
}

// IsRetryable reports whether the same request may succeed later unchanged:
// 429, 500, 502, 503 and 504. Network errors are not StatusErrors; callers
// treat them as retryable themselves.
func IsRetryable(err error) bool {
	se, ok := AsStatus(err)
	if !ok {
		return false
	}
	switch se.Code {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// RetryAfter returns the delay the server asked for, if err carries one.
func RetryAfter(err error) (time.Duration, bool) {
	se, ok := AsStatus(err)
	if !ok || se.RetryAfter <= 0 {
		return 0, false
	}
	return se.RetryAfter, true
}

// maxRetryAfter bounds a server's Retry-After so a hostile value cannot park
// a client for days.
const maxRetryAfter = 10 * time.Minute

func parseRetryAfter(h string) time.Duration {
	if h == "" {
		return 0
	}
	if s, err := strconv.Atoi(h); err == nil && s > 0 {
		return min(time.Duration(s)*time.Second, maxRetryAfter)
	}
	if t, err := http.ParseTime(h); err == nil {
		if d := time.Until(t); d > 0 {
			return min(d, maxRetryAfter)
		}
	}
	return 0
}

// wireStatus is the subset of metav1.Status that StatusError keeps.
type wireStatus struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Continue string `json:"continue"`
	} `json:"metadata"`
	Status  string         `json:"status"`
	Message string         `json:"message"`
	Reason  string         `json:"reason"`
	Code    int32          `json:"code"`
	Details *statusDetails `json:"details"`
}

type statusDetails struct {
	Name              string        `json:"name"`
	Group             string        `json:"group"`
	Kind              string        `json:"kind"`
	UID               string        `json:"uid"`
	RetryAfterSeconds int32         `json:"retryAfterSeconds"`
	Causes            []statusCause `json:"causes"`
}

type statusCause struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Field   string `json:"field"`
}

// maxStatusCauses bounds the causes kept from one Status.
const maxStatusCauses = 100

func (w *wireStatus) toError() *StatusError {
	se := &StatusError{Code: w.Code, Reason: w.Reason, Message: w.Message, Continue: w.Metadata.Continue}
	if d := w.Details; d != nil {
		se.Details = StatusDetails{Name: d.Name, Group: d.Group, Kind: d.Kind, UID: d.UID}
		if d.RetryAfterSeconds > 0 {
			se.RetryAfter = min(time.Duration(d.RetryAfterSeconds)*time.Second, maxRetryAfter)
		}
		for _, c := range d.Causes[:min(len(d.Causes), maxStatusCauses)] {
			se.Causes = append(se.Causes, StatusCause{Type: c.Reason, Message: c.Message, Field: c.Field})
		}
	}
	return se
}

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// statusFromResponse builds the StatusError of a non-2xx answer. A body that
// is not a Status still yields an error with the HTTP code and the start of
// the body, so nothing the server said is lost.
func statusFromResponse(code int, header http.Header, body []byte) *StatusError {
	var w wireStatus
	if IsProtobuf(header.Get("Content-Type")) {
		if se, ok := statusFromProtobuf(body); ok {
			return finishResponseStatus(se, code, header)
		}
		w = wireStatus{Message: fmt.Sprintf("undecodable protobuf Status body of %d bytes", len(body))}
	} else if err := json.Unmarshal(body, &w); err != nil || w.Kind != "Status" {
		msg := string(body)
		if len(msg) > 512 {
			msg = msg[:512] + "..."
		}
		w = wireStatus{Message: msg}
	}
	return finishResponseStatus(w.toError(), code, header)
}

// finishResponseStatus applies what the HTTP answer itself says.
func finishResponseStatus(se *StatusError, code int, header http.Header) *StatusError {
	// The HTTP code is authoritative: a Status body may carry a wrong or zero code.
	se.Code = int32(code)
	if se.Reason == "" {
		se.Reason = reasonForCode(code)
	}
	if ra := parseRetryAfter(header.Get("Retry-After")); ra > 0 {
		se.RetryAfter = ra
	}
	return se
}

// DecodeStatus reads a Status object: JSON, or with protobuf set a Status
// message without the envelope. The code is the body's own (0 when it
// names none).
func DecodeStatus(b []byte, protobuf bool) (*StatusError, error) {
	var w wireStatus
	var err error
	if protobuf {
		w, err = readProtoStatus(b)
	} else {
		err = json.Unmarshal(b, &w)
	}
	if err != nil {
		return nil, err
	}
	return w.toError(), nil
}

// EventStatus builds the StatusError of an ERROR watch event from the
// event's object (as for DecodeStatus). An object that does not decode
// yields a 500 that says so.
func EventStatus(raw []byte, protobuf bool) *StatusError {
	se, err := DecodeStatus(raw, protobuf)
	return eventStatus(se, err)
}

// eventStatus is the StatusError of an ERROR event whose object decoded
// to w, or failed to decode with err: a 500 that says so.
func eventStatus(se *StatusError, err error) *StatusError {
	if err != nil {
		return &StatusError{Code: http.StatusInternalServerError, Reason: "InternalError",
			Message: "ERROR event with an undecodable object: " + err.Error()}
	}
	if se.Code == 0 {
		se.Code = http.StatusInternalServerError
	}
	return se
}

func reasonForCode(code int) string {
	switch code {
	case http.StatusBadRequest:
		return "BadRequest"
	case http.StatusUnauthorized:
		return "Unauthorized"
	case http.StatusForbidden:
		return "Forbidden"
	case http.StatusNotFound:
		return "NotFound"
	case http.StatusConflict:
		return "Conflict"
	case http.StatusGone:
		return "Gone"
	case http.StatusUnprocessableEntity:
		return "Invalid"
	case http.StatusTooManyRequests:
		return "TooManyRequests"
	case http.StatusGatewayTimeout:
		return "Timeout"
	case http.StatusServiceUnavailable:
		return "ServiceUnavailable"
	}
	if code >= 500 {
		return "InternalError"
	}
	return ""
}
