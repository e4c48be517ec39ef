package suite

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"

	"github.com/stretchr/testify/require"
)

// Helpers of the write cases (cases_write.go): raw requests through the admin
// client, decoded answers, the real server's captures, and a watch read up to a
// fence write.

// Media types of writes.
const (
	ctJSON      = "application/json"
	ctMerge     = "application/merge-patch+json"
	ctJSONPatch = "application/json-patch+json"
	ctStrategic = "application/strategic-merge-patch+json"
	ctApply     = "application/apply-patch+yaml"
)

// answer is the status code and body of one request.
type answer struct {
	code int
	body []byte
}

// obj decodes the answer as a JSON object.
func (a answer) obj(t T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(a.body, &m), "answer %d: %s", a.code, a.body)
	return m
}

// status decodes the answer as a Status.
func (a answer) status(t T) fullStatus {
	t.Helper()
	var s fullStatus
	require.NoError(t, json.Unmarshal(a.body, &s), "answer %d: %s", a.code, a.body)
	return s
}

// call sends method path?q with body (of contentType) through the admin client.
func call(t T, e *Env, method, path string, q url.Values, contentType string, body []byte) answer {
	t.Helper()
	u := path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(e.Ctx, method, u, r)
	require.NoError(t, err)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := e.Admin.Do(req)
	require.NoError(t, err, "%s %s", method, u)
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxWriteBody))
	require.NoError(t, err, "%s %s: read the answer", method, u)
	return answer{code: resp.StatusCode, body: b}
}

// mustCall is call that requires a 2xx answer.
func mustCall(t T, e *Env, method, path string, q url.Values, contentType string, body []byte) answer {
	t.Helper()
	a := call(t, e, method, path, q, contentType, body)
	require.True(t, a.code/100 == 2, "%s %s?%s: %d %s", method, path, q.Encode(), a.code, a.body)
	return a
}

// jsonBody encodes v.
func jsonBody(t T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// cmPath is the path of the case's configmaps, or of one of them.
func cmPath(e *Env, name string) string {
	p := "/api/v1/namespaces/" + e.NS + "/configmaps"
	if name != "" {
		p += "/" + url.PathEscape(name)
	}
	return p
}

// deployPath is the path of the case's deployments, or of one of them.
func deployPath(e *Env, name string) string {
	p := "/apis/apps/v1/namespaces/" + e.NS + "/deployments"
	if name != "" {
		p += "/" + url.PathEscape(name)
	}
	return p
}

// fullStatus is a Status with every field the write cases compare.
type fullStatus struct {
	Kind       string         `json:"kind"`
	APIVersion string         `json:"apiVersion"`
	Metadata   map[string]any `json:"metadata"`
	Status     string         `json:"status"`
	Message    string         `json:"message"`
	Reason     string         `json:"reason"`
	Code       int            `json:"code"`
	Details    *struct {
		Name   string `json:"name"`
		Group  string `json:"group"`
		Kind   string `json:"kind"`
		UID    string `json:"uid"`
		Causes []struct {
			Reason  string `json:"reason"`
			Message string `json:"message"`
			Field   string `json:"field"`
		} `json:"causes"`
	} `json:"details"`
}

// captureDir holds the real server's captures, relative to the conformance
// module (the directory go test runs the suite in).
const captureDir = "../testdata/real-apiserver"

// captured reads a Status the real server answered (a file of captureDir).
func captured(t T, name string) fullStatus {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(captureDir, name))
	require.NoError(t, err, "read the capture %s", name)
	var s fullStatus
	require.NoError(t, json.Unmarshal(b, &s), "capture %s", name)
	return s
}

// requireSameStatus compares got with the capture want field by field, the
// message excepted (the caller checks its shape).
func requireSameStatus(t T, want, got fullStatus, what string) {
	t.Helper()
	require.Equal(t, want.Kind, got.Kind, "%s: kind", what)
	require.Equal(t, want.APIVersion, got.APIVersion, "%s: apiVersion", what)
	require.Equal(t, want.Status, got.Status, "%s: status", what)
	require.Equal(t, want.Reason, got.Reason, "%s: reason", what)
	require.Equal(t, want.Code, got.Code, "%s: code", what)
	require.Equal(t, want.Details == nil, got.Details == nil, "%s: details", what)
	if want.Details != nil {
		require.Equal(t, want.Details.Name, got.Details.Name, "%s: details.name", what)
		require.Equal(t, want.Details.Group, got.Details.Group, "%s: details.group", what)
		require.Equal(t, want.Details.Kind, got.Details.Kind, "%s: details.kind", what)
		require.Len(t, got.Details.Causes, len(want.Details.Causes), "%s: details.causes", what)
	}
}

// metaOf returns an object's metadata.
func metaOf(t T, o map[string]any) map[string]any {
	t.Helper()
	md, ok := o["metadata"].(map[string]any)
	require.True(t, ok, "no metadata in %v", o)
	return md
}

// managedEntry is one metadata.managedFields entry.
type managedEntry struct {
	Manager     string          `json:"manager"`
	Operation   string          `json:"operation"`
	APIVersion  string          `json:"apiVersion"`
	Time        string          `json:"time"`
	FieldsType  string          `json:"fieldsType"`
	FieldsV1    json.RawMessage `json:"fieldsV1"`
	Subresource string          `json:"subresource"`
}

// managedFields returns an object's entries by manager and operation
// ("mgr-a/Apply"), each with its fields as compact JSON.
func managedFields(t T, body []byte) map[string]managedEntry {
	t.Helper()
	var o struct {
		Metadata struct {
			ManagedFields []managedEntry `json:"managedFields"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(body, &o), "%s", body)
	out := map[string]managedEntry{}
	for _, m := range o.Metadata.ManagedFields {
		var buf bytes.Buffer
		require.NoError(t, json.Compact(&buf, m.FieldsV1))
		m.FieldsV1 = buf.Bytes()
		key := m.Manager + "/" + m.Operation
		if m.Subresource != "" {
			key += "/" + m.Subresource
		}
		out[key] = m
	}
	return out
}

// fieldsOf returns each entry's FieldsV1 as a string, by the keys of managedFields.
func fieldsOf(entries map[string]managedEntry) map[string]string {
	out := map[string]string{}
	for k, e := range entries {
		out[k] = string(e.FieldsV1)
	}
	return out
}

// rawWatch is a watch stream of JSON events, read line by line.
type rawWatch struct {
	body io.ReadCloser
	r    *bufio.Reader
}

// rawEvent is one watch event.
type rawEvent struct {
	Type   string         `json:"type"`
	Object map[string]any `json:"object"`
}

// watchTimeout bounds a write case's watch: the server ends it by then.
const watchTimeout = 120

// openRawWatch watches path from rv (with bookmarks) until the case ends.
func openRawWatch(t T, e *Env, path, rv string) *rawWatch {
	t.Helper()
	q := url.Values{"watch": {"1"}, "resourceVersion": {rv}, "allowWatchBookmarks": {"true"},
		"timeoutSeconds": {fmt.Sprint(watchTimeout)}}
	req, err := http.NewRequestWithContext(e.Ctx, http.MethodGet, path+"?"+q.Encode(), nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "application/json")
	resp, err := e.Admin.Do(req)
	require.NoError(t, err, "open a watch of %s", path)
	require.Equal(t, http.StatusOK, resp.StatusCode, "open a watch of %s", path)
	w := &rawWatch{body: resp.Body, r: bufio.NewReader(io.LimitReader(resp.Body, 64<<20))}
	t.Cleanup(func() { resp.Body.Close() })
	return w
}

// next returns the next event that is not a bookmark; the watch's
// timeoutSeconds (and the case's context) bound the wait.
func (w *rawWatch) next(t T) rawEvent {
	t.Helper()
	for {
		line, err := w.r.ReadBytes('\n')
		require.NoError(t, err, "next watch event (the stream ends after %d s)", watchTimeout)
		var ev rawEvent
		require.NoError(t, json.Unmarshal(line, &ev), "%s", line)
		if ev.Type != "BOOKMARK" {
			return ev
		}
	}
}

// nameOfEvent is the name of an event's object.
func nameOfEvent(ev rawEvent) string {
	md, _ := ev.Object["metadata"].(map[string]any)
	n, _ := md["name"].(string)
	return n
}
