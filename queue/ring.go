package queue

// ring is a FIFO of items in a circular buffer whose capacity is a power of
// two. Steady-state push and pop do not allocate; the buffer doubles when
// full and halves when it is at most an eighth full, so a burst does not
// pin its peak memory forever. Halving waits until the ring has popped
// four times its capacity since the last resize: a queue whose depth swings
// between empty and a peak, as work queues do, would otherwise reallocate
// and copy its buffer on every swing. Either way resizing costs O(1)
// amortized per operation.
//
// The zero value is an empty ring. It is not safe for concurrent use: the
// queue guards it with its mutex.
type ring[T any] struct {
	buf  []T // len(buf) is 0 or a power of two
	head int // index of the oldest item
	n    int // number of items
	pops int // pops since the last resize
}

// minRing is the smallest buffer the ring allocates and never shrinks below.
const minRing = 16

func (r *ring[T]) len() int { return r.n }

func (r *ring[T]) push(v T) {
	if r.n == len(r.buf) {
		r.resize(max(minRing, 2*len(r.buf)))
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = v
	r.n++
}

// pop removes and returns the oldest item. The caller checks len() > 0.
func (r *ring[T]) pop() T {
	var zero T
	v := r.buf[r.head]
	r.buf[r.head] = zero // do not keep the item alive
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	r.pops++
	if len(r.buf) > minRing && r.n <= len(r.buf)/8 && r.pops >= 4*len(r.buf) {
		r.resize(len(r.buf) / 2)
	}
	return v
}

// resize moves the items into a new buffer of size, which holds them all.
func (r *ring[T]) resize(size int) {
	buf := make([]T, size)
	if r.n > 0 {
		end := r.head + r.n
		if end <= len(r.buf) {
			copy(buf, r.buf[r.head:end])
		} else {
			k := copy(buf, r.buf[r.head:])
			copy(buf[k:], r.buf[:end-len(r.buf)])
		}
	}
	r.buf = buf
	r.head = 0
	r.pops = 0
}
