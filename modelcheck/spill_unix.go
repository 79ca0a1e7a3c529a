//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package modelcheck

import (
	"os"
	"syscall"
)

// mapFile maps the first n bytes of the file at path for reading: the run
// is then read through the page cache, which the kernel may drop and read
// again, instead of from memory the process holds.
func mapFile(path string, n int) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return syscall.Mmap(int(f.Fd()), 0, n, syscall.PROT_READ, syscall.MAP_SHARED)
}

// unmapFile undoes mapFile.
func unmapFile(b []byte) { _ = syscall.Munmap(b) }
