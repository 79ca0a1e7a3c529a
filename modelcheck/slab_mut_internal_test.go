package modelcheck

import "testing"

// An allocation that takes exactly what is left of the last slab is carved
// from it: no new slab is mapped until the rest is too small.
func TestArenaFillsItsSlabExactly(t *testing.T) {
	a := &arena{}
	defer a.drop()
	if a.alloc(slabBytes-128) == nil {
		t.Skip("no slab can be mapped here: the arena gives the heap")
	}
	a.alloc(128)
	if n := len(a.slabs); n != 1 {
		t.Fatalf("the slab filled exactly: %d slabs, want 1", n)
	}
	if len(a.rest) != 0 {
		t.Fatalf("%d bytes left, want 0", len(a.rest))
	}
	a.alloc(64)
	if n := len(a.slabs); n != 2 {
		t.Fatalf("an allocation past a full slab: %d slabs, want 2", n)
	}
}
