//go:build amd64 || arm64

package modelcheck

import "unsafe"

// load64 reads the little-endian word at offset off of p: these
// processors are little-endian and read words at any address.
func load64(p unsafe.Pointer, off uintptr) uint64 { return *(*uint64)(unsafe.Add(p, off)) }
