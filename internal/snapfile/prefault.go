package snapfile

import "os"

// A prefaulter hands a chunkReader its chunks of chunkSize bytes,
// allocated together when the records are about to be read and with their
// pages made resident ahead of the read that fills them.
//
// Both halves are about a restore's first moments in a new process, when
// every chunk is memory the kernel has yet to give a page:
//
//   - Reading into a page that is not yet resident costs a page fault
//     inside the read: loading a snapshot of 100,000 pods, faults were
//     about two thirds of the reading goroutine's time in read, and that
//     goroutine was the load's slowest. Faulting the pages in on another
//     goroutine moves that work to whichever core the others leave idle,
//     and one madvise call for a chunk costs less than its page faults.
//   - Allocating every chunk before a record is kept means the collection
//     cycles that a growing heap starts run while the heap holds almost
//     nothing to scan: these chunks have no pointers. Allocated as the
//     reading goes, each doubling of the heap would mark the store's
//     objects staged so far again.
//
// The memory is what the records take anyway. At most prefaultAhead
// chunks are resident ahead of the reader, so a file that turns out to be
// damaged early costs no more than that beyond what was read. The chunks
// allocated and never handed out (after damage, or when records larger
// than a chunk took chunks of their own) cost no resident memory, only
// heap that is garbage once Records returns; until then the heap counts
// them (as a GOMEMLIMIT does), as it would the records of the whole file.
type prefaulter struct {
	chunks [][]byte    // allocated, in the order they are handed out; owned by run
	ready  chan []byte // chunks faulted in, empty, capacity chunkSize; closed when run ends
}

// prefaultAhead is how many chunks (4 MiB) may be resident ahead of the
// reader: those waiting in ready and the one run is faulting in.
const prefaultAhead = 16

// newPrefaulter allocates the chunks that size bytes of records fill: the
// last, shorter, chunk is the reader's to size when it needs it.
func newPrefaulter(size int64) *prefaulter {
	p := &prefaulter{chunks: make([][]byte, size/chunkSize), ready: make(chan []byte, prefaultAhead-1)}
	for i := range p.chunks {
		p.chunks[i] = make([]byte, chunkSize)
	}
	return p
}

// run faults in each chunk and hands it on, until every chunk is handed
// out or stop is closed; then it closes ready.
func (p *prefaulter) run(stop <-chan struct{}) {
	defer close(p.ready)
	for i, c := range p.chunks {
		select {
		case <-stop: // seen before the fault: a send below may still win over a closed stop
			return
		default:
		}
		p.chunks[i] = nil
		fault(c)
		select {
		case p.ready <- c[:0]:
		case <-stop:
			return
		}
	}
}

// next returns the next faulted chunk, or nil once run has ended.
func (p *prefaulter) next() []byte {
	return <-p.ready
}

// drain takes what run has left and returns once it has ended; stop must
// be closed first.
func (p *prefaulter) drain() {
	for range p.ready {
	}
}

// touch writes a zero into each page of b, which the kernel makes
// resident; b holds zeros, so its contents do not change.
func touch(b []byte) {
	step := os.Getpagesize()
	for i := 0; i < len(b); i += step {
		b[i] = 0
	}
}
