package watch

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/testutil"
)

// waitLimit bounds every wait in these tests. It is a failure guard for a
// hung decoder, not a speed requirement: a loaded machine never comes near it.
const waitLimit = 2 * time.Minute

func TestDecoderParallelKeepsStreamOrder(t *testing.T) {
	var b strings.Builder
	const n = 3000
	for i := range n {
		b.WriteString(podEvent(Modified, i, (i*37)%900))
	}
	data := []byte(b.String())
	for _, par := range []int{2, 4, 8, runtime.GOMAXPROCS(0) + 1} {
		for _, maxChunk := range []int{512, 64 << 10} {
			evs, err := decodeAll[*testPod](newChunkReader(data, uint64(par), maxChunk), DecoderOptions{Parallelism: par})
			require.ErrorIs(t, err, io.EOF)
			require.Len(t, evs, n)
			for i, ev := range evs {
				if want := fmt.Sprintf("pod-%d", i); ev.Object.Name != want {
					t.Fatalf("par=%d chunk=%d: event %d is %s, want %s", par, maxChunk, i, ev.Object.Name, want)
				}
			}
		}
	}
}

func TestDecoderParallelErrorMidBatch(t *testing.T) {
	var b strings.Builder
	var badOffset int
	for i := range 40 {
		if i == 25 {
			badOffset = b.Len()
			b.WriteString(`{"type":"ADDED","object":{"metadata":{"name":7}}}`)
			continue
		}
		b.WriteString(podEvent(Added, i, 100))
	}
	evs, err := decodeAll[*testPod](strings.NewReader(b.String()), DecoderOptions{Parallelism: 4})
	require.Len(t, evs, 25, "every event before the bad one, and none after")
	for i, ev := range evs {
		assert.Equal(t, fmt.Sprintf("pod-%d", i), ev.Object.Name)
	}
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, int64(badOffset), de.Offset)
	assert.Equal(t, "ADDED event", de.What)
}

// TestDecoderDeliversWithoutWaiting feeds a pipe: an event that has fully
// arrived must come out of Next while the next one is still incomplete.
func TestDecoderDeliversWithoutWaiting(t *testing.T) {
	ev0, ev1 := podEvent(Added, 0, 10), podEvent(Modified, 1, 10)
	for _, par := range []int{1, 4} {
		pr, pw := io.Pipe()
		d := NewDecoder[*testPod](pr, DecoderOptions{Parallelism: par})
		type result struct {
			name string
			err  error
		}
		results := make(chan result)
		go func() {
			for {
				ev, err := d.Next()
				if err != nil {
					results <- result{err: err}
					return
				}
				results <- result{name: ev.Object.Name}
			}
		}()
		writes := make(chan error, 3)
		write := func(s string) {
			go func() { _, err := pw.Write([]byte(s)); writes <- err }()
		}
		next := func() result {
			select {
			case r := <-results:
				return r
			case <-time.After(waitLimit):
				t.Fatalf("par=%d: Next did not return an event that had arrived", par)
				return result{}
			}
		}
		write(ev0 + ev1[:20])
		assert.Equal(t, result{name: "pod-0"}, next(), "par=%d", par)
		write(ev1[20:])
		assert.Equal(t, result{name: "pod-1"}, next(), "par=%d", par)
		require.NoError(t, pw.Close())
		assert.ErrorIs(t, next().err, io.EOF)
		require.NoError(t, <-writes)
		require.NoError(t, <-writes)
		require.NoError(t, d.Close())
	}
}

// TestDecoderStartsAndLeavesNoGoroutine runs in a synctest bubble so that
// synctest.Wait can wait for the decoding goroutines that have called Done
// to finish exiting, without sleeping; a goroutine left blocked would also
// fail synctest.Test itself.
func TestDecoderStartsAndLeavesNoGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data := syntheticStream(400, 11)
		baseline := testutil.BubbleGoroutines(t)
		d := NewDecoder[*testPod](bytes.NewReader(data), DecoderOptions{Parallelism: 8})
		assert.Equal(t, baseline, testutil.BubbleGoroutines(t), "NewDecoder starts no goroutine")
		for range 200 {
			_, err := d.Next()
			require.NoError(t, err)
		}
		require.NoError(t, d.Close())
		synctest.Wait()
		assert.Equal(t, baseline, testutil.BubbleGoroutines(t), "goroutines left after Close")
	})
}

// TestDecoderCloseDuringNext closes the decoder while Next waits on the
// network, as a watch's Close does from another goroutine.
func TestDecoderCloseDuringNext(t *testing.T) {
	for _, par := range []int{1, 4} {
		pr, pw := io.Pipe()
		d := NewDecoder[*testPod](pr, DecoderOptions{Parallelism: par})
		errs := make(chan error, 1)
		go func() {
			_, err := d.Next()
			errs <- err
		}()
		// The write returns once Next has read it: Next is then inside a frame.
		_, err := pw.Write([]byte(`{"type":"ADDED",`))
		require.NoError(t, err)
		require.NoError(t, d.Close(), "Close returns while Next waits")
		require.NoError(t, pw.CloseWithError(errBoom), "ending the stream unblocks Next")
		select {
		case err := <-errs:
			assert.ErrorIs(t, err, errBoom, "par=%d", par)
		case <-time.After(waitLimit):
			t.Fatalf("par=%d: Next still blocked after the reader was closed", par)
		}
		_, err = d.Next()
		assert.ErrorIs(t, err, ErrDecoderClosed, "par=%d", par)
	}
}

// TestDecoderCloseDuringParallelDecoding races Close against batches being
// decoded: no decoding goroutine may be left once Close and Next return.
func TestDecoderCloseDuringParallelDecoding(t *testing.T) {
	synctest.Test(t, testDecoderCloseDuringParallelDecoding)
}

func testDecoderCloseDuringParallelDecoding(t *testing.T) {
	data := benchStream(64)
	baseline := testutil.BubbleGoroutines(t)
	for round := range 20 {
		d := NewDecoder[*testPod](&loopReader{data: data}, DecoderOptions{Parallelism: 4})
		done := make(chan error, 1)
		go func() {
			for {
				if _, err := d.Next(); err != nil {
					done <- err
					return
				}
			}
		}()
		for range round * 3 {
			runtime.Gosched()
		}
		require.NoError(t, d.Close())
		select {
		case err := <-done:
			assert.ErrorIs(t, err, ErrDecoderClosed, "round %d", round)
		case <-time.After(waitLimit):
			t.Fatalf("round %d: Next kept delivering after Close", round)
		}
	}
	synctest.Wait() // goroutines that called Done may still be exiting
	assert.Equal(t, baseline, testutil.BubbleGoroutines(t), "goroutines left after Close")
}
