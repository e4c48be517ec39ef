package snapfile

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FuzzRead checks that reading any bytes never panics, ends in nil or one of
// the package's typed errors, passes on no more records than the bytes can
// hold, and that whatever it accepts writes back to a file it reads the same.
// With fixSum the last four bytes are replaced by the checksum of the rest,
// so that mutations get past the checksum to the path that accepts a file.
func FuzzRead(f *testing.F) {
	valid := [][]byte{
		encodeBytes(f, testHeader(0), nil),
		encodeBytes(f, testHeader(1), testRecords(1)),
		encodeBytes(f, testHeader(5), testRecords(5)),
		encodeBytes(f, Header{ResourceVersion: "1", Created: time.Unix(0, 0), Count: 1}, []Record{{}}),
	}
	for _, v := range valid {
		f.Add(v, false)
		f.Add(v, true)
		f.Add(v[:len(v)-1], false)               // truncated checksum
		f.Add(v[:len(v)/2], false)               // truncated midway
		f.Add(append(slices.Clone(v), 0), false) // trailing byte
		flipped := slices.Clone(v)
		flipped[len(v)/2] ^= 0x10
		f.Add(flipped, false)
		f.Add(flipped, true)
	}
	for _, s := range []string{"", "KWSNAP", magic, magic + "\x01", magic + "\x02", magic + "\x01\xff\xff\xff\xff\x0f",
		`{"kind":"PodList"}`, "\x00\x00\x00\x00"} {
		f.Add([]byte(s), false)
	}
	opts := ReadOptions{MaxRecordSize: 1 << 16, MaxKeyLen: 1 << 10, MaxCount: 1 << 20}
	f.Fuzz(func(t *testing.T, data []byte, fixSum bool) {
		if n := len(data) - 4; fixSum && n >= 0 {
			data = binary.LittleEndian.AppendUint32(slices.Clone(data[:n]), crc32.Update(0, castagnoli, data[:n]))
		}
		h, recs, err := decodeBytes(data, opts)
		if len(recs) > len(data)/2 {
			t.Fatalf("%d records passed on from %d bytes", len(recs), len(data))
		}
		if err != nil {
			var ve *VersionError
			var ce *CorruptError
			var le *LimitError
			if !errors.Is(err, ErrNotSnapshot) && !errors.As(err, &ve) && !errors.As(err, &ce) && !errors.As(err, &le) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		require.Equal(t, h.Count, uint64(len(recs)), "Count and the records passed on")
		again, recs2, err := decodeBytes(encodeBytes(t, h, recs), opts)
		require.NoError(t, err, "reading what was written back")
		require.Equal(t, h.Created.UnixNano(), again.Created.UnixNano())
		again.Created = h.Created
		require.Equal(t, h, again)
		require.Equal(t, normalize(recs), normalize(recs2))
	})
}
