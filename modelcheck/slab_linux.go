//go:build linux

package modelcheck

import "syscall"

// mapSlab maps n bytes of anonymous memory with huge-page advice: the
// kernel then backs the slab with 2 MiB pages where it can, even when its
// transparent huge pages are enabled only on advice (the default of most
// distributions). Nil if the mapping fails: the caller falls back to the
// Go heap.
func mapSlab(n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil
	}
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE) // advice: refused, the slab still works
	return b
}

// unmapSlab returns a slab of mapSlab to the system.
func unmapSlab(b []byte) { _ = syscall.Munmap(b) }
