package snapfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// smallFile is a valid snapshot of a few short records.
func smallFile(t testing.TB) []byte {
	return encodeBytes(t, testHeader(3), testRecords(3))
}

// TestTruncated reads every proper prefix of a valid file: each is an
// error (ErrNotSnapshot when empty, a *CorruptError otherwise), none panics.
func TestTruncated(t *testing.T) {
	file := smallFile(t)
	for n := range len(file) {
		_, _, err := decodeBytes(file[:n], ReadOptions{})
		var ce *CorruptError
		switch {
		case n == 0:
			if !errors.Is(err, ErrNotSnapshot) {
				t.Fatalf("empty: got %v, want ErrNotSnapshot", err)
			}
		case !errors.As(err, &ce):
			t.Fatalf("prefix of %d of %d bytes: got %v, want a *CorruptError", n, len(file), err)
		case ce.Offset > int64(n):
			t.Fatalf("prefix of %d bytes: error at offset %d, past its end", n, ce.Offset)
		}
	}
	// And through the file system, at a few sizes.
	dir := t.TempDir()
	for _, n := range []int{0, 3, 7, 8, 40, len(file) - 5, len(file) - 1} {
		path := filepath.Join(dir, fmt.Sprint(n))
		require.NoError(t, os.WriteFile(path, file[:n], 0o600))
		_, _, err := readFile(t, path, ReadOptions{})
		require.Error(t, err, "prefix of %d bytes", n)
		require.Contains(t, err.Error(), path, "the error names the file")
	}
}

// TestTrailingBytes appends to a valid file.
func TestTrailingBytes(t *testing.T) {
	file := append(smallFile(t), 0)
	_, _, err := decodeBytes(file, ReadOptions{})
	var ce *CorruptError
	require.ErrorAs(t, err, &ce)
	require.Contains(t, ce.What, "1 bytes after the trailer")
}

// TestFlippedBits flips every bit of a valid file in turn. Every flip is an
// error; one inside a string or data, which leaves the layout as it was, is
// a checksum mismatch.
func TestFlippedBits(t *testing.T) {
	file := smallFile(t)
	// Where the header's server string lies: flips there change only content.
	hdrStart := strings.Index(string(file), "https://")
	for i := range len(file) {
		for bit := range 8 {
			b := append([]byte(nil), file...)
			b[i] ^= 1 << bit
			_, _, err := decodeBytes(b, ReadOptions{})
			if err == nil {
				t.Fatalf("flipping bit %d of byte %d went unnoticed", bit, i)
			}
			// (Bit 7 of an ASCII byte makes it invalid UTF-8, caught earlier.)
			inContent := i >= hdrStart && i < hdrStart+len("https://cluster.example") && bit < 7
			inContent = inContent || i >= len(file)-5-14 && i < len(file)-5 // the last record's 14 data bytes
			if inContent && !strings.Contains(err.Error(), "checksum mismatch") {
				t.Fatalf("flipping bit %d of byte %d: got %v, want a checksum mismatch", bit, i, err)
			}
		}
	}
}

func TestForeignFiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 4096)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	newer := append([]byte(magic), 2)
	newer = append(newer, smallFile(t)[8:]...)
	tests := []struct {
		name  string
		data  []byte
		check func(error) bool
	}{
		{"empty", nil, isNotSnapshot},
		{"random bytes", random, isNotSnapshot},
		{"JSON", []byte(`{"kind":"PodList","apiVersion":"v1","items":[]}`), isNotSnapshot},
		{"almost the magic", []byte("KWSNAQ\x1a\x01"), isNotSnapshot},
		{"format version 2", newer, func(err error) bool {
			var ve *VersionError
			return errors.As(err, &ve) && ve.Version == 2
		}},
		{"format version 0", []byte(magic + "\x00"), func(err error) bool {
			var ve *VersionError
			return errors.As(err, &ve) && ve.Version == 0
		}},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-"))
			require.NoError(t, os.WriteFile(path, tt.data, 0o600))
			_, _, err := readFile(t, path, ReadOptions{})
			if !tt.check(err) {
				t.Fatalf("got %v", err)
			}
			require.Contains(t, err.Error(), path, "the error names the file")
		})
	}
	_, _, err := readFile(t, dir, ReadOptions{})
	require.ErrorContains(t, err, "not a regular file")
	_, _, err = readFile(t, filepath.Join(dir, "missing"), ReadOptions{})
	require.ErrorIs(t, err, os.ErrNotExist)
}

func isNotSnapshot(err error) bool { return errors.Is(err, ErrNotSnapshot) }

// craft builds a file from the magic, version, a header block and a body,
// with a valid trailer count and checksum when count >= 0.
func craft(hdr []byte, body []byte, count int64) []byte {
	b := append([]byte(magic), FormatVersion)
	b = binary.AppendUvarint(b, uint64(len(hdr)))
	b = append(b, hdr...)
	b = append(b, body...)
	if count >= 0 {
		b = binary.AppendUvarint(b, uint64(count))
		b = binary.LittleEndian.AppendUint32(b, crc32.Update(0, castagnoli, b))
	}
	return b
}

// rawHeader encodes h as encodeHeader does, with any count.
func rawHeader(t *testing.T, count uint64) []byte {
	h := testHeader(0)
	b, err := encodeHeader(nil, h)
	require.NoError(t, err)
	return append(b[:len(b)-1], binary.AppendUvarint(nil, count)...)
}

// TestHugeLengths declares lengths far beyond the file and the limits and
// checks the error and that reading allocated next to nothing.
func TestHugeLengths(t *testing.T) {
	rec := func(keyLen uint64, key string, dataLen uint64, data string) []byte {
		b := binary.AppendUvarint(nil, keyLen)
		b = append(b, key...)
		b = binary.AppendUvarint(b, dataLen)
		return append(b, data...)
	}
	big := uint64(1) << 40
	tests := []struct {
		name string
		file []byte
		opts ReadOptions
		want string // in the error
	}{
		{"header length", append(append([]byte(magic), 1), binary.AppendUvarint(nil, big)...), ReadOptions{}, "header length 1099511627776 is over"},
		{"header past the end", append(append([]byte(magic), 1), 100, 0, 0), ReadOptions{}, "header length 100 is past the end of the file (2 bytes left)"},
		{"header string", craft(binary.AppendUvarint(nil, big), nil, 0), ReadOptions{}, "header group: length 1099511627776 past the end of the header"},
		{"count over MaxCount", craft(rawHeader(t, big), nil, 0), ReadOptions{}, "is over ReadOptions.MaxCount"},
		{"count past the end", craft(rawHeader(t, big), nil, 0), ReadOptions{MaxCount: 1 << 62}, "1099511627776 records cannot fit"},
		{"key length", craft(rawHeader(t, 1), rec(big, "k", 0, ""), 1), ReadOptions{}, "key length 1099511627776 is past the end"},
		{"data length", craft(rawHeader(t, 1), rec(1, "k", big, "d"), 1), ReadOptions{}, "data length 1099511627776 is past the end"},
		{"data over MaxRecordSize", craft(rawHeader(t, 1), rec(1, "k", 8, "12345678"), 1), ReadOptions{MaxRecordSize: 7}, "8 is over ReadOptions.MaxRecordSize (7)"},
		{"key over MaxKeyLen", craft(rawHeader(t, 1), rec(3, "k/k", 0, ""), 1), ReadOptions{MaxKeyLen: 2}, "3 is over ReadOptions.MaxKeyLen (2)"},
		{"varint overflow", craft(rawHeader(t, 1), []byte("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f"), 1), ReadOptions{}, "varint overflows 64 bits"},
		{"overlong key length", craft(rawHeader(t, 1), append([]byte{0x81, 0x00}, rec(0, "k", 0, "")[1:]...), 1), ReadOptions{}, "a key length: varint is longer than its value needs"},
		{"overlong data length", craft(rawHeader(t, 1), append(rec(1, "k", 0, "")[:2], 0x80, 0x00), 1), ReadOptions{}, "a data length: varint is longer than its value needs"},
		{"key not UTF-8", craft(rawHeader(t, 1), rec(2, "\xc3\x28", 0, ""), 1), ReadOptions{}, "record 0: key is not valid UTF-8"},
		{"trailer count", craft(rawHeader(t, 1), rec(1, "k", 0, ""), 2), ReadOptions{}, "trailer counts 2 records, header 1"},
		{"header not UTF-8", craft(append([]byte{2, 0xc3, 0x28}, rawHeader(t, 0)[1:]...), nil, 0), ReadOptions{}, "header group: not valid UTF-8"},
		{"header length overlong", craft(append([]byte{0x80, 0x00}, rawHeader(t, 0)[1:]...), nil, 0), ReadOptions{}, "header group: bad length"},
		{"header too long", craft(append(rawHeader(t, 0), 0), nil, 0), ReadOptions{}, "1 unexpected bytes at the end of the header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, _, err := decodeBytes(tt.file, tt.opts)
			runtime.ReadMemStats(&after)
			require.ErrorContains(t, err, tt.want)
			var ce *CorruptError
			var le *LimitError
			if !errors.As(err, &ce) && !errors.As(err, &le) {
				t.Errorf("got %T, want a *CorruptError or *LimitError", err)
			}
			// The read buffer is 64 KiB; everything else is small.
			if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
				t.Errorf("reading a %d-byte file allocated %d bytes", len(tt.file), got)
			}
		})
	}
}

func TestFileLimitAndBadOptions(t *testing.T) {
	path := writeFile(t, t.TempDir(), testHeader(3), testRecords(3))
	_, _, err := readFile(t, path, ReadOptions{MaxFileSize: 10})
	var le *LimitError
	require.ErrorAs(t, err, &le)
	require.Equal(t, "MaxFileSize", le.Limit)
	_, _, err = readFile(t, path, ReadOptions{MaxKeyLen: -1})
	require.ErrorContains(t, err, "ReadOptions.MaxKeyLen is negative")
}

// TestEachError stops at each's error and returns it wrapped.
func TestEachError(t *testing.T) {
	path := writeFile(t, t.TempDir(), testHeader(3), testRecords(3))
	errStop := errors.New("stop")
	n := 0
	h, err := Read(path, ReadOptions{}, func(Record) error {
		n++
		return errStop
	})
	require.ErrorIs(t, err, errStop)
	require.Equal(t, 1, n, "records passed on after the error")
	require.Equal(t, "123456789", h.ResourceVersion, "the header is returned with the error")

	r, err := Open(path, ReadOptions{})
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, r.Records(func(Record) error { return nil }))
	require.ErrorContains(t, r.Records(func(Record) error { return nil }), "Records called twice")
}
