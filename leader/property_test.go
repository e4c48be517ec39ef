package leader

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// tenure is one leadership of one candidate, in fake time.
type tenure struct {
	who        string
	start, end time.Time
	lost       bool // ended by a lost lease, not a cancel
}

// member is a candidate of the property test: it campaigns again
// whenever Run returns, until the test cancels it; the test may also
// cancel and restart it, and cut its link.
type member struct {
	id     string
	e      *Elector
	link   *link
	cut    bool
	cancel context.CancelFunc
	done   chan struct{}
}

// TestNeverTwoLeaders is a randomized property test: three candidates
// (one keeping the Lease on cancel) on one Lease, over ten minutes of fake
// time, while their links are frozen, cut and healed and the candidates
// are cancelled and restarted at random. However the faults fall, no two
// leaderships overlap; one that ended because the lease was lost ends at
// least LeaseDuration - RenewDeadline before another candidate's begins
// (the loser may take its own unexpired record back at once); and once
// the faults stop, one candidate leads.
func TestNeverTwoLeaders(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { neverTwoLeaders(t, seed) })
		})
	}
}

func neverTwoLeaders(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 42))
	c := newCluster(t)
	var mu sync.Mutex
	var tenures []tenure
	lead := func(m *member) func(context.Context) {
		return func(ctx context.Context) {
			start := time.Now()
			<-ctx.Done()
			mu.Lock()
			tenures = append(tenures, tenure{who: m.id, start: start, end: time.Now(), lost: m.e.State() == Lost})
			mu.Unlock()
		}
	}
	start := func(m *member) {
		ctx, cancel := context.WithCancel(context.Background())
		m.cancel, m.done = cancel, make(chan struct{})
		go func() {
			defer close(m.done)
			for ctx.Err() == nil {
				if err := m.e.Run(ctx, lead(m)); err != nil && !errors.Is(err, ErrLost) {
					panic(err)
				}
			}
		}()
	}
	stop := func(m *member) { m.cancel(); <-m.done }
	members := make([]*member, 3)
	for i := range members {
		m := &member{id: fmt.Sprint("c", i)}
		kc, l := c.Connect(m.id)
		cfg := testConfig(kc, m.id)
		cfg.ReleaseOnCancel = new(i != 0)
		e, err := New(cfg)
		require.NoError(t, err)
		m.e, m.link = e, l
		members[i] = m
		start(m)
	}
	t.Cleanup(func() {
		for _, m := range members {
			stop(m)
		}
	})

	end := time.Now().Add(10 * time.Minute)
	faults := 0
	for time.Now().Before(end) {
		time.Sleep(time.Duration(rng.Int64N(int64(8 * time.Second))))
		m := members[rng.IntN(len(members))]
		switch {
		case m.cut:
			m.link.Heal()
			m.cut = false
		case rng.IntN(2) == 0:
			m.link.Partition(rng.IntN(2) == 0)
			m.cut = true
			faults++
		default:
			stop(m)
			start(m)
			faults++
		}
	}
	for _, m := range members {
		if m.cut {
			m.link.Heal()
		}
	}
	time.Sleep(DefaultLeaseDuration + 3*DefaultRetryPeriod)
	synctest.Wait()
	leaders := 0
	for _, m := range members {
		if m.e.IsLeader() {
			leaders++
		}
	}
	require.Equal(t, 1, leaders, "one leader once the faults stopped")

	mu.Lock()
	defer mu.Unlock()
	sort.Slice(tenures, func(i, j int) bool { return tenures[i].start.Before(tenures[j].start) })
	require.Greater(t, len(tenures), 5, "leadership changed hands several times (%d faults)", faults)
	for i := 1; i < len(tenures); i++ {
		prev, next := tenures[i-1], tenures[i]
		require.False(t, next.start.Before(prev.end), "%s led until %v, %s from %v", prev.who, prev.end, next.who, next.start)
		if prev.lost && next.who != prev.who { // the loser itself may renew its own record at once
			require.GreaterOrEqual(t, next.start.Sub(prev.end), DefaultLeaseDuration-DefaultRenewDeadline,
				"%s lost the lease at %v, %s led from %v", prev.who, prev.end, next.who, next.start)
		}
	}
	rec := recordOf(c.lease().Spec)
	t.Logf("%d faults, %d leaderships, leaseTransitions %d", faults, len(tenures), rec.transitions)
}
