package suite

import (
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

func metaCases() []Case {
	return []Case{
		{Name: "metadata/list", Run: testMetadataList},
		{Name: "metadata/watch", Run: testMetadataWatch},
	}
}

const metaAPIVersion = "meta.k8s.io/v1"

// requirePartial checks obj is a PartialObjectMetadata as the server sends it.
func requirePartial(t T, obj *metav1.PartialObjectMetadata, ns string) {
	t.Helper()
	require.Equal(t, "PartialObjectMetadata", obj.Kind, "%s kind", obj.Name)
	require.Equal(t, metaAPIVersion, obj.APIVersion, "%s apiVersion", obj.Name)
	require.Equal(t, ns, obj.Namespace)
	require.NotEmpty(t, obj.UID, "%s uid", obj.Name)
	require.NotEmpty(t, obj.ResourceVersion, "%s resourceVersion", obj.Name)
}

// testMetadataList: with FormMetadata the items are PartialObjectMetadata
// carrying the pods' metadata (labels included), paginated as usual.
func testMetadataList(t T, e *Env) {
	names := podNames("m", 3)
	createPods(t, e, names, map3("app", "meta"))
	items, rv := listAll[*metav1.PartialObjectMetadata](t, e, e.Admin, watch.ListOptions{Form: watch.FormMetadata, Limit: 2})
	require.NotEmpty(t, rv)
	require.Equal(t, names, namesOf(items))
	for _, it := range items {
		requirePartial(t, it, e.NS)
		require.Equal(t, "meta", it.Labels["app"])
	}
}

// testMetadataWatch: a FormMetadata watch delivers PartialObjectMetadata
// objects for ADDED, MODIFIED and DELETED.
func testMetadataWatch(t T, e *Env) {
	page, err := watch.List[*metav1.PartialObjectMetadata](e.Ctx, e.Admin, kube.Pods, kube.Scope{Namespace: e.NS}, watch.ListOptions{Form: watch.FormMetadata})
	require.NoError(t, err)
	st := openWatch[*metav1.PartialObjectMetadata](t, e, e.Admin,
		watch.WatchOptions{ResourceVersion: page.ResourceVersion, Form: watch.FormMetadata, AllowBookmarks: true})

	_, err = e.Kube.CreatePod(e.Ctx, e.NS, "mw", nil)
	require.NoError(t, err)
	_, err = e.Kube.LabelPod(e.Ctx, e.NS, "mw", "k", "v")
	require.NoError(t, err)
	require.NoError(t, e.Kube.DeletePod(e.Ctx, e.NS, "mw"))

	for _, want := range []watch.EventType{watch.Added, watch.Modified, watch.Deleted} {
		ev := nextChange(t, st)
		if want == watch.Deleted && ev.Type == watch.Modified && ev.Object.DeletionTimestamp != nil {
			ev = nextChange(t, st) // the delete's deletionTimestamp step
		}
		require.Equal(t, want, ev.Type)
		require.Equal(t, "mw", ev.Object.Name)
		requirePartial(t, ev.Object, e.NS)
		if want != watch.Added {
			require.Equal(t, "v", ev.Object.Labels["k"], "%s labels", want)
		}
	}
}
