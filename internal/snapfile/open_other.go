//go:build !unix

package snapfile

import (
	"fmt"
	"io/fs"
	"os"
)

// openSafe opens path for reading. Outside Unix there is no O_NOFOLLOW
// and file modes do not describe who may write a file (Windows keeps that
// in ACLs): it refuses a symbolic link by Lstat, and a file that is not
// regular, and leaves the rest to the directory's ACLs.
func openSafe(path string) (*os.File, fs.FileInfo, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, nil, &UnsafeFileError{Path: path, What: "is a symbolic link"}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("snapfile: %w", err)
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("snapfile %s: not a regular file", path)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}
