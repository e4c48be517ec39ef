package snapfile

import "syscall"

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14), which the syscall
// package does not name.
const madvPopulateWrite = 23

// fault makes b's pages resident in one call where the kernel can, and
// by touching each page where it cannot (a kernel before 5.14, or b not
// aligned to a page).
func fault(b []byte) {
	if len(b) == 0 || syscall.Madvise(b, madvPopulateWrite) == nil {
		return
	}
	touch(b)
}
