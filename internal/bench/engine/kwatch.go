package engine

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

type (
	podFull     = corev1.Pod
	partialMeta = metav1.PartialObjectMetadata
)

// SlimPod is the slim type a user who reads only a few fields would
// declare: kwatch decodes into it and skips everything else.
type SlimPod struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		NodeName   string `json:"nodeName,omitempty"`
		Containers []struct {
			Name  string `json:"name"`
			Image string `json:"image,omitempty"`
		} `json:"containers,omitempty"`
	} `json:"spec"`
	Status struct {
		Phase string `json:"phase,omitempty"`
		PodIP string `json:"podIP,omitempty"`
	} `json:"status"`
}

// kwatchEngine runs one kwatch informer with default options (since the
// compact store became the default, a compact store) except those Config
// overrides.
type kwatchEngine[T watch.Object] struct {
	inf  *informer.Informer[T]
	hold markerHold
}

func newKwatch[T watch.Object](cfg Config, p *probe, metaOnly bool, contentType string) (informerEngine, error) {
	return newKwatchHandler[T](cfg, p, metaOnly, contentType, informer.HandlerOptions{})
}

// EngineProtoNoOld is kwatch-proto with HandlerOptions.NoOld: its handler,
// which reads only the new object of an update, says so, and the compact
// store does not decode the old one.
const EngineProtoNoOld = "kwatch-proto-noold"

func newKwatchNoOld(cfg Config, p *probe) (informerEngine, error) {
	return newKwatchHandler[*podFull](cfg, p, false, kube.ContentTypeProtobuf, informer.HandlerOptions{NoOld: true})
}

// newKwatchHandler is newKwatch with the handler's options ho.
func newKwatchHandler[T watch.Object](cfg Config, p *probe, metaOnly bool, contentType string, ho informer.HandlerOptions) (informerEngine, error) {
	ct, noIntern := strings.CutSuffix(contentType, ";nointern")
	c, err := kube.NewClient(&kube.Config{Host: cfg.Host, Encoding: kube.EncodingConfig{ContentType: ct, NoProtobufIntern: noIntern}})
	if err != nil {
		return nil, fmt.Errorf("kwatch client: %w", err)
	}
	opts := informer.Options[T]{
		Client:   c,
		Resource: kube.Pods,
		Logger:   slog.New(slog.NewTextHandler(logSink(), &slog.HandlerOptions{Level: slog.LevelWarn})),
		Tuning:   informer.Tuning{PageSize: cfg.PageSize, Decoder: watch.DecoderOptions{Parallelism: cfg.Parallelism}},
	}
	if metaOnly {
		opts.Form = watch.FormMetadata
	}
	switch cfg.ListMode {
	case "", "auto":
	case "paged":
		opts.ListMode = informer.ListPaged
	default:
		return nil, fmt.Errorf("engine: unknown list mode %q (want auto or paged)", cfg.ListMode)
	}
	inf, err := informer.New(opts)
	if err != nil {
		return nil, err
	}
	k := &kwatchEngine[T]{inf: inf}
	k.hold.reg, err = inf.AddHandler(informer.HandlerFuncs[T]{
		AddFunc:    func(T, bool) { p.add() },
		UpdateFunc: func(_, obj T) { k.hold.update(p, obj.GetAnnotations()) },
	}, ho)
	if err != nil {
		return nil, err
	}
	return k, nil
}

// run runs the informer, then logs how many objects it decoded.
func (k *kwatchEngine[T]) run(ctx context.Context) error {
	err := k.inf.Run(ctx)
	s := k.inf.Stats()
	fmt.Fprintf(os.Stderr, "bench: decodes=%d decode-errors=%d events=%d\n", s.Decodes, s.DecodeErrors, s.Events)
	return err
}
func (k *kwatchEngine[T]) synced() bool { return k.inf.HasSynced() }
func (k *kwatchEngine[T]) len() int     { return k.inf.Store().Len() }

// logSink is where engine logs go: standard error, which the harness keeps
// in a log file.
func logSink() io.Writer { return os.Stderr }
