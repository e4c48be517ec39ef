package watch

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// StatusError is an error answered by the API server: a non-2xx response or
// an ERROR event inside a watch stream. It carries the server's Status.
type StatusError struct {
	Code    int32  // HTTP status code, such as 410
	Reason  string // machine-readable reason, such as "Expired" or "Gone"
	Message string // the server's human-readable message
	// Continue is the fresh continue token a 410 Expired list offers, if any.
	Continue string
	// RetryAfter is the server's Retry-After (header or details.retryAfterSeconds), if any.
	RetryAfter time.Duration
	// Causes are the server's detail causes, "field: message" each.
	Causes []string
}

func (e *StatusError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(int(e.Code))
	}
	if e.Reason != "" {
		return fmt.Sprintf("server answered %d %s: %s", e.Code, e.Reason, msg)
	}
	return fmt.Sprintf("server answered %d: %s", e.Code, msg)
}

// OpError says which phase of the protocol failed (list, watch, stream,
// discovery), on which resource.
type OpError struct {
	Op       string // "list", "watch", "stream", "discovery", "request"
	Resource string // "pods", "deployments.apps"; may be empty
	Err      error
}

func (e *OpError) Error() string {
	if e.Resource == "" {
		return e.Op + ": " + e.Err.Error()
	}
	return e.Op + " " + e.Resource + ": " + e.Err.Error()
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

// IsConflict reports a 409.
func IsConflict(err error) bool { return hasCode(err, http.StatusConflict) }

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

// ErrIdleTimeout ends a watch stream that received no bytes for longer than
// its idle deadline: the connection is presumed dead.
var ErrIdleTimeout = errors.New("watch stream idle for longer than its deadline; connection presumed dead")

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
		if d.RetryAfterSeconds > 0 {
			se.RetryAfter = min(time.Duration(d.RetryAfterSeconds)*time.Second, maxRetryAfter)
		}
		for _, c := range d.Causes[:min(len(d.Causes), maxStatusCauses)] {
			if c.Field != "" {
				se.Causes = append(se.Causes, c.Field+": "+c.Message)
			} else {
				se.Causes = append(se.Causes, c.Message)
			}
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
	if isProtobuf(header.Get("Content-Type")) {
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

// statusFromEvent builds the StatusError of an ERROR watch event.
func statusFromEvent(raw []byte) *StatusError {
	var w wireStatus
	err := json.Unmarshal(raw, &w)
	return eventStatus(w, err)
}

// eventStatus is the StatusError of an ERROR event whose object decoded
// to w, or failed to decode with err: a 500 that says so.
func eventStatus(w wireStatus, err error) *StatusError {
	if err != nil {
		return &StatusError{Code: http.StatusInternalServerError, Reason: "InternalError",
			Message: "ERROR event with an undecodable object: " + err.Error()}
	}
	se := w.toError()
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
