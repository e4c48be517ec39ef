package replicaset

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"
)

// front serves the simulator with every watch response's bytes held back
// for lag (the caches then lag the server by that much, as behind a slow
// API server or a congested network), and counts the 409 answers.
type front struct {
	h         http.Handler
	lag       time.Duration
	conflicts atomic.Int64
}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cw := &codeWriter{ResponseWriter: w, f: f}
	q := r.URL.Query().Get("watch")
	if f.lag <= 0 || (q != "true" && q != "1") {
		f.h.ServeHTTP(cw, r)
		return
	}
	lw := &lagWriter{ResponseWriter: cw, lag: f.lag, ch: make(chan chunk, 1<<16)}
	done := make(chan struct{})
	go func() { defer close(done); lw.pump(r.Context()) }()
	f.h.ServeHTTP(lw, r)
	close(lw.ch)
	<-done
}

// codeWriter counts the 409s.
type codeWriter struct {
	http.ResponseWriter
	f *front
}

func (c *codeWriter) WriteHeader(code int) {
	if code == http.StatusConflict {
		c.f.conflicts.Add(1)
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *codeWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

type chunk struct {
	at time.Time
	b  []byte
}

// lagWriter sends each write lag after it was made, in order.
type lagWriter struct {
	http.ResponseWriter
	lag time.Duration
	ch  chan chunk // bounded: a watch that falls 65,536 writes behind blocks the server's writer
}

func (l *lagWriter) Write(p []byte) (int, error) {
	l.ch <- chunk{time.Now().Add(l.lag), append([]byte(nil), p...)}
	return len(p), nil
}

// Flush is the pump's, after each chunk it sends.
func (l *lagWriter) Flush() {}

func (l *lagWriter) pump(ctx context.Context) {
	f, _ := l.ResponseWriter.(http.Flusher)
	for c := range l.ch {
		t := time.NewTimer(time.Until(c.at))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			continue // the client went away: drain
		}
		if _, err := l.ResponseWriter.Write(c.b); err == nil && f != nil {
			f.Flush()
		}
	}
}
