//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package modelcheck

import (
	"os"
	"unsafe"
)

// mapFile reads the first n bytes of the file at path where files are not
// mapped: the run then stays in memory, and spilling saves only the logs.
func mapFile(path string, n int) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	// Aligned for reading as words: a fresh slice of uint64.
	if n == 0 {
		return nil, nil
	}
	w := make([]uint64, (n+7)/8)
	m := unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), n)
	copy(m, b[:n])
	return m, nil
}

// unmapFile undoes mapFile (the collector frees the copy).
func unmapFile([]byte) {}
