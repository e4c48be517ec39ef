package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kwatch/kwatch/internal/bench/protofront"
	"github.com/kwatch/kwatch/internal/rig/sim"
)

// backend is one server the engines talk to, as the scenarios see it.
type backend struct {
	url  string
	gate *gate
	// update rewrites pod i with the base annotations plus extra.
	update        func(i int, extra map[string]string) error
	dropWatches   func(loseHistory bool)
	activeWatches func() int64
}

// servers are the simulator and (when a row needs it) the protobuf front
// for one pod count, each behind a gate on its own loopback listener.
type servers struct {
	pods  []sim.Pod
	sim   *backend
	front *backend // nil without protobuf rows
	stop  []func()
	// simSrv and frontSrv are the servers themselves (frontSrv nil
	// without protobuf rows), for scenarios that add handlers.
	simSrv   *sim.Server
	frontSrv *protofront.Front
}

func startServers(n, history int, withFront bool) (*servers, error) {
	s := &servers{pods: makePods(n)}
	srv, err := sim.New(sim.Options{HistorySize: history})
	if err != nil {
		return nil, err
	}
	for _, p := range s.pods {
		if _, err := srv.PutPod(p); err != nil {
			return nil, err
		}
	}
	if got := srv.Stats().Objects["pods"]; got != n {
		return nil, fmt.Errorf("harness: simulator holds %d pods, want %d", got, n)
	}
	s.simSrv = srv
	s.sim = &backend{gate: newGate(), dropWatches: srv.DropWatches,
		activeWatches: func() int64 { return srv.Stats().ActiveWatches }}
	s.sim.update = func(i int, extra map[string]string) error {
		p := s.pods[i%len(s.pods)]
		p.Annotations = withAnnotations(extra)
		_, err := srv.PutPod(p)
		return err
	}
	if s.sim.url, err = s.serve(s.sim.gate.wrap(srv.Handler())); err != nil {
		s.close()
		return nil, err
	}
	if withFront {
		if err := s.startFront(srv, history); err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

// startFront loads the simulator's pods into a protobuf front.
func (s *servers) startFront(srv *sim.Server, history int) error {
	rv, objs, err := srv.Snapshot("pods")
	if err != nil {
		return err
	}
	raw := make(map[string][]byte, len(objs))
	for k, o := range objs {
		raw[k] = o.JSON
	}
	f := protofront.New(history)
	if err := f.Load(rv, raw); err != nil {
		return err
	}
	s.frontSrv = f
	s.front = &backend{gate: newGate(), dropWatches: f.DropWatches, activeWatches: f.ActiveWatches}
	s.front.update = func(i int, extra map[string]string) error {
		p := s.pods[i%len(s.pods)]
		ann := withAnnotations(extra)
		_, err := f.Update(p.Namespace+"/"+p.Name, func(pod *corev1.Pod) { pod.Annotations = ann })
		return err
	}
	s.front.url, err = s.serve(s.front.gate.wrap(f.Handler()))
	return err
}

// serve serves h on a new loopback listener until close.
func (s *servers) serve(h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Println("harness: serve:", err)
		}
	})
	s.stop = append(s.stop, func() {
		hs.Close() // ends open watches too: their handlers see the closed connection
		wg.Wait()
	})
	return "http://" + ln.Addr().String(), nil
}

func (s *servers) close() {
	for _, stop := range s.stop {
		stop()
	}
	s.stop = nil
}

func (s *servers) backendFor(r Row) *backend {
	if r.Proto {
		return s.front
	}
	return s.sim
}

// waitFor polls cond every millisecond until it holds or d passes.
func waitFor(ctx context.Context, d time.Duration, what string, cond func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("harness: waiting for %s: %w", what, ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
	return nil
}
