package modelcheck

import (
	"syscall"
	"unsafe"
)

// hugeSlots is the table size from which slot arrays are mapped outside
// the Go heap and marked for transparent huge pages: a probe into a large
// table is a TLB miss as much as a cache miss, and 2 MiB pages remove most
// of the former.
const hugeSlots = 1 << 18 // 2 MiB of slots

// hugePages switches the huge-page advice; only the benchmark that
// measures the advice turns it off.
var hugePages = true

// allocSlots returns n zeroed slots and whether they were mapped (and so
// must be released with freeSlots).
func allocSlots(n int) ([]uint64, bool) {
	if n < hugeSlots {
		return make([]uint64, n), false
	}
	b, err := syscall.Mmap(-1, 0, n*8, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return make([]uint64, n), false
	}
	if hugePages {
		_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE) // a refusal only costs speed
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), n), true
}

// freeSlots releases slots that allocSlots mapped.
func freeSlots(s []uint64, mapped bool) {
	if mapped && len(s) > 0 {
		_ = syscall.Munmap(unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*8))
	}
}
