package sim

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Calls to webhooks (admission and conversion): one HTTP client per CA
// bundle, kept for the server's life so that calls reuse connections, and
// closed when Serve returns.

// maxWebhookResponse bounds a webhook's answer, as the real server bounds it.
const maxWebhookResponse = 3 << 20

type webhookClients struct {
	mu      sync.Mutex
	clients map[string]*http.Client // by CA bundle; guarded by mu
}

func (wc *webhookClients) get(caBundle []byte) (*http.Client, error) {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	if c, ok := wc.clients[string(caBundle)]; ok {
		return c, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(caBundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caBundle) {
			return nil, errors.New("the caBundle holds no PEM certificate")
		}
		cfg.RootCAs = pool
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 8}}
	if wc.clients == nil {
		wc.clients = map[string]*http.Client{}
	}
	wc.clients[string(caBundle)] = c
	return c, nil
}

// closeIdle drops every kept connection (Serve's end).
func (wc *webhookClients) closeIdle() {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	for _, c := range wc.clients {
		c.CloseIdleConnections()
	}
}

// postReview POSTs body to url (with ?timeout=) under the timeout and
// returns the answer's body; errors are worded as the real server's
// ("failed to call webhook: Post ...").
func (s *Server) postReview(ctx context.Context, url string, caBundle []byte, timeout time.Duration, body []byte) ([]byte, error) {
	c, err := s.webhooks.get(caBundle)
	if err != nil {
		return nil, fmt.Errorf("failed to call webhook: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	full := url
	if !bytes.ContainsRune([]byte(url), '?') {
		full += "?timeout=" + strconv.Itoa(int(timeout/time.Second)) + "s"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, full, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("failed to call webhook: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, */*")
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("failed to call webhook: %w", err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, maxWebhookResponse+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("failed to call webhook: %w", err)
	case len(out) > maxWebhookResponse:
		return nil, fmt.Errorf("failed to call webhook: the response is over %d bytes", maxWebhookResponse)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("failed to call webhook: the server responded with the status code %d: %s", resp.StatusCode, bytes.TrimSpace(out))
	}
	return out, nil
}

// The AdmissionReview of admission.k8s.io/v1, as the simulator sends and reads it.
type admissionReview struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	Request    *admissionRequest  `json:"request,omitempty"`
	Response   *admissionResponse `json:"response,omitempty"`
}

type gvk struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

type gvr struct {
	Group    string `json:"group"`
	Version  string `json:"version"`
	Resource string `json:"resource"`
}

type admissionRequest struct {
	UID                string         `json:"uid"`
	Kind               gvk            `json:"kind"`
	Resource           gvr            `json:"resource"`
	SubResource        string         `json:"subResource,omitempty"`
	RequestKind        gvk            `json:"requestKind"`
	RequestResource    gvr            `json:"requestResource"`
	RequestSubResource string         `json:"requestSubResource,omitempty"`
	Name               string         `json:"name,omitempty"`
	Namespace          string         `json:"namespace,omitempty"`
	Operation          string         `json:"operation"`
	UserInfo           requestUser    `json:"userInfo"`
	Object             map[string]any `json:"object"`
	OldObject          map[string]any `json:"oldObject"`
	DryRun             bool           `json:"dryRun"`
	Options            map[string]any `json:"options"`
}

type admissionResponse struct {
	UID       string   `json:"uid"`
	Allowed   bool     `json:"allowed"`
	Status    *Status  `json:"status"`
	Patch     []byte   `json:"patch"`
	PatchType *string  `json:"patchType"`
	Warnings  []string `json:"warnings"`
}

// callAdmissionWebhook calls h for a and returns the object a mutating
// webhook's patch made (nil when none), or the error the client gets.
func (s *Server) callAdmissionWebhook(h *webhookSpec, a *admissionAttrs, mutating bool) (map[string]any, *StatusError) {
	if a.adm.dryRun && (h.SideEffects == nil || (*h.SideEffects != "None" && *h.SideEffects != "NoneOnDryRun")) {
		return nil, errBadRequest(fmt.Sprintf("admission webhook %q does not support dry run", h.Name))
	}
	resp, err := s.askWebhook(h, a)
	if err != nil {
		if h.FailurePolicy != nil && *h.FailurePolicy == "Ignore" {
			return nil, nil
		}
		msg := fmt.Sprintf("failed calling webhook %q: %v", h.Name, err)
		return nil, newStatus(http.StatusInternalServerError, "InternalError", "Internal error occurred: "+msg,
			&StatusDetails{Causes: []StatusCause{{Message: msg}}})
	}
	a.adm.warnings = append(a.adm.warnings, resp.Warnings...)
	if !resp.Allowed {
		return nil, webhookDenial(h.Name, resp.Status)
	}
	if !mutating || len(resp.Patch) == 0 {
		return nil, nil
	}
	if resp.PatchType == nil || *resp.PatchType != "JSONPatch" {
		return nil, newStatus(http.StatusInternalServerError, "InternalError",
			fmt.Sprintf("Internal error occurred: admission webhook %q returned a patch without patchType JSONPatch", h.Name), nil)
	}
	out, serr := applyPatch(deepCopyJSON(a.obj), resp.Patch, mediaJSONPatch, nil)
	if serr != nil {
		return nil, newStatus(http.StatusInternalServerError, "InternalError",
			fmt.Sprintf("Internal error occurred: admission webhook %q returned a patch that does not apply: %s", h.Name, serr.Status.Message), nil)
	}
	return out, nil
}

// webhookDenial is the client's error for a denial, as the real server
// words it.
func webhookDenial(name string, st *Status) *StatusError {
	out := Status{Kind: "Status", APIVersion: "v1", Status: "Failure"}
	if st != nil {
		out.Code, out.Reason, out.Message, out.Details = st.Code, st.Reason, st.Message, st.Details
	}
	if out.Code < http.StatusBadRequest {
		out.Code = http.StatusBadRequest
	}
	deniedBy := fmt.Sprintf("admission webhook %q denied the request", name)
	switch {
	case out.Message != "":
		out.Message = deniedBy + ": " + out.Message
	case out.Reason != "":
		out.Message = deniedBy + ": " + out.Reason
	default:
		out.Message = deniedBy + " without explanation"
	}
	return &StatusError{Status: out}
}

// askWebhook sends a's AdmissionReview to h and checks the answer.
func (s *Server) askWebhook(h *webhookSpec, a *admissionAttrs) (*admissionResponse, error) {
	if h.ClientConfig.URL == nil {
		return nil, errors.New("the simulator calls clientConfig.url only, not a service")
	}
	if len(h.AdmissionReviewVersions) > 0 && !slices.Contains(h.AdmissionReviewVersions, "v1") {
		return nil, fmt.Errorf("webhook does not accept v1 AdmissionReview (admissionReviewVersions %v)", h.AdmissionReviewVersions)
	}
	timeout := 10 * time.Second
	if h.TimeoutSeconds != nil && *h.TimeoutSeconds > 0 {
		timeout = time.Duration(*h.TimeoutSeconds) * time.Second
	}
	uid := s.newUID()
	req := s.admissionRequestFor(a, uid)
	body, err := stdjson.Marshal(admissionReview{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview", Request: req})
	if err != nil {
		return nil, err
	}
	out, err := s.postReview(a.adm.ctx, *h.ClientConfig.URL, h.ClientConfig.CABundle, timeout, body)
	if err != nil {
		return nil, err
	}
	var rv admissionReview
	switch err := stdjson.Unmarshal(out, &rv); {
	case err != nil:
		return nil, fmt.Errorf("received invalid webhook response: %w", err)
	case rv.APIVersion != "admission.k8s.io/v1" || rv.Kind != "AdmissionReview":
		return nil, fmt.Errorf("expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got %s, Kind=%s", rv.APIVersion, rv.Kind)
	case rv.Response == nil:
		return nil, errors.New("webhook response was absent")
	case rv.Response.UID != uid:
		return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, rv.Response.UID)
	}
	return rv.Response, nil
}

func (s *Server) admissionRequestFor(a *admissionAttrs, uid string) *admissionRequest {
	info := a.r.info
	k := gvk{Group: info.Group, Version: info.Version, Kind: info.Kind}
	res := gvr{Group: info.Group, Version: info.Version, Resource: info.Resource}
	optsKind := map[string]string{"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}[a.operation]
	opts := map[string]any{"kind": optsKind, "apiVersion": "meta.k8s.io/v1"}
	if a.adm.fieldManager != "" && a.operation != "DELETE" {
		opts["fieldManager"] = a.adm.fieldManager
	}
	if a.adm.dryRun {
		opts["dryRun"] = []string{"All"}
	}
	ns := a.ns
	if !info.Namespaced {
		ns = ""
	}
	return &admissionRequest{UID: uid, Kind: k, Resource: res, SubResource: a.sub, RequestKind: k, RequestResource: res,
		RequestSubResource: a.sub, Name: a.name, Namespace: ns, Operation: a.operation, UserInfo: a.adm.user,
		Object: a.obj, OldObject: a.old, DryRun: a.adm.dryRun, Options: opts}
}

// newUID is a fresh uid from the seeded generator.
func (s *Server) newUID() string {
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	return s.store.newUIDLocked()
}
