package leader

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func decodeLease(b []byte) (*Lease, error) {
	var l Lease
	return &l, json.Unmarshal(b, &l)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// TestLeaseDecodesTheCaptures: the real server's Leases decode into the
// slim type, MicroTimes to the microsecond, absent fields nil.
func TestLeaseDecodesTheCaptures(t *testing.T) {
	b, err := os.ReadFile("../internal/testdata/real-apiserver/lease-created.json")
	require.NoError(t, err)
	l, err := decodeLease(b)
	require.NoError(t, err)
	rec := recordOf(l.Spec)
	want := record{holder: "replica-a_1234", durationSec: 15,
		acquire: time.Date(2026, 12, 1, 9, 2, 45, 0, time.UTC), renew: time.Date(2026, 12, 1, 9, 2, 45, 0, time.UTC)}
	require.True(t, want.equal(rec), "got %+v, want %+v", rec, want)
	require.NotNil(t, l.Spec.LeaseTransitions, "leaseTransitions 0 is sent, and kept")

	b, err = os.ReadFile("../internal/testdata/real-apiserver/lease-apiserver-identity.json")
	require.NoError(t, err)
	l, err = decodeLease(b)
	require.NoError(t, err)
	require.Nil(t, l.Spec.AcquireTime)
	require.Nil(t, l.Spec.LeaseTransitions)
	require.Equal(t, 393075*time.Microsecond, time.Duration(l.Spec.RenewTime.Nanosecond()))
}

// TestRecordSpecIsClientGos: a record is written with every field, the
// empty holder of a release included, times in RFC 3339 with
// microseconds.
func TestRecordSpecIsClientGos(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 2, 45, 123456789, time.UTC)
	got := string(mustJSON(t, releasedAt(record{holder: "a", transitions: 3}, at).spec()))
	want := `{"holderIdentity":"","leaseDurationSeconds":1,"acquireTime":"2026-12-01T09:02:45.123456Z","renewTime":"2026-12-01T09:02:45.123456Z","leaseTransitions":3}`
	require.Equal(t, want, got)
}
