// Package engine is the engine side of the benchmark: one informer (kwatch
// or client-go, in one of several configurations) in its own process,
// driven by the harness over package wire's line protocol, plus the
// workqueue benchmark.
package engine

import (
	"context"
	"fmt"

	"github.com/kwatch/kwatch/kube"
)

// Config chooses the engine a process runs.
type Config struct {
	// Engine is one of the names in Engines.
	Engine string
	// Host is the API server's base URL.
	Host string
	// ListMode is "auto" (the default) or "paged"; kwatch only.
	ListMode string
	// PageSize overrides the informer's page size when positive; kwatch only.
	PageSize int64
	// Parallelism is kwatch's Decoder.Parallelism; 0 keeps the default.
	Parallelism int
	// TracePrefix, when set, is the path prefix of runtime/trace files of
	// the phases in TracePhases (PhaseSync, wire.PhaseLatency, ...):
	// <prefix>-<phase>.trace.
	TracePrefix string
	TracePhases []string
	// LatencyGCAfter, when positive, starts a garbage collection
	// (runtime.GC, on a goroutine of its own) once the latency phase has
	// had that many stamped deliveries, so that every engine's latency is
	// measured across one collection of its own heap.
	LatencyGCAfter int
}

// informerEngine is what the control loop needs of an informer.
type informerEngine interface {
	// run lists and watches until ctx ends and every goroutine it started
	// has exited.
	run(ctx context.Context) error
	synced() bool
	len() int
}

// Engines names every engine a process can run.
var Engines = []string{
	"kwatch", "kwatch-proto", "kwatch-proto-nointern", "kwatch-slim", "kwatch-meta",
	"client-go", "client-go-proto", EngineProtoNoOld, EngineCompact, EngineCompactRead, EngineWireLimit,
}

// newEngine builds the engine cfg names, reporting to p.
func newEngine(cfg Config, p *probe) (informerEngine, error) {
	switch cfg.Engine {
	case "kwatch":
		return newKwatch[*podFull](cfg, p, false, kube.ContentTypeJSON)
	case "kwatch-proto":
		return newKwatch[*podFull](cfg, p, false, kube.ContentTypeProtobuf)
	case EngineProtoNoOld:
		return newKwatchNoOld(cfg, p)
	case "kwatch-proto-nointern":
		return newKwatch[*podFull](cfg, p, false, kube.ContentTypeProtobuf+";nointern")
	case "kwatch-slim":
		return newKwatch[*SlimPod](cfg, p, false, "")
	case "kwatch-meta":
		return newKwatch[*partialMeta](cfg, p, true, "")
	case EngineCompact, EngineCompactRead:
		return newKwatchCompact(cfg, p, cfg.Engine == EngineCompactRead)
	case EngineWireLimit:
		return newWireLimit(cfg, p)
	case "client-go", "client-go-proto":
		return newClientGo(cfg, p, cfg.Engine == "client-go-proto")
	}
	return nil, fmt.Errorf("engine: unknown engine %q (want one of %v)", cfg.Engine, Engines)
}

// PhaseSync names the initial sync among the phases Config.TracePhases
// may list (the others are wire's phase names).
const PhaseSync = "sync"
