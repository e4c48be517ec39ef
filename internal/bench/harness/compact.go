package harness

import "github.com/kwatch/kwatch/internal/bench/engine"

// CompactRows are kwatch-proto's informer with the compact store
// (informer.StoreCompact), against client-go's default path (protobuf),
// client-go over JSON and, for the key-only consumer, the loopback limit. They are not in the standard runs; -rows picks
// them.
func CompactRows() []Row {
	return []Row{
		{Name: "kwatch-compact", Engine: engine.EngineCompact, Kwatch: true, Proto: true, Main: true,
			Versus:   []string{"client-go-proto", "client-go", "wire-limit"},
			Headline: "compact store, a key-only consumer (protobuf) vs client-go's default (protobuf)"},
		{Name: "kwatch-compact-read", Engine: engine.EngineCompactRead, Kwatch: true, Proto: true, Main: true,
			Versus:   []string{"client-go-proto", "client-go"},
			Headline: "compact store, a consumer that reads every changed object as *corev1.Pod, vs client-go's default (protobuf)"},
		{Name: "kwatch-proto-noold", Engine: engine.EngineProtoNoOld, Kwatch: true, Proto: true, Main: true,
			Versus:   []string{"client-go-proto"},
			Headline: "kwatch's default informer, a handler given *corev1.Pod that says it reads no old object (HandlerOptions.NoOld), vs client-go's default (protobuf)"},
		// The loopback limit the key-only consumer is held to (issue 25):
		// the same watch read and framed, nothing decoded.
		{Name: "wire-limit", Engine: engine.EngineWireLimit, Proto: true, Main: true, ThroughputOnly: true},
	}
}
