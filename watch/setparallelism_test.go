package watch

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSetParallelismMidStreamKeepsOrder(t *testing.T) {
	data := syntheticStream(300, 7)
	want, err := decodeAll[*testPod](bytes.NewReader(data), DecoderOptions{})
	require.ErrorIs(t, err, io.EOF)
	d := NewDecoder[*testPod](newChunkReader(data, 3, 4096), DecoderOptions{Parallelism: 1})
	defer d.Close()
	var got []Event[*testPod]
	for i := 0; ; i++ {
		switch i {
		case 50:
			d.SetParallelism(4)
		case 200:
			d.SetParallelism(0)
		}
		ev, err := d.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		got = append(got, ev)
	}
	require.Equal(t, summaries(want), summaries(got))
}
