package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/kwatch/kwatch/kube"
)

// Kube makes the writes the cases need (namespaces and pods) through a
// kwatch client's transport. kwatch itself only reads; these writes are the
// fixture, not the thing under test.
type Kube struct {
	C *kube.Client
}

// WriteError is a non-2xx answer to a write.
type WriteError struct {
	Method, Path string
	Code         int
	Body         string
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("%s %s: %d: %s", e.Method, e.Path, e.Code, e.Body)
}

// maxWriteBody bounds how much of a write's answer is read.
const maxWriteBody = 1 << 20

func (k Kube) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
		if method == http.MethodPatch {
			req.Header.Set("Content-Type", "application/merge-patch+json")
		}
	}
	resp, err := k.C.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxWriteBody))
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return &WriteError{Method: method, Path: path, Code: resp.StatusCode, Body: string(b)}
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// CreateNamespace creates namespace ns.
func (k Kube) CreateNamespace(ctx context.Context, ns string) error {
	obj := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}
	return k.do(ctx, http.MethodPost, "/api/v1/namespaces", obj, nil)
}

// CreatePod creates a minimal pod and returns it as the server stored it.
func (k Kube) CreatePod(ctx context.Context, ns, name string, labels map[string]string) (*Pod, error) {
	out := &Pod{}
	err := k.do(ctx, http.MethodPost, kube.Pods.Path(ns), newPod(ns, name, labels), out)
	return out, err
}

// LabelPod sets one label on a pod with a merge patch and returns the pod.
func (k Kube) LabelPod(ctx context.Context, ns, name, key, value string) (*Pod, error) {
	patch := map[string]any{"metadata": map[string]any{"labels": map[string]string{key: value}}}
	out := &Pod{}
	err := k.do(ctx, http.MethodPatch, podPath(ns, name), patch, out)
	return out, err
}

// DeletePod deletes a pod at once (grace period 0).
func (k Kube) DeletePod(ctx context.Context, ns, name string) error {
	opts := map[string]any{"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}
	return k.do(ctx, http.MethodDelete, podPath(ns, name), opts, nil)
}

func podPath(ns, name string) string {
	return kube.Pods.Path(ns) + "/" + url.PathEscape(name)
}
