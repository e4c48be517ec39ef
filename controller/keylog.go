package controller

import (
	"context"
	"log/slog"
)

// keyLogger returns log with the reconciled key ("key") added, the same
// lines as log.With("key", key.String()) writes, without its cost on a
// reconcile that logs nothing: With formats the attribute at once (a
// TextHandler or JSONHandler writes it out in advance), once per reconcile,
// which a controller that reconciles tens of thousands of keys a second
// pays for every key. Here the key is added when a line is written, or
// when the logger is narrowed further.
func keyLogger(log *slog.Logger, key Key) *slog.Logger {
	return slog.New(&keyHandler{inner: log.Handler(), key: key})
}

// keyHandler is a handler whose lines carry key, added on demand.
type keyHandler struct {
	inner slog.Handler
	key   Key
}

func (h *keyHandler) withKey() slog.Handler {
	return h.inner.WithAttrs([]slog.Attr{slog.String("key", h.key.String())})
}

func (h *keyHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

func (h *keyHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.withKey().Handle(ctx, r)
}

func (h *keyHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return h.withKey().WithAttrs(attrs)
}

func (h *keyHandler) WithGroup(name string) slog.Handler { return h.withKey().WithGroup(name) }
