package controller

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// A third reader's check of 208abcc's claim that a delete's expectation is
// still shown correctly in both stores, in the metadata-only form too: a
// finalizer's object given a deletionTimestamp shows the delete, and so
// does one deleted and re-created with a new UID; a plain object that
// stays does not.
func TestReview3DeleteShownInEitherStoreAndForm(t *testing.T) {
	for _, mode := range []informer.StoreMode{informer.StoreTyped, informer.StoreCompact} {
		for _, form := range []watch.Form{watch.FormObject, watch.FormMetadata} {
			t.Run(mode.String()+"/"+form.String(), func(t *testing.T) {
				h, c := demoConfigMaps(t, "held", "again", "plain")
				inf, err := informer.New(informer.Options[*metav1.PartialObjectMetadata]{Client: c, Resource: kube.ConfigMaps,
					Scope: kube.Scope{Namespace: "demo"}, Form: form, Tuning: informer.Tuning{Store: mode}})
				require.NoError(t, err)
				require.Equal(t, mode, inf.StoreMode())
				ctx := runInformer(t, inf)
				ce := &cacheEntry{storeRV: inf.Store().ResourceVersion, state: stateFunc(inf)}

				uidOf := func(name string) string {
					o, err := h.Server.Get("configmaps", "demo", name)
					require.NoError(t, err)
					return string(o.UID)
				}
				delOf := func(name string) *pendingWrite {
					return &pendingWrite{ref: objRef{resKeyOf(kube.ConfigMaps), "demo/" + name}, deleted: true, uid: uidOf(name)}
				}
				held, again, plain := delOf("held"), delOf("again"), delOf("plain")
				require.False(t, ce.shows(held))
				require.False(t, ce.shows(again))
				require.False(t, ce.shows(plain))

				cms := client.For(c, kube.Typed[*review2Obj](kube.ConfigMaps), client.Options{})
				require.NoError(t, cms.Delete(ctx, "demo", "held", client.DeleteOptions{}))
				_, err = h.Server.Get("configmaps", "demo", "held")
				require.NoError(t, err, "the finalizer keeps it")
				require.NoError(t, cms.Delete(ctx, "demo", "again", client.DeleteOptions{}))
				_, err = h.Server.Create("configmaps", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"demo","name":"again"}}`))
				require.NoError(t, err)
				require.NotEqual(t, again.uid, uidOf("again"))
				// A later write the cache must reach: then it has applied both.
				last, err := h.Server.Create("configmaps", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"demo","name":"last"}}`))
				require.NoError(t, err)
				require.Eventually(t, func() bool { return ce.reached(strconv.FormatUint(last.ResourceVersion, 10)) }, 30*time.Second, 5*time.Millisecond)

				require.True(t, ce.shows(held), "the deletionTimestamp shows the delete")
				require.True(t, ce.shows(again), "a new UID shows the delete")
				require.False(t, ce.shows(plain), "an object that stays does not")
			})
		}
	}
}
