//go:build !amd64 && !arm64

package modelcheck

import (
	"encoding/binary"
	"unsafe"
)

// load64 reads the little-endian word at offset off of p, a byte at a time
// where words may not be read at any address.
func load64(p unsafe.Pointer, off uintptr) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice((*byte)(unsafe.Add(p, off)), 8))
}
