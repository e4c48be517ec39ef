package snapfile

import (
	"fmt"
	"sync"
	"unicode/utf8"
)

// Records calls each for every record, in file order, then reads the
// trailer and verifies the record count and the checksum. It may be called
// once.
//
// The checksum is checked only at the end: each sees records of a file that
// may yet turn out corrupt. The caller MUST stage the records (for
// instance in a new map) and commit them only when Records returns nil;
// on any error it discards the staging and relists.
//
// The file is read, framed and checksummed on a goroutine of its own, a
// few hundred records ahead of each, which runs on the caller's goroutine:
// on two cores a load takes about the longer of the two, not their sum.
// The goroutine has ended when Records returns.
//
// Record.Data is the record's bytes in place in the chunk of the file they
// were read in (about 256 KiB, one allocation without pointers), which
// each may keep (a store keeps it) and must not modify; its capacity ends
// at its length. A kept Data keeps its chunk alive, so a store keeping a
// few of a chunk's records holds the whole chunk: at most the file's size,
// given back chunk by chunk as the records are replaced.
//
// An error from each stops the reading and is returned wrapped, with the
// file and the record's index; each has then seen every record before it,
// as it has every record before the damage of a damaged file.
func (r *Reader) Records(each func(Record) error) error {
	if r.called {
		return fmt.Errorf("snapfile %s: Records called twice", r.d.path)
	}
	r.called = true
	if each == nil {
		return fmt.Errorf("snapfile %s: Records needs a function to call", r.d.path)
	}
	return r.records(each, newPrefaulter(r.d.r.left))
}

// records is Records, taking its chunks from pre while it has some.
func (r *Reader) records(each func(Record) error, pre *prefaulter) error {
	batches := make(chan recordBatch, batchesAhead)
	stop := make(chan struct{})
	read := make(chan error, 1)
	r.d.r.pre = pre
	go pre.run(stop)
	go func() {
		defer close(batches)
		read <- r.readRecords(batches, stop)
	}()
	var once sync.Once
	halt := func() { once.Do(func() { close(stop) }) }
	// Also when each panics (or calls runtime.Goexit), Records returns only
	// once both goroutines have ended: the halt stops them, the reader at
	// its next batch (taken and dropped here, up to its closing batches)
	// and the prefaulter at its next chunk (drained once the reader, its
	// other receiver, is gone). Chunks the prefaulter never handed out are
	// then garbage.
	defer func() {
		halt()
		for range batches {
		}
		pre.drain()
		r.d.r.pre = nil
	}()
	var err error
	for b := range batches {
		for i := 0; err == nil && i < len(b.recs); i++ {
			if e := each(b.recs[i]); e != nil {
				err = fmt.Errorf("snapfile %s: record %d (%q): %w", r.d.path, b.first+uint64(i), b.recs[i].Key, e)
				halt()
			}
		}
	}
	if rerr := <-read; err == nil {
		err = rerr
	}
	return err
}

// A recordBatch is consecutive records, the first of them record first.
type recordBatch struct {
	first uint64
	recs  []Record
}

// batchLen records make a batch, and a reader is at most batchesAhead
// batches ahead of its caller.
const (
	batchLen     = 256
	batchesAhead = 2
)

// readRecords reads every record into batches, then the trailer. A
// damaged record ends it with its error after the batch of the records
// before it; a closed stop ends it with nil.
func (r *Reader) readRecords(batches chan<- recordBatch, stop <-chan struct{}) error {
	d := &r.d
	b := recordBatch{recs: make([]Record, 0, min(uint64(batchLen), r.h.Count))}
	send := func() bool {
		select {
		case batches <- b:
			b = recordBatch{first: b.first + uint64(len(b.recs)), recs: make([]Record, 0, batchLen)}
			return true
		case <-stop:
			return false
		}
	}
	for i := range r.h.Count {
		rec, err := d.record(i)
		if err != nil {
			if send() {
				return err
			}
			return nil
		}
		if b.recs = append(b.recs, rec); len(b.recs) == batchLen && !send() {
			return nil
		}
	}
	if len(b.recs) > 0 && !send() {
		return nil
	}
	return r.trailer()
}

// record reads record i.
func (d *decoder) record(i uint64) (Record, error) {
	start := d.off
	kl, err := d.length("key", "MaxKeyLen", d.opts.MaxKeyLen)
	if err != nil {
		return Record{}, err
	}
	key, err := d.take(kl, "a key")
	if err != nil {
		return Record{}, err
	}
	if !utf8.Valid(key) {
		return Record{}, d.corrupt(start, fmt.Sprintf("record %d: key is not valid UTF-8", i))
	}
	dl, err := d.length("data", "MaxRecordSize", d.opts.MaxRecordSize)
	if err != nil {
		return Record{}, err
	}
	data, err := d.take(dl, "record data")
	if err != nil {
		return Record{}, err
	}
	return Record{Key: string(key), Data: data}, nil
}
