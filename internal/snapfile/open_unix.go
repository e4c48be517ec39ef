//go:build unix

package snapfile

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// openSafe opens path for reading without following a symbolic link at
// its last component (O_NOFOLLOW) and without blocking on a FIFO
// (O_NONBLOCK, which changes nothing for a regular file), then checks the
// file it opened, so that what is checked is what is read: a regular file,
// owned by the process's effective user, not writable by its group or by
// others. The directories above it are the user's to keep private.
func openSafe(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		// O_NOFOLLOW fails with ELOOP on Linux, EMLINK or EFTYPE on some
		// BSDs: ask the path itself rather than the error number.
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, nil, &UnsafeFileError{Path: path, What: "is a symbolic link"}
		}
		return nil, nil, fmt.Errorf("snapfile: %w", err)
	}
	st, err := f.Stat()
	if err == nil {
		err = checkSafe(path, st)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

func checkSafe(path string, st fs.FileInfo) error {
	if !st.Mode().IsRegular() {
		return fmt.Errorf("snapfile %s: not a regular file", path)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		if euid := os.Geteuid(); int64(sys.Uid) != int64(euid) {
			return &UnsafeFileError{Path: path, What: fmt.Sprintf("is owned by uid %d, not by this process's user (uid %d)", sys.Uid, euid)}
		}
	}
	if perm := st.Mode().Perm(); perm&0o022 != 0 {
		return &UnsafeFileError{Path: path, What: fmt.Sprintf("is writable by its group or others (mode %04o)", perm)}
	}
	return nil
}
