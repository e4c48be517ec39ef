package informer

import (
	"log/slog"
	"runtime"
	"testing"
	"weak"
)

// TestAddAllCancelledAddFreesItsObject: an add from addAll that a delete
// cancels before the handler saw it (remove's !oldOK case) leaves nothing
// behind, so the deleted object must become garbage even while the handler
// is still behind on the rest of the batch. With addAll's slab, the
// cancelled entry stays inside a slab that the batch's other pending keys
// keep alive, and remove does not zero it, so its object is kept until
// the handler has caught up with the whole batch (for good while it is
// stuck): one deleted object per cancelled key.
func TestAddAllCancelledAddFreesItsObject(t *testing.T) {
	for _, viaAddAll := range []bool{false, true} {
		q := newHandlerQueue[*obj](HandlerFuncs[*obj]{}, false, slog.Default())
		gone := func() weak.Pointer[obj] {
			keys := []string{"k0", "k1"}
			objs := []*obj{{"k0", "1"}, {"k1", "1"}}
			if viaAddAll {
				q.addAll(keys, objs, true)
			} else {
				for i := range keys {
					q.add(keys[i], objs[i], true)
				}
			}
			w := weak.Make(objs[1])
			// k1 deleted before the (stuck) handler saw it: cancelled.
			q.remove("k1", objs[1], &obj{"k1", "2"}, false)
			return w
		}()
		runtime.GC()
		runtime.GC()
		if gone.Value() != nil {
			t.Errorf("viaAddAll=%v: the cancelled add's object is still reachable (k0 pending: %v)", viaAddAll, q.items["k0"] != nil)
		}
		runtime.KeepAlive(q)
	}
}
