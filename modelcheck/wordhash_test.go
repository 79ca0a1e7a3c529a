package modelcheck

import (
	"testing"
	"unsafe"
)

// plainFP is the fingerprint of the plain state b (64 and 128 bits).
func plainFP(h *wordHash, b []byte) (lo, hi uint64) {
	l, u := h.sums(unsafe.Pointer(&b[0]), true)
	return finish(l), finish(u)
}

// TestWordHashAvalanche: states of every size from 1 to 96 bytes, both
// words of the fingerprint.
func TestWordHashAvalanche(t *testing.T) {
	hashes := map[int]*wordHash{}
	avalanche(t, 96, func(b []byte) [2]uint64 {
		h := hashes[len(b)]
		if h == nil {
			h = newWordHash(uintptr(len(b)))
			hashes[len(b)] = h
		}
		lo, hi := plainFP(h, b)
		return [2]uint64{lo, hi}
	})
}

// TestWordHashStructured: both words of a plain state's fingerprint.
func TestWordHashStructured(t *testing.T) {
	SkipInMutationCut(t)
	h := newWordHash(68)
	structured(t, func(b []byte) []uint64 {
		lo, hi := plainFP(h, b)
		return []uint64{lo, hi}
	})
}

// TestWordHashWordOrder wants the position of a word to count: the 120
// arrangements of five distinct words in a 40-byte state have 120
// fingerprints, and so have their low words.
func TestWordHashWordOrder(t *testing.T) {
	h := newWordHash(40)
	seen := map[uint64][]int{}
	permutations(5, func(p []int) {
		b := make([]byte, 40)
		for slot, w := range p {
			b[slot*8] = byte(w + 1)
		}
		lo, _ := plainFP(h, b)
		if q, ok := seen[lo]; ok {
			t.Fatalf("words in order %v and %v: same fingerprint", q, p)
		}
		seen[lo] = append([]int(nil), p...)
	})
}

// TestStepMatchesWholeHash: a successor's fingerprint computed from its
// parent's (parentHash.step) is the one its own words give, at every size
// (whole words, a tail of 1 to 7 bytes, states shorter than a word) and
// for changes in any byte, the tail's included; and step finds the
// self-loops, and only them.
func TestStepMatchesWholeHash(t *testing.T) {
	rnd := uint64(3)
	next := func() uint64 {
		rnd += 0x9E3779B97F4A7C15
		return mix(rnd)
	}
	for n := 1; n <= 80; n++ {
		h := newWordHash(uintptr(n))
		for _, wide := range []bool{false, true} {
			ph := newParentHash(h, wide)
			parent, succ := make([]byte, n), make([]byte, n)
			for trial := 0; trial < 200; trial++ {
				for i := range parent {
					parent[i] = byte(next() % 4) // small values, as states hold
				}
				ph.reset(unsafe.Pointer(&parent[0]))
				for k := 0; k < 4; k++ {
					copy(succ, parent)
					changes := int(next() % 4) // 0 to 3 bytes changed
					if k == 0 {
						changes = 1
					}
					for c := 0; c < changes; c++ {
						i := int(next() % uint64(n))
						if k == 0 {
							i = n - 1 - trial%min(n, 8) // the last bytes: the tail
						}
						succ[i] = byte(next() % 4)
					}
					fp, hi, same := ph.step(unsafe.Pointer(&succ[0]))
					lo, up := plainFP(h, succ)
					if !wide {
						up = 0
					}
					if fp != lo || hi != up {
						t.Fatalf("size %d, wide %v: step gives %#x/%#x, the whole state %#x/%#x", n, wide, fp, hi, lo, up)
					}
					if eq := string(succ) == string(parent); same != eq {
						t.Fatalf("size %d, wide %v: step says same=%v, bytes equal %v", n, wide, same, eq)
					}
				}
			}
		}
	}
}
