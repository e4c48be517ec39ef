package memcluster_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/internal/rig/memcluster"
	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/kube"
)

// TestPartitionOneLink cuts one client off: its requests fail while the
// other client's go on, and after Heal they reach the server again. An
// Intercept sees every request of its link and none of the other's.
func TestPartitionOneLink(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := memcluster.New(t)
		_, err := c.Server.PutPod(sim.Pod{Namespace: "demo", Name: "web-1"})
		require.NoError(t, err)
		ka, a := c.Connect("a")
		kb, _ := c.Connect("b")
		seen := 0
		a.SetIntercept(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
			seen++
			next.ServeHTTP(w, r)
		})
		get := func(kc *kube.Client) error {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := client.For(kc, kube.Typed[*metav1.PartialObjectMetadata](kube.Pods), client.Options{}).
				Get(ctx, "demo", "web-1", client.GetOptions{})
			return err
		}
		require.NoError(t, get(ka))
		require.NoError(t, get(kb))
		require.Equal(t, 1, seen, "a's intercept saw a's request only")

		a.Partition(false)
		require.Error(t, get(ka), "a is cut off")
		require.NoError(t, get(kb), "b still reaches the server")

		a.Heal()
		require.NoError(t, get(ka), "a reaches the server again")
		require.Equal(t, 2, seen)
	})
}
