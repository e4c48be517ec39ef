//go:build !linux

package snapfile

// fault makes b's pages resident by touching each.
func fault(b []byte) { touch(b) }
