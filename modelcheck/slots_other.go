//go:build !linux

package modelcheck

// allocSlots returns n zeroed slots from the Go heap.
func allocSlots(n int) ([]uint64, bool) { return make([]uint64, n), false }

// freeSlots leaves heap slots to the garbage collector.
func freeSlots([]uint64, bool) {}
