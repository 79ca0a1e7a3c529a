package modelcheck

import (
	"encoding/binary"
	"math/bits"
	"testing"
	"unsafe"

	"github.com/cespare/xxhash/v2"
)

// samePlain compares a state's own bytes and none past it: two equal
// states of 13 bytes (a word and five bytes), or of 5 (less than a word),
// each followed in memory by a different byte, are the same state.
func TestSamePlainReadsNoBytePastTheState(t *testing.T) {
	type odd struct {
		A [8]byte
		B [5]byte
	}
	if unsafe.Sizeof(odd{}) != 13 {
		t.Fatalf("odd has %d bytes", unsafe.Sizeof(odd{}))
	}
	var a, b [2]odd
	a[0].B[4], b[0].B[4] = 7, 7
	a[1].A[0], b[1].A[0] = 1, 2 // the byte after each state
	if !samePlain(&a[0], &b[0]) {
		t.Fatal("equal states whose next bytes in memory differ: samePlain says different")
	}
	var c, d [4][5]byte // 20 bytes: past a state of 5, the word load stays within the array
	c[0][4], d[0][4] = 7, 7
	c[1][0], d[1][0] = 1, 2
	if !samePlain(&c[0], &d[0]) {
		t.Fatal("equal states of 5 bytes whose next bytes in memory differ: samePlain says different")
	}
}

// The fingerprint of an input shorter than 32 bytes is its xxHash64
// (seed 0: fingerprint's seed prime5 is xxHash64's own addend for short
// inputs), and the high word of a 128-bit one is the xxHash64 from the
// seed that makes its start prime5^0x5851F42D4C957F2D: every length from
// 0 to 31 bytes takes the words, the 4-byte step and the single bytes in
// each of their combinations.
func TestFingerprintIsXXHash64OfShortInputs(t *testing.T) {
	start, add := uint64(prime5^0x5851F42D4C957F2D), uint64(prime5)
	hiSeed := start - add
	rnd := uint64(11)
	for n := 0; n < 32; n++ {
		for trial := 0; trial < 64; trial++ {
			b := make([]byte, n)
			for i := range b {
				rnd += 0x9E3779B97F4A7C15
				b[i] = byte(mix(rnd))
			}
			want := xxhash.Sum64(b)
			if want < minFP {
				continue
			}
			if got := fingerprint(b); got != want {
				t.Fatalf("%d bytes %x: fingerprint %#x, xxHash64 %#x", n, b, got, want)
			}
			d := xxhash.NewWithSeed(hiSeed)
			d.Write(b)
			if got, want := fingerprintHi(b), d.Sum64(); want >= minFP && got != want {
				t.Fatalf("%d bytes %x: fingerprintHi %#x, xxHash64 %#x", n, b, got, want)
			}
		}
	}
}

// preimage returns an input of 8 bytes whose hash, before fingerprint
// moves it off the marks of empty and closed slots, is h: each step of
// the hash of 8 bytes is a bijection of 64-bit words, taken back here.
func preimage(h uint64) []byte {
	inv := func(a uint64) uint64 { // a's inverse modulo 2^64 (a odd)
		x := a
		for range 6 {
			x *= 2 - a*x
		}
		return x
	}
	h ^= h >> 32
	h *= inv(prime3)
	h ^= h>>29 ^ h>>58
	h *= inv(prime2)
	h ^= h >> 33
	h = bits.RotateLeft64((h-prime4)*inv(prime1), -27)
	k := h ^ (prime5 + 8)
	k = bits.RotateLeft64(k*inv(prime1), -31) * inv(prime2)
	return binary.LittleEndian.AppendUint64(nil, k)
}

// A fingerprint is never 0 or 1, the marks of an empty and of a closed
// slot: a hash of 0 or 1 is moved up by minFP, to 2 or 3; a hash of 2,
// the least fingerprint, is kept as it is.
func TestFingerprintMovesOnlyTheMarks(t *testing.T) {
	for h, want := range map[uint64]uint64{0: minFP, 1: minFP + 1, minFP: minFP, 3: 3} {
		b := preimage(h)
		if xxhash.Sum64(b) != h {
			t.Fatalf("preimage of %d: xxHash64 %#x", h, xxhash.Sum64(b))
		}
		if got := fingerprint(b); got != want {
			t.Errorf("a hash of %d: fingerprint %d, want %d", h, got, want)
		}
	}
}
