package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kwatch/kwatch/webhook"
)

// The work both servers do: deny a ConfigMap with a "forbidden" key;
// default a "mode" key and a label.
func check(cm *corev1.ConfigMap) error {
	if _, bad := cm.Data["forbidden"]; bad {
		return errors.New("the key forbidden is not allowed")
	}
	return nil
}

func setDefaults(cm *corev1.ConfigMap) {
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	cm.Labels["bench/defaulted"] = "true"
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	if cm.Data["mode"] == "" {
		cm.Data["mode"] = "default"
	}
}

// kwatchValidate and kwatchMutate are the two handlers on kwatch's side.
func kwatchValidate() webhook.Handler {
	return webhook.Validating(func(_ context.Context, r *webhook.Request[corev1.ConfigMap]) (webhook.Warnings, error) {
		return nil, check(r.Object)
	})
}

func kwatchMutate() webhook.Handler {
	return webhook.Mutating(func(_ context.Context, _ *webhook.Request[corev1.ConfigMap], cm *corev1.ConfigMap) (webhook.Warnings, error) {
		setDefaults(cm)
		return nil, nil
	})
}

// kwatchServer is a webhook.Server with both handlers, at /validate and
// /mutate.
func kwatchServer(b *testing.B, opts webhook.Options) *webhook.Server {
	opts.Logger = slog.New(slog.DiscardHandler)
	s, err := webhook.New(opts)
	if err != nil {
		b.Fatal(err)
	}
	if err := errors.Join(s.Admission("/validate", kwatchValidate()), s.Admission("/mutate", kwatchMutate())); err != nil {
		b.Fatal(err)
	}
	return s
}

func kwatchHandlers(b *testing.B) (validate, mutate http.Handler) {
	s := kwatchServer(b, webhook.Options{SelfSigned: &webhook.SelfSigned{}})
	return s, s
}

type crValidator struct{}

func (crValidator) ValidateCreate(_ context.Context, cm *corev1.ConfigMap) (crwebhook.Warnings, error) {
	return nil, check(cm)
}
func (crValidator) ValidateUpdate(_ context.Context, _, cm *corev1.ConfigMap) (crwebhook.Warnings, error) {
	return nil, check(cm)
}
func (crValidator) ValidateDelete(context.Context, *corev1.ConfigMap) (crwebhook.Warnings, error) {
	return nil, nil
}

type crDefaulter struct{}

func (crDefaulter) Default(_ context.Context, cm *corev1.ConfigMap) error {
	setDefaults(cm)
	return nil
}

func crHandlers(b *testing.B) (validate, mutate http.Handler) {
	ctrllog.SetLogger(logr.Discard()) // else controller-runtime prints that no logger was set, with a stack
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	return crwebhook.WithValidator[*corev1.ConfigMap](scheme, crValidator{}),
		crwebhook.WithDefaulter[*corev1.ConfigMap](scheme, crDefaulter{})
}

// review is the AdmissionReview of a create of a ConfigMap with a few
// keys and labels, about the size of a typical small object.
func review(b *testing.B) []byte {
	cm := corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "bench", UID: "0b5e3c6a-6a53-4c3e-9b43-3f1f0ad6d3a1",
			Labels: map[string]string{"app": "web", "tier": "frontend"}, Annotations: map[string]string{"note": "benchmark"}},
		Data: map[string]string{"a": "1", "b": "two", "config.yaml": "key: value\nother: 2\n"}}
	raw, _ := json.Marshal(cm)
	body, _ := json.Marshal(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
		"request": map[string]any{"uid": "5a1f0c5e-1d0b-4c4e-8a4f-0d6f7a3e9b21", "operation": "CREATE",
			"kind":     map[string]any{"group": "", "version": "v1", "kind": "ConfigMap"},
			"resource": map[string]any{"group": "", "version": "v1", "resource": "configmaps"},
			"name":     "settings", "namespace": "bench", "userInfo": map[string]any{"username": "bench"},
			"object": json.RawMessage(raw), "oldObject": nil, "dryRun": false}})
	return body
}

// serve sends body to h b.N times over parallel goroutines and reports
// the CPU per request beside the wall time.
func serve(b *testing.B, h http.Handler, path string, body []byte, wantPatch bool) {
	// One answer checked before timing: both servers must do the same work.
	w := httptest.NewRecorder()
	h.ServeHTTP(w, newRequest(path, body))
	out, _ := io.ReadAll(w.Result().Body)
	var rv struct {
		Response struct {
			Allowed bool   `json:"allowed"`
			Patch   []byte `json:"patch"`
		} `json:"response"`
	}
	if err := json.Unmarshal(out, &rv); err != nil || !rv.Response.Allowed || (len(rv.Response.Patch) > 0) != wantPatch {
		b.Fatalf("answer %d: %s", w.Code, out)
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, newRequest(path, body))
			if w.Code != http.StatusOK {
				b.Errorf("status %d", w.Code)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

func newRequest(path string, body []byte) *http.Request {
	r := httptest.NewRequest(http.MethodPost, path+"?timeout=10s", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	return r
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkAdmission(b *testing.B) {
	body := review(b)
	kv, km := kwatchHandlers(b)
	cv, cm := crHandlers(b)
	b.Run("validate/kwatch", func(b *testing.B) { serve(b, kv, "/validate", body, false) })
	b.Run("validate/controller-runtime", func(b *testing.B) { serve(b, cv, "/validate", body, false) })
	b.Run("mutate/kwatch", func(b *testing.B) { serve(b, km, "/mutate", body, true) })
	b.Run("mutate/controller-runtime", func(b *testing.B) { serve(b, cm, "/mutate", body, true) })
}
