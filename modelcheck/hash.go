package modelcheck

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"reflect"
	"unsafe"
)

// Fingerprint constants (the 64-bit primes of xxHash64).
const (
	prime1 = 0x9E3779B185EBCA87
	prime2 = 0xC2B2AE3D27D4EB4F
	prime3 = 0x165667B19E3779F9
	prime4 = 0x85EBCA77C2B2AE63
	prime5 = 0x27D4EB2F165667C5
)

// fingerprint hashes a state encoding to 64 bits. It is the xxHash64
// construction for inputs shorter than 32 bytes, applied to any length
// (the 32-byte stripes of xxHash64 buy nothing for state-sized inputs), so
// it mixes every byte with a full avalanche. Zero and one are never
// returned: the fingerprint set uses them to mark empty and closed slots
// (see minFP).
func fingerprint(b []byte) uint64 { return fingerprintSeed(b, prime5) }

// fingerprintHi is the high word of a 128-bit fingerprint: the same
// construction from another seed, so the two words are independent
// hashes of the encoding.
func fingerprintHi(b []byte) uint64 { return fingerprintSeed(b, prime5^0x5851F42D4C957F2D) }

// stateBytes is the memory of a plain state (see Plain), to fingerprint.
func stateBytes[S any](s *S) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(s)), unsafe.Sizeof(*s))
}

// samePlain reports whether the plain states a and b have the same bytes,
// a word at a time (load64): at a state's size, bytes.Equal's call costs
// more than the comparison.
func samePlain[S any](a, b *S) bool {
	n := unsafe.Sizeof(*a)
	pa, pb := unsafe.Pointer(a), unsafe.Pointer(b)
	var diff uint64
	i := uintptr(0)
	for ; i+8 <= n; i += 8 {
		diff |= load64(pa, i) ^ load64(pb, i)
	}
	for ; i < n; i++ {
		diff |= uint64(*(*byte)(unsafe.Add(pa, i)) ^ *(*byte)(unsafe.Add(pb, i)))
	}
	return diff == 0
}

// checkPlain returns an error unless t is plain: booleans, integers, and
// arrays and structs of them, with no padding, so that equal values have
// equal bytes.
func checkPlain(t reflect.Type) error {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return nil
	case reflect.Array:
		return checkPlain(t.Elem())
	case reflect.Struct:
		next := uintptr(0)
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Offset != next || f.Name == "_" {
				return fmt.Errorf("%s has padding or a blank field before %s", t, f.Name)
			}
			if err := checkPlain(f.Type); err != nil {
				return err
			}
			next = f.Offset + f.Type.Size()
		}
		if next != t.Size() {
			return fmt.Errorf("%s has padding at its end", t)
		}
		return nil
	}
	return fmt.Errorf("%s is a %s, not a boolean, an integer, an array or a struct", t, t.Kind())
}

func fingerprintSeed(b []byte, seed uint64) uint64 {
	h := seed + uint64(len(b))
	for len(b) >= 8 {
		k := binary.LittleEndian.Uint64(b)
		k *= prime2
		k = bits.RotateLeft64(k, 31)
		k *= prime1
		h ^= k
		h = bits.RotateLeft64(h, 27)*prime1 + prime4
		b = b[8:]
	}
	if len(b) >= 4 {
		h ^= uint64(binary.LittleEndian.Uint32(b)) * prime1
		h = bits.RotateLeft64(h, 23)*prime2 + prime3
		b = b[4:]
	}
	for _, c := range b {
		h ^= uint64(c) * prime5
		h = bits.RotateLeft64(h, 11) * prime1
	}
	h ^= h >> 33
	h *= prime2
	h ^= h >> 29
	h *= prime3
	h ^= h >> 32
	if h < minFP {
		h += minFP // 0 marks an empty slot, 1 a slot closed by growth
	}
	return h
}

// CollisionProbability is TLC's optimistic estimate of the probability
// that two distinct states shared a 64-bit fingerprint in a run that
// generated generated states of which distinct were new:
// distinct*(generated-distinct)/2^64.
func CollisionProbability(distinct, generated int64) float64 {
	return CollisionProbabilityBits(distinct, generated, 64)
}

// CollisionProbabilityBits is CollisionProbability for fingerprints of
// the given number of bits: distinct*(generated-distinct)/2^bits.
func CollisionProbabilityBits(distinct, generated int64, bits int) float64 {
	if generated < distinct {
		generated = distinct
	}
	return float64(distinct) * float64(generated-distinct) / math.Ldexp(1, bits)
}
