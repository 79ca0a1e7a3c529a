//go:build !linux

package modelcheck

// mapSlab returns nil where slabs are not mapped: tables live on the Go
// heap.
func mapSlab(int) []byte { return nil }

// unmapSlab is not called where mapSlab returns nil.
func unmapSlab([]byte) {}
