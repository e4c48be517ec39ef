package controller

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

// keyLogger writes what log.With("key", ...) writes, through every way a
// reconcile can use its logger, for the text and the JSON handler.
func TestKeyLoggerWritesWhatWithWrites(t *testing.T) {
	key := Key{Namespace: "demo", Name: "x"}
	uses := map[string]func(*slog.Logger){
		"line":        func(l *slog.Logger) { l.Info("reconciling", "n", 1) },
		"with":        func(l *slog.Logger) { l.With("pod", "p").Warn("late", "by", "2s") },
		"group":       func(l *slog.Logger) { l.WithGroup("g").Info("in group", "a", "b") },
		"with group":  func(l *slog.Logger) { l.With("x", 1).WithGroup("g").With("y", 2).Error("deep", "z", 3) },
		"below level": func(l *slog.Logger) { l.Debug("not written") },
	}
	for _, hname := range []string{"text", "json"} {
		for uname, use := range uses {
			t.Run(hname+"/"+uname, func(t *testing.T) {
				var want, got bytes.Buffer
				strip := slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
					if a.Key == slog.TimeKey {
						return slog.Attr{}
					}
					return a
				}}
				base := func(w io.Writer) *slog.Logger {
					if hname == "text" {
						return slog.New(slog.NewTextHandler(w, &strip)).With("controller", "c")
					}
					return slog.New(slog.NewJSONHandler(w, &strip)).With("controller", "c")
				}
				use(base(&want).With("key", key.String()))
				use(keyLogger(base(&got), key))
				require.Equal(t, want.String(), got.String())
				if uname != "below level" {
					require.Contains(t, got.String(), "demo/x", "a line was written, with the key")
				}
			})
		}
	}
	require.False(t, keyLogger(slog.New(slog.NewTextHandler(io.Discard, nil)), key).Enabled(context.Background(), slog.LevelDebug),
		"the level is the inner handler's")
}

// BenchmarkReconcileLogger is the per-reconcile cost of a reconcile's
// logger that logs nothing: the With it replaced, and keyLogger.
func BenchmarkReconcileLogger(b *testing.B) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil)).With("controller", "c")
	key := Key{Namespace: "default", Name: "pod-000123"}
	ctx := context.Background()
	b.Run("with", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = withLogger(ctx, log.With("key", key.String()))
		}
	})
	b.Run("keyLogger", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = withLogger(ctx, keyLogger(log, key))
		}
	})
}
