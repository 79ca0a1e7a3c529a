package modelcheck

import (
	"encoding/binary"
	"math/bits"
	"testing"
	"unsafe"
)

// avalanche flips each bit of 8 random inputs of every length from 1 to
// maxLen bytes and wants about half of the bits of each word that hash
// returns (for an input of that length) to change, for each input bit and
// on average.
func avalanche(t *testing.T, maxLen int, hash func(b []byte) [2]uint64) {
	t.Helper()
	rnd := uint64(7)
	for n := 1; n <= maxLen; n++ {
		b := make([]byte, n)
		total, flips := 0, 0
		for trial := 0; trial < 8; trial++ {
			for i := range b {
				rnd += 0x9E3779B97F4A7C15
				b[i] = byte(mix(rnd))
			}
			h0 := hash(b)
			for bit := 0; bit < 8*n; bit++ {
				b[bit/8] ^= 1 << (bit % 8)
				h := hash(b)
				b[bit/8] ^= 1 << (bit % 8)
				for w := range h {
					d := bits.OnesCount64(h0[w] ^ h[w])
					if d < 6 || d > 58 {
						t.Fatalf("length %d, bit %d: %d bits of word %d changed", n, bit, d, w)
					}
					total += d
					flips++
				}
			}
		}
		if avg := float64(total) / float64(flips); avg < 31 || avg > 33 {
			t.Errorf("length %d: %.2f fingerprint bits change per input bit, want about 32", n, avg)
		}
	}
}

// TestFingerprintAvalanche: every length from 1 to 160 bytes (whole
// words, the 4-byte step, single bytes), both seeds (the two words of a
// 128-bit fingerprint).
func TestFingerprintAvalanche(t *testing.T) {
	avalanche(t, 160, func(b []byte) [2]uint64 {
		return [2]uint64{fingerprintSeed(b, prime5), fingerprintSeed(b, prime5^0x5851F42D4C957F2D)}
	})
}

// structured hashes 2^21 state-like inputs of 68 bytes (small values in
// seven fields, one of them in the last 4 bytes, zeros elsewhere, as a
// model's states are) and wants, of each word hash returns, no two equal,
// nor equal in their low 32 bits more often than chance allows.
func structured(t *testing.T, hash func(b []byte) []uint64) {
	t.Helper()
	var seen []map[uint64]bool
	var low []map[uint32]int
	b := make([]byte, 68)
	for i := uint64(0); i < 1<<21; i++ {
		clear(b)
		// three bits of i in each field: bytes 0, 10, ..., 50 and 65
		for f := 0; f < 6; f++ {
			b[f*10] = byte(i >> (3 * f) & 7)
		}
		b[65] = byte(i >> 18 & 7)
		for w, h := range hash(b) {
			if w == len(seen) {
				seen = append(seen, make(map[uint64]bool, 1<<21))
				low = append(low, make(map[uint32]int, 1<<21))
			}
			if seen[w][h] {
				t.Fatalf("input %d: word %d %#x met before", i, w, h)
			}
			seen[w][h] = true
			low[w][uint32(h)]++
		}
	}
	// 2^21 values in 2^32 buckets: about 512 pairs expected.
	for w, m := range low {
		pairs := 0
		for _, k := range m {
			pairs += k * (k - 1) / 2
		}
		if pairs > 700 {
			t.Errorf("word %d: %d pairs share their low 32 bits, about 512 expected", w, pairs)
		}
	}
}

// TestFingerprintStructured: the fingerprint of encodings.
func TestFingerprintStructured(t *testing.T) {
	SkipInMutationCut(t)
	structured(t, func(b []byte) []uint64 { return []uint64{fingerprint(b)} })
}

// TestFingerprintBlockOrder wants the order of an input's 16-byte blocks
// to count: the 24 arrangements of four distinct blocks (in a 68-byte
// input, a plain state's size) have 24 fingerprints.
func TestFingerprintBlockOrder(t *testing.T) {
	var blocks [4][16]byte
	for i := range blocks {
		binary.LittleEndian.PutUint64(blocks[i][:], mix(uint64(i)))
		binary.LittleEndian.PutUint64(blocks[i][8:], mix(uint64(i+100)))
	}
	seen := map[uint64][]int{}
	permutations(4, func(p []int) {
		b := make([]byte, 0, 68)
		for _, i := range p {
			b = append(b, blocks[i][:]...)
		}
		b = append(b, 1, 2, 3, 4)
		h := fingerprint(b)
		if q, ok := seen[h]; ok {
			t.Fatalf("blocks in order %v and %v: same fingerprint", q, p)
		}
		seen[h] = append([]int(nil), p...)
	})
}

// permutations calls visit with every order of 0..n-1.
func permutations(n int, visit func(p []int)) {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	var permute func(k int)
	permute = func(k int) {
		if k == n {
			visit(p)
			return
		}
		for i := k; i < n; i++ {
			p[k], p[i] = p[i], p[k]
			permute(k + 1)
			p[k], p[i] = p[i], p[k]
		}
	}
	permute(0)
}

// samePlain finds a difference in any byte of a state, in its words and
// in its tail (13 bytes: one word and five bytes).
func TestSamePlainSeesEveryByte(t *testing.T) {
	type odd struct {
		A [8]byte
		B [5]byte
	}
	if unsafe.Sizeof(odd{}) != 13 {
		t.Fatalf("odd has %d bytes", unsafe.Sizeof(odd{}))
	}
	var a odd
	for i := 0; i < 13; i++ {
		b := a
		stateBytes(&b)[i] = 1
		if samePlain(&a, &b) {
			t.Fatalf("byte %d differs, samePlain says equal", i)
		}
		if !samePlain(&b, &b) {
			t.Fatalf("a state differs from itself")
		}
	}
}
