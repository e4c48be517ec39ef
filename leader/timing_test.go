package leader

import (
	"strings"
	"testing"
	"time"
)

func TestTimingWithDefaults(t *testing.T) {
	got, err := Timing{}.WithDefaults()
	want := Timing{LeaseDuration: DefaultLeaseDuration, RenewDeadline: DefaultRenewDeadline, RetryPeriod: DefaultRetryPeriod}
	if err != nil || got != want {
		t.Fatalf("zero Timing = %+v, %v; want %+v", got, err, want)
	}
	for _, tc := range []struct {
		name string
		t    Timing
		want string // "" for valid
	}{
		{"fractional lease", Timing{LeaseDuration: 1500 * time.Millisecond}, "LeaseDuration 1.5s must be a whole number of seconds"},
		{"lease under a second", Timing{LeaseDuration: 500 * time.Millisecond, RenewDeadline: 100 * time.Millisecond, RetryPeriod: 10 * time.Millisecond}, "at least 1s"},
		{"renew not below lease", Timing{LeaseDuration: 10 * time.Second}, "RenewDeadline 10s must be less than LeaseDuration 10s"},
		{"retry not below renew", Timing{RetryPeriod: 10 * time.Second}, "RetryPeriod 10s must be less than RenewDeadline 10s"},
		{"negative renew", Timing{RenewDeadline: -time.Second}, "must be positive"},
		{"short but valid", Timing{LeaseDuration: 2 * time.Second, RenewDeadline: time.Second, RetryPeriod: 100 * time.Millisecond}, ""},
	} {
		_, err := tc.t.WithDefaults()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// Config names the field it checks through its Timing.
func TestConfigTimingErrorNamesTheField(t *testing.T) {
	_, err := New(Config{Client: newTestClient(t), Name: "l", Identity: "a",
		Timing: Timing{LeaseDuration: 1500 * time.Millisecond}})
	if err == nil || !strings.HasPrefix(err.Error(), "leader: Config.LeaseDuration 1.5s") {
		t.Fatalf("err = %v, want one naming leader: Config.LeaseDuration", err)
	}
}
