package controller

import (
	"context"
	"errors"
)

// The manager's webhook server (ManagerOptions.Webhook), kept apart from
// the rest of Run: it serves on every replica, leader or not (the API
// server calls whichever replica its Service picks), from the start of Run
// until the controllers have stopped, so a write a draining reconcile
// makes is still admitted; /readyz waits for it to serve.

// startWebhook runs the webhook server, if any, until stop is called;
// stop waits for it and returns its error. The context returned is ctx,
// also ended if the server fails (a port taken, a certificate missing):
// a manager whose webhooks cannot serve stops, as when a controller fails.
func (m *Manager) startWebhook(ctx context.Context) (context.Context, func() error) {
	srv := m.opts.Webhook
	if srv == nil {
		return ctx, func() error { return nil }
	}
	runCtx, failRun := context.WithCancel(ctx)
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1) // buffered: the goroutine never blocks on it
	go func() {
		err := srv.Run(wctx)
		if err != nil {
			m.log.Error("webhook server failed; stopping the manager", "error", err)
		}
		failRun()
		done <- err
	}()
	return runCtx, func() error {
		cancel()
		err := <-done
		failRun()
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	}
}

// webhookState is the webhook server's line in /readyz; nil without one.
func (m *Manager) webhookState() *informerState {
	srv := m.opts.Webhook
	if srv == nil {
		return nil
	}
	ok := srv.Serving()
	return &informerState{Name: "webhook server", Synced: ok, Watching: ok, Ready: ok}
}
