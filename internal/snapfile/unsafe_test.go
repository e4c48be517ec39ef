//go:build unix

package snapfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestOpenRefusesFilesOthersControl: a snapshot path that another local
// user could have planted or changed is refused with an *UnsafeFileError
// naming what was wrong, before a byte of it is read: a symbolic link
// (even to a good snapshot), a file of another user, one writable by its
// group or by others, and a FIFO (which would block a plain open).
func TestOpenRefusesFilesOthersControl(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, testHeader(3), testRecords(3))
	tests := []struct {
		name  string
		plant func(t *testing.T, path string)
		want  string
	}{
		{"a symbolic link to a good snapshot", func(t *testing.T, path string) {
			require.NoError(t, os.Symlink(good, path))
		}, "is a symbolic link"},
		{"group-writable", func(t *testing.T, path string) {
			copyFile(t, good, path)
			require.NoError(t, os.Chmod(path, 0o620))
		}, "writable by its group or others (mode 0620)"},
		{"world-writable", func(t *testing.T, path string) {
			copyFile(t, good, path)
			require.NoError(t, os.Chmod(path, 0o602))
		}, "writable by its group or others (mode 0602)"},
		{"another user's", func(t *testing.T, path string) {
			if os.Geteuid() != 0 {
				t.Skip("only root can give a file to another user")
			}
			copyFile(t, good, path)
			require.NoError(t, os.Chown(path, 65534, 65534))
		}, "owned by uid 65534"},
		{"a FIFO", func(t *testing.T, path string) {
			require.NoError(t, syscall.Mkfifo(path, 0o600))
		}, "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "pods.snap")
			tt.plant(t, path)
			done := make(chan error, 1)
			go func() {
				r, err := Open(path, ReadOptions{})
				if err == nil {
					r.Close()
				}
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				t.Fatal("Open blocked")
			}
			require.ErrorContains(t, err, tt.want)
			require.ErrorContains(t, err, path, "the error names the file")
			if tt.name != "a FIFO" {
				var unsafe *UnsafeFileError
				require.True(t, errors.As(err, &unsafe), "got %T %v", err, err)
			}
		})
	}
	_, _, err := readFile(t, good, ReadOptions{})
	require.NoError(t, err, "the process's own 0600 file is read")
}

// TestWriteReplacesAPlantedSymlink: Write never follows a symbolic link
// planted at its path: the link's target is untouched and the path becomes
// the process's own regular file, mode 0600.
func TestWriteReplacesAPlantedSymlink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("keep me"), 0o644))
	require.NoError(t, os.Symlink(victim, filepath.Join(dir, "pods.snap")))
	path := writeFile(t, dir, testHeader(2), testRecords(2)) // to dir/pods.snap, the link
	data, err := os.ReadFile(victim)
	require.NoError(t, err)
	require.Equal(t, "keep me", string(data), "the link's target is untouched")
	st, err := os.Lstat(path)
	require.NoError(t, err)
	require.True(t, st.Mode().IsRegular(), "the path is a file now, not the link")
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	_, _, err = readFile(t, path, ReadOptions{})
	require.NoError(t, err)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, data, 0o600))
}
