package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"runtime/debug"
	"time"
)

// How a webhook request becomes a typed call, in one place:
//
//  1. route.ServeHTTP: POST only, Content-Type application/json, the body
//     read up to MaxRequestBytes (413 beyond). A body that is not a
//     review of this path's kind and v1 is answered 400 with the reason:
//     the API server then applies the webhook's failurePolicy.
//  2. The endpoint (admission or conversion) decodes the review and calls
//     the handler in a goroutine of its own, bounded by the request's
//     timeout; a panic there becomes a denial (a failed conversion) with
//     the panic's message, so the API server always gets an answer.
//  3. The answer is a review of the same apiVersion carrying the
//     request's uid, sent when ServeHTTP returns: at the timeout at the
//     latest, also when the handler is still running (net/http sends a
//     response once its handler returns). A handler's goroutine that
//     outlives its answer is counted in Server.calls, and Run waits for
//     it before it returns (within ShutdownTimeout).

// endpoint is what a registered path serves.
type endpoint interface {
	// serve decodes body, calls the handler through call and returns the
	// answer's body, the answer for the metrics and the log's attributes.
	// A nil body means the body was refused (err says why).
	serve(ctx context.Context, body []byte, call caller) (out []byte, answer string, attrs []slog.Attr, err error)
}

// caller runs fn under the request's timeout and recovers its panic: it
// returns fn's result, or nil and why fn gave none.
type caller func(fn func(ctx context.Context) any) (result any, why string)

type route struct {
	s    *Server
	path string
	e    endpoint
	m    *pathMetrics
}

func (rt *route) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rt.m.requests.Inc()
	defer func() { rt.m.latency.Observe(time.Since(start).Seconds()) }()
	if code, msg := rt.checkRequest(r); code != 0 {
		rt.reject(w, code, msg)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, rt.s.opts.MaxRequestBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			rt.reject(w, http.StatusRequestEntityTooLarge,
				fmt.Sprintf("webhook: the request body is over the limit of %d bytes", mbe.Limit))
			return
		}
		rt.reject(w, http.StatusBadRequest, "webhook: reading the request body: "+err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), rt.timeout(r))
	defer cancel()
	call := func(fn func(ctx context.Context) any) (any, string) { return rt.callBounded(ctx, fn) }
	out, answer, attrs, err := rt.e.serve(ctx, body, call)
	if out == nil {
		rt.reject(w, http.StatusBadRequest, err.Error())
		return
	}
	rt.m.answers[answer].Inc()
	level := slog.LevelDebug
	if answer == AnswerDenied || answer == AnswerFailed {
		level = slog.LevelInfo
	}
	rt.s.log.LogAttrs(ctx, level, "webhook answered", append(attrs, slog.String("webhook", rt.path),
		slog.String("answer", answer), slog.Duration("took", time.Since(start)))...)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

// checkRequest refuses what is no review: another method or media type.
func (rt *route) checkRequest(r *http.Request) (int, string) {
	if r.Method != http.MethodPost {
		return http.StatusMethodNotAllowed, "webhook: " + r.Method + " is not served; the API server POSTs reviews"
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return http.StatusUnsupportedMediaType, fmt.Sprintf("webhook: Content-Type %q is not served, only application/json", ct)
		}
	}
	return 0, ""
}

func (rt *route) reject(w http.ResponseWriter, code int, msg string) {
	rt.m.answers[AnswerRejected].Inc()
	rt.s.log.Warn("webhook request refused", "webhook", rt.path, "code", code, "error", msg)
	http.Error(w, msg, code)
}

// timeout is the API server's ?timeout= (it sends the webhook's
// timeoutSeconds so) when shorter than Options.RequestTimeout.
func (rt *route) timeout(r *http.Request) time.Duration {
	d := rt.s.opts.RequestTimeout
	if q := r.URL.Query().Get("timeout"); q != "" {
		if t, err := time.ParseDuration(q); err == nil && t > 0 && t < d {
			d = t
		}
	}
	return d
}

// outcome is what a handler's goroutine hands back: its result or why it
// has none.
type outcome struct {
	result any
	why    string
}

// callBounded runs fn in a goroutine counted by the server's calls and
// returns once fn returned or ctx ended, whichever first: fn's result, or
// nil and why. A panic in fn is recovered into its message. The result
// travels on a channel, so a late handler writes nothing the answer reads.
func (rt *route) callBounded(ctx context.Context, fn func(ctx context.Context) any) (any, string) {
	done := make(chan outcome, 1) // buffered: fn's goroutine never blocks on it after a timeout
	rt.s.calls.Go(func() {
		defer func() {
			if p := recover(); p != nil {
				rt.s.log.Error("webhook handler panicked", "webhook", rt.path, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				done <- outcome{why: fmt.Sprintf("webhook: the handler panicked: %v", p)}
			}
		}()
		done <- outcome{result: fn(ctx)}
	})
	select {
	case o := <-done:
		return o.result, o.why
	case <-ctx.Done():
		return nil, fmt.Sprintf("webhook: the handler gave no answer in time (%v)", context.Cause(ctx))
	}
}

// admissionEndpoint serves AdmissionReviews through a Handler.
type admissionEndpoint struct{ h Handler }

func (e *admissionEndpoint) serve(_ context.Context, body []byte, call caller) ([]byte, string, []slog.Attr, error) {
	rv, err := DecodeAdmissionReview(body)
	if err != nil {
		return nil, "", nil, err
	}
	req := rv.Request
	var resp AdmissionResponse
	if res, why := call(func(ctx context.Context) any { return e.h.Admit(ctx, req) }); why == "" {
		resp = res.(AdmissionResponse)
	} else {
		resp = errored(http.StatusInternalServerError, why)
	}
	resp.UID = req.UID
	if len(resp.Patch) > 0 && resp.PatchType == "" {
		resp.PatchType = "JSONPatch"
	}
	if !resp.Allowed {
		resp.Patch, resp.PatchType = nil, ""
		if resp.Result == nil {
			resp.Result = &Status{Status: "Failure", Code: http.StatusForbidden, Reason: "Forbidden"}
		}
	}
	answer := AnswerAllowed
	attrs := []slog.Attr{slog.String("operation", string(req.Operation)),
		slog.String("resource", req.Resource.Resource), slog.String("namespace", req.Namespace),
		slog.String("name", req.Name), slog.String("user", req.UserInfo.Username), slog.Bool("dryRun", req.IsDryRun())}
	if !resp.Allowed {
		answer = AnswerDenied
		attrs = append(attrs, slog.String("message", resp.Result.Message))
	}
	out, err := json.Marshal(AdmissionReview{APIVersion: AdmissionAPIVersion, Kind: AdmissionKind, Response: &resp})
	if err != nil { // a handler's audit annotations or warnings cannot fail to encode; be safe
		out, _ = json.Marshal(AdmissionReview{APIVersion: AdmissionAPIVersion, Kind: AdmissionKind,
			Response: &AdmissionResponse{UID: req.UID, Result: &Status{Code: 500, Message: "webhook: encode the answer: " + err.Error()}}})
		answer = AnswerDenied
	}
	return out, answer, attrs, nil
}

// conversionEndpoint serves ConversionReviews through a Converter.
type conversionEndpoint struct{ c *Converter }

func (e *conversionEndpoint) serve(_ context.Context, body []byte, call caller) ([]byte, string, []slog.Attr, error) {
	rv, err := DecodeConversionReview(body)
	if err != nil {
		return nil, "", nil, err
	}
	req := rv.Request
	var resp ConversionResponse
	if res, why := call(func(context.Context) any { return e.c.Convert(req) }); why == "" {
		resp = res.(ConversionResponse)
	} else {
		resp = ConversionResponse{ConvertedObjects: []json.RawMessage{}, Result: Status{Status: "Failure", Message: why}}
	}
	resp.UID = req.UID
	answer := AnswerConverted
	attrs := []slog.Attr{slog.String("desiredAPIVersion", req.DesiredAPIVersion), slog.Int("objects", len(req.Objects))}
	if resp.Result.Status != "Success" {
		answer = AnswerFailed
		attrs = append(attrs, slog.String("message", resp.Result.Message))
	}
	out, err := json.Marshal(ConversionReview{APIVersion: ConversionAPIVersion, Kind: ConversionKind, Response: &resp})
	if err != nil {
		return nil, "", nil, fmt.Errorf("webhook: encode the conversion answer: %w", err)
	}
	return out, answer, attrs, nil
}
