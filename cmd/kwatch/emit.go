package main

import (
	"bufio"
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/watch"
)

// change is one printed event: ADDED, MODIFIED or DELETED and the object
// (for DELETED, its last known state).
type change[T any] struct {
	typ watch.EventType
	obj T
	// old is the version printed before a MODIFIED one (hasOld), for
	// --diff; relisted: the informer computed the change after a relist
	// (a DELETED whose final state is unknown, or an update that may span
	// several changes kwatch did not see).
	old      T
	hasOld   bool
	relisted bool
}

// sink formats changes onto the output: a table or a stream of objects.
type sink[T any] interface {
	// write prints a batch (the initial list, sorted) or one change.
	write(batch []change[T]) error
	// close ends the output (a List document's closing lines).
	close() error
}

// flushEvery bounds how long a printed change may wait in the buffer while
// more changes are queued behind it.
const flushEvery = 100 * time.Millisecond

// emitter is the informer handler that prints, registered with
// informer.Ordered delivery: the informer calls it from one goroutine with
// every change it applied, in order (each watch event; after a relist, the
// computed difference), so the printed stream is the server's and replays
// to the server's state. If the output falls more than the handler's
// buffer behind (a paused terminal), the informer coalesces later changes
// per key until the printer catches up; the emitter then says on stderr how
// many changes were merged (mergeReport). The initial list is held back
// until it is complete, then sorted by namespace and name and printed as one
// batch, which also fixes the table's column widths.
//
// Output goes through a bufio.Writer, flushed when the handler has nothing
// queued or every flushEvery, and at close: a row or object is never left
// half-written at exit. Its methods are safe for concurrent use.
type emitter[T watch.Object] struct {
	// backlog reports the handler's queued changes; set before Run.
	backlog func() int
	// beforeOutput runs once before anything is printed (it ends the
	// progress line, which shares the terminal).
	beforeOutput func()
	// onError is told of the first write error (a closed pipe); the command
	// then ends.
	onError func(error)
	// counted is told of every printed change, for metrics.
	counted func(watch.EventType)
	// merged reports the changes the informer merged away (Registration.Merged);
	// warn prints a line on stderr. Set before Run.
	merged func() uint64
	warn   func(string)

	mu          sync.Mutex
	out         *bufio.Writer
	sink        sink[T]
	initialDone bool        // the initial list has been printed
	frozen      bool        // listing once: nothing after the initial list
	initial     []change[T] // the initial list while it arrives
	lastFlush   time.Time
	err         error // first write error; nothing is printed after it
	// reported is the merged count last reported, at lastReport.
	reported   uint64
	lastReport time.Time
}

func newEmitter[T watch.Object](out *bufio.Writer, s sink[T]) *emitter[T] {
	return &emitter[T]{out: out, sink: s, backlog: func() int { return 0 },
		beforeOutput: func() {}, onError: func(error) {}, counted: func(watch.EventType) {},
		merged: func() uint64 { return 0 }, warn: func(string) {}}
}

// handler adapts the emitter to the informer.
func (em *emitter[T]) handler() informer.Handler[T] {
	return informer.HandlerFuncs[T]{
		AddFunc: func(obj T, initial bool) {
			if initial {
				em.addInitial(obj)
				return
			}
			em.print(change[T]{typ: watch.Added, obj: obj})
		},
		UpdateFunc: func(old, obj T) { em.print(change[T]{typ: watch.Modified, obj: obj, old: old, hasOld: true}) },
		DeleteFunc: func(obj T, unknown bool) { em.print(change[T]{typ: watch.Deleted, obj: obj, relisted: unknown}) },
		RelistUpdateFunc: func(old, obj T) {
			em.print(change[T]{typ: watch.Modified, obj: obj, old: old, hasOld: true, relisted: true})
		},
	}
}

func (em *emitter[T]) addInitial(obj T) {
	em.mu.Lock()
	defer em.mu.Unlock()
	if em.frozen {
		return
	}
	if em.initialDone { // a late handler's replay; not expected, print it
		em.writeLocked([]change[T]{{typ: watch.Added, obj: obj}})
		return
	}
	em.initial = append(em.initial, change[T]{typ: watch.Added, obj: obj})
}

// print writes one live change. The first one also ends the initial list:
// the informer delivers every initial object before any later change.
func (em *emitter[T]) print(c change[T]) {
	em.mu.Lock()
	defer em.mu.Unlock()
	if em.frozen {
		return
	}
	em.endInitialLocked()
	em.writeLocked([]change[T]{c})
}

// endInitial prints the initial list; called once the handler has synced.
// With more false (listing once), later changes are not printed.
func (em *emitter[T]) endInitial(more bool) {
	em.mu.Lock()
	defer em.mu.Unlock()
	em.endInitialLocked()
	em.frozen = !more
}

func (em *emitter[T]) endInitialLocked() {
	if em.initialDone {
		return
	}
	em.initialDone = true
	slices.SortFunc(em.initial, func(a, b change[T]) int {
		return cmp.Or(cmp.Compare(a.obj.GetNamespace(), b.obj.GetNamespace()),
			cmp.Compare(a.obj.GetName(), b.obj.GetName()))
	})
	em.writeLocked(em.initial)
	em.initial = nil
}

// writeLocked prints a batch (possibly empty: a table still gets its
// header) and flushes when nothing else is queued.
func (em *emitter[T]) writeLocked(batch []change[T]) {
	if em.err != nil {
		return
	}
	if em.beforeOutput != nil {
		em.beforeOutput()
		em.beforeOutput = nil
	}
	err := em.sink.write(batch)
	for _, c := range batch {
		em.counted(c.typ)
	}
	if err == nil && (em.backlog() == 0 || time.Since(em.lastFlush) >= flushEvery) {
		err = em.out.Flush()
		em.lastFlush = time.Now()
	}
	em.failLocked(err)
	em.reportLocked(false)
}

// reportEvery bounds how often a merge report is printed while the output
// stays behind.
const reportEvery = time.Second

// reportLocked says on stderr how many changes the informer merged since
// the last report: at most once per reportEvery, and at the end (final).
func (em *emitter[T]) reportLocked(final bool) {
	n := em.merged()
	if n == em.reported || (!final && time.Since(em.lastReport) < reportEvery) {
		return
	}
	em.warn(mergeReport(n-em.reported, n))
	em.reported, em.lastReport = n, time.Now()
}

// mergeReport is the line printed when changes were merged: fresh since the
// last report, total in all.
func mergeReport(fresh, total uint64) string {
	return fmt.Sprintf("kwatch: the output fell behind the server: %d changes were merged into later ones "+
		"and not printed (%d in total); each object's newest state was printed", fresh, total)
}

func (em *emitter[T]) failLocked(err error) {
	if err != nil && em.err == nil {
		em.err = err
		em.onError(err)
	}
}

// close ends the output and flushes it. Call it after the informer's Run
// has returned, when no handler call can come.
func (em *emitter[T]) close() error {
	em.mu.Lock()
	defer em.mu.Unlock()
	if em.err == nil {
		em.failLocked(em.sink.close())
	}
	if em.err == nil {
		em.failLocked(em.out.Flush())
	}
	em.reportLocked(true)
	return em.err
}
