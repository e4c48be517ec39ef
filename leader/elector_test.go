package leader

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/metrics"
	"github.com/kwatch/kwatch/metrics/metricstest"
)

func metav1MicroTime(t time.Time) *metav1.MicroTime {
	m := metav1.NewMicroTime(t)
	return &m
}

// micro truncates t as a MicroTime does.
func micro(t time.Time) time.Time { return t.Truncate(time.Microsecond) }

func newTestClient(t *testing.T) *kube.Client {
	c, err := kube.NewClient(&kube.Config{Host: "http://127.0.0.1:1"})
	require.NoError(t, err)
	return c
}

// TestAcquireFreeLease: with no Lease, the first round creates it: holder,
// duration, acquireTime = renewTime = now, leaseTransitions 0; renews move
// renewTime only.
func TestAcquireFreeLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		t0 := time.Now()
		a := c.runCandidate("a", nil)
		synctest.Wait()
		started, _ := a.times()
		require.Equal(t, []time.Time{t0}, started)
		require.True(t, a.e.IsLeader())
		require.Equal(t, "a", a.e.Leader())
		rec := recordOf(c.lease().Spec)
		want := record{holder: "a", durationSec: 15, acquire: t0, renew: t0}
		require.True(t, want.equal(rec), "got %+v, want %+v", rec, want)

		time.Sleep(2 * time.Second)
		synctest.Wait()
		rec = recordOf(c.lease().Spec)
		want.renew = t0.Add(2 * time.Second)
		require.True(t, want.equal(rec), "after one renew: got %+v, want %+v", rec, want)
		require.NoError(t, a.stop())
		require.Equal(t, Released, a.e.State())
	})
}

// TestAcquireExpiredLease: a Lease whose holder is gone is taken a lease
// duration after the candidate first saw it, by the candidate's clock,
// whatever the record's renewTime says (here, years ago); the acquisition
// counts a transition and sets acquireTime.
func TestAcquireExpiredLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		long := metav1MicroTime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
		c.putLease(LeaseSpec{HolderIdentity: new("ghost"), LeaseDurationSeconds: new(int32(15)),
			AcquireTime: long, RenewTime: long, LeaseTransitions: new(int32(4))})
		t0 := time.Now()
		a := c.runCandidate("a", nil)
		time.Sleep(30 * time.Second)
		synctest.Wait()
		started, _ := a.times()
		require.Len(t, started, 1)
		waited := started[0].Sub(t0)
		require.True(t, waited >= DefaultLeaseDuration && waited <= DefaultLeaseDuration+DefaultRetryPeriod,
			"acquired %v after first seeing the lease; want within [15s, 17s]", waited)
		rec := recordOf(c.lease().Spec)
		require.Equal(t, "a", rec.holder)
		require.Equal(t, int32(5), rec.transitions)
		require.Equal(t, micro(started[0]), rec.acquire)
	})
}

// TestSecondCandidateWaits: while the leader renews, another candidate
// never leads; it sees who does.
func TestSecondCandidateWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		a := c.runCandidate("a", nil)
		time.Sleep(time.Second)
		b := c.runCandidate("b", nil)
		time.Sleep(time.Minute)
		synctest.Wait()
		started, _ := b.times()
		require.Empty(t, started)
		require.Equal(t, Candidate, b.e.State())
		require.Equal(t, "a", b.e.Leader())
		require.True(t, a.e.IsLeader())
		require.Equal(t, int32(0), recordOf(c.lease().Spec).transitions)
	})
}

// TestCutOffLeaderStopsFirst is the safety property: a leader cut off
// from the server stops leading at exactly its renew deadline, counted
// from the start of its last successful renew, and the other candidate
// acquires at least LeaseDuration - RenewDeadline later.
func TestCutOffLeaderStopsFirst(t *testing.T) {
	for _, freeze := range []bool{true, false} {
		name := map[bool]string{true: "frozen", false: "cut"}[freeze]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCluster(t)
				t0 := time.Now()
				reg := metrics.NewSet()
				a := c.runCandidate("a", func(cfg *Config) { cfg.Metrics = reg })
				time.Sleep(time.Second)
				b := c.runCandidate("b", nil)
				time.Sleep(4 * time.Second) // renews at t0+2s and t0+4s
				a.link.Partition(freeze)
				time.Sleep(40 * time.Second)
				synctest.Wait()

				_, stopped := a.times()
				require.Equal(t, []time.Time{t0.Add(4*time.Second + DefaultRenewDeadline)}, stopped,
					"stopped one renew deadline after the renew that started at t0+4s")
				err := <-a.done
				require.ErrorIs(t, err, ErrLost)
				a.done <- nil
				require.Equal(t, Lost, a.e.State())
				// Frozen: the round at t0+6s hangs until the deadline. Cut:
				// the rounds at t0+6s, 8s, 10s and 12s are refused.
				wantFailures := map[bool]float64{true: 1, false: 4}[freeze]
				require.Equal(t, wantFailures, metricstest.Scrape(t, reg)[`kwatch_leader_renew_failures_total{lease="demo/leader"}`])

				acquired, _ := b.times()
				require.Len(t, acquired, 1)
				require.True(t, stopped[0].Before(acquired[0]))
				require.GreaterOrEqual(t, acquired[0].Sub(stopped[0]), DefaultLeaseDuration-DefaultRenewDeadline)
				require.Equal(t, int32(1), recordOf(c.lease().Spec).transitions)
			})
		})
	}
}

// TestReleaseOnCancel: a cancelled leader stops its work, then releases
// the Lease (holder "", duration 1 s), and the other candidate acquires
// within one retry period; with ReleaseOnCancel false it waits for the
// lease to expire instead.
func TestReleaseOnCancel(t *testing.T) {
	for _, release := range []bool{true, false} {
		t.Run(map[bool]string{true: "release", false: "keep"}[release], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCluster(t)
				t0 := time.Now()
				a := c.runCandidate("a", func(cfg *Config) { cfg.ReleaseOnCancel = new(release) })
				time.Sleep(time.Second)
				b := c.runCandidate("b", nil)
				time.Sleep(4 * time.Second)
				require.NoError(t, a.stop())
				_, stopped := a.times()
				require.Equal(t, []time.Time{t0.Add(5 * time.Second)}, stopped)
				require.Equal(t, Released, a.e.State())
				rec := recordOf(c.lease().Spec)
				if release {
					want := record{durationSec: 1, acquire: micro(stopped[0]), renew: micro(stopped[0])}
					require.True(t, want.equal(rec), "released: got %+v, want %+v", rec, want)
				} else {
					require.Equal(t, "a", rec.holder)
				}
				time.Sleep(30 * time.Second)
				synctest.Wait()
				acquired, _ := b.times()
				require.Len(t, acquired, 1)
				took := acquired[0].Sub(stopped[0])
				if release {
					require.True(t, took > 0 && took <= DefaultRetryPeriod, "acquired %v after the release", took)
				} else {
					// a's last renew started at t0+4s; b saw it at t0+4s at the earliest.
					require.GreaterOrEqual(t, acquired[0].Sub(t0.Add(4*time.Second)), DefaultLeaseDuration)
				}
				require.Equal(t, int32(1), recordOf(c.lease().Spec).transitions)
			})
		})
	}
}

// TestConflictLosesTheRound: someone writes the Lease between the
// candidate's read and its write; the write is refused (409) and the
// other's record stays; the candidate then waits for that record.
func TestConflictLosesTheRound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		c.putLease(LeaseSpec{HolderIdentity: new("ghost"), LeaseDurationSeconds: new(int32(15)), LeaseTransitions: new(int32(0))})
		a := c.runCandidate("a", nil)
		var fired, puts atomic.Int32
		a.link.SetIntercept(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
			defer next.ServeHTTP(w, r)
			if r.Method != http.MethodPut || !strings.HasSuffix(r.URL.Path, "/leases/"+testName) {
				return
			}
			puts.Add(1)
			if fired.Add(1) > 1 {
				return
			}
			l := c.lease()
			l.Spec.HolderIdentity = new("intruder")
			l.Spec.RenewTime = metav1MicroTime(time.Now())
			l.ResourceVersion = ""
			_, err := c.srv.Update("leases.coordination.k8s.io", mustJSON(t, l))
			require.NoError(t, err)
		})
		time.Sleep(20 * time.Second) // the ghost expires after 15 s; the first PUT meets the intruder
		synctest.Wait()
		require.Equal(t, int32(1), puts.Load(), "one write attempted, refused")
		started, _ := a.times()
		require.Empty(t, started)
		require.Equal(t, "intruder", recordOf(c.lease().Spec).holder, "the intruder's record is not overwritten")
		require.Equal(t, "intruder", a.e.Leader())
		require.Equal(t, Candidate, a.e.State())
	})
}

// TestTransitionsCountHolderChanges: leaseTransitions grows by one per
// change of holder (renews and releases keep it), acquireTime follows
// each acquisition; metrics show who leads and what was seen.
func TestTransitionsCountHolderChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		reg := metrics.NewSet()
		a := c.runCandidate("a", nil)
		time.Sleep(time.Second)
		b := c.runCandidate("b", func(cfg *Config) { cfg.Metrics = reg })
		time.Sleep(5 * time.Second)
		synctest.Wait()
		const isLeader = `kwatch_leader_is_leader{lease="demo/leader"}`
		const seen = `kwatch_leader_transitions_total{lease="demo/leader"}`
		require.Equal(t, 0.0, metricstest.Scrape(t, reg)[isLeader])
		require.Equal(t, int32(0), recordOf(c.lease().Spec).transitions)

		require.NoError(t, a.stop())
		time.Sleep(3 * time.Second)
		synctest.Wait()
		acquired, _ := b.times()
		require.Len(t, acquired, 1)
		rec := recordOf(c.lease().Spec)
		require.Equal(t, "b", rec.holder)
		require.Equal(t, int32(1), rec.transitions)
		require.Equal(t, micro(acquired[0]), rec.acquire)

		require.Equal(t, 1.0, metricstest.Scrape(t, reg)[isLeader])
		a2 := c.runCandidate("a2", nil)
		time.Sleep(10 * time.Second) // b renews; the count stays
		require.Equal(t, int32(1), recordOf(c.lease().Spec).transitions)
		require.NoError(t, b.stop())
		time.Sleep(3 * time.Second)
		synctest.Wait()
		acquired, _ = a2.times()
		require.Len(t, acquired, 1)
		rec = recordOf(c.lease().Spec)
		require.Equal(t, "a2", rec.holder)
		require.Equal(t, int32(2), rec.transitions)
		m := metricstest.Scrape(t, reg)
		require.Equal(t, 1.0, m[seen], "b saw one change of holder: to itself (a's release to nobody is none)")
		require.Equal(t, 0.0, m[isLeader])
		require.Equal(t, 0.0, m[`kwatch_leader_renew_failures_total{lease="demo/leader"}`])
	})
}

// TestRunErrors: a nil leading function, and a second Run at once.
func TestRunErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		a := c.runCandidate("a", nil)
		synctest.Wait()
		require.ErrorContains(t, a.e.Run(t.Context(), func(context.Context) {}), "already running")
		require.ErrorContains(t, a.e.Run(t.Context(), nil), "leading function")
		require.NoError(t, a.stop())
		require.False(t, errors.Is(a.stop(), ErrLost))
	})
}

// TestDeletedLeaseEndsLeadership: a leader whose Lease is deleted stops
// leading at its next renew rather than recreating it.
func TestDeletedLeaseEndsLeadership(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		t0 := time.Now()
		a := c.runCandidate("a", nil)
		time.Sleep(3 * time.Second)
		_, err := c.srv.Delete("leases.coordination.k8s.io", testNS, testName)
		require.NoError(t, err)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		_, stopped := a.times()
		require.Equal(t, []time.Time{t0.Add(4 * time.Second)}, stopped, "the renew at t0+4s finds no lease")
		require.ErrorIs(t, <-a.done, ErrLost)
		a.done <- nil
	})
}

// TestLeadReturningReleases: a leading function that returns by itself
// ends the leadership as a cancel does: Run releases and returns nil.
func TestLeadReturningReleases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		kc, _ := c.Connect("a")
		e, err := New(testConfig(kc, "a"))
		require.NoError(t, err)
		require.NoError(t, e.Run(t.Context(), func(context.Context) { time.Sleep(5 * time.Second) }))
		require.Equal(t, Released, e.State())
		require.Equal(t, "", recordOf(c.lease().Spec).holder)
		require.Equal(t, "", e.Leader())
	})
}
