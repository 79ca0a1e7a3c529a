package modelcheck

import "unsafe"

// wordHash fingerprints a plain state (see Plain) as the sum, modulo
// 2^64, of one mix per 8-byte word of the state, each mix keyed by the
// word's position. A sum can be updated: a successor's fingerprint is its
// parent's plus, for each word the step changed, the new word's mix less
// the old one's, so a step that changes two words of nine costs two
// mixes, not a hash of the whole state; and the comparison that finds the
// changed words finds the self-loops (no word changed) with it.
//
// Each mix is a bijection of the word (murmur3's fmix64 of the word xored
// with its position's key), so two states that differ in one word never
// share a fingerprint; states that differ in several words collide with
// probability about 2^-64 (the words' mixes are independent hashes).
// A state whose size is not a multiple of 8 has a last word that overlaps
// the one before it (its last 8 bytes); one shorter than 8 bytes is one
// word, zero-extended. Words are read little-endian on every
// architecture (load64).
type wordHash struct {
	size uintptr // the state's size in bytes
	full int     // words at offsets 0, 8, 16, ...
	// n is the number of words: full, and one more for a tail.
	n int
	// keys[0] keys the low word of the fingerprint, keys[1] the high one
	// (128-bit fingerprints).
	keys [2][]uint64
}

// newWordHash returns the hash of plain states of the given size.
func newWordHash(size uintptr) *wordHash {
	h := &wordHash{size: size, full: int(size / 8)}
	h.n = h.full
	if size%8 != 0 {
		h.n++
	}
	// The keys are splitmix64's sequence from two seeds: fixed, so a
	// fingerprint is the same in every run (checkpoints rely on it).
	for k, seed := range [2]uint64{prime5, prime5 ^ 0x5851F42D4C957F2D} {
		h.keys[k] = make([]uint64, h.n)
		for i := range h.keys[k] {
			seed += 0x9E3779B97F4A7C15
			z := seed
			z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
			z = (z ^ z>>27) * 0x94D049BB133111EB
			h.keys[k][i] = z ^ z>>31
		}
	}
	return h
}

// mixWord is murmur3's fmix64 of w^key: a bijection of w with full
// avalanche.
func mixWord(w, key uint64) uint64 {
	x := w ^ key
	x ^= x >> 33
	x *= 0xFF51AFD7ED558CCD
	x ^= x >> 33
	x *= 0xC4CEB9FE1A85EC53
	x ^= x >> 33
	return x
}

// word returns word i of the state at p.
func (h *wordHash) word(p unsafe.Pointer, i int) uint64 {
	switch {
	case i < h.full:
		return load64(p, uintptr(i)*8)
	case h.size >= 8:
		return load64(p, h.size-8)
	}
	var w uint64
	for k := uintptr(0); k < h.size; k++ {
		w |= uint64(*(*byte)(unsafe.Add(p, k))) << (8 * k)
	}
	return w
}

// finish turns a sum into a fingerprint: 0 and 1 mark empty and closed
// slots of the set (see minFP), so they become 2 and 3.
func finish(sum uint64) uint64 {
	if sum < minFP {
		sum += minFP
	}
	return sum
}

// sums returns the unfinished sums of the state at p: low and, when wide,
// high word.
func (h *wordHash) sums(p unsafe.Pointer, wide bool) (lo, hi uint64) {
	for i := 0; i < h.n; i++ {
		w := h.word(p, i)
		lo += mixWord(w, h.keys[0][i])
		if wide {
			hi += mixWord(w, h.keys[1][i])
		}
	}
	return lo, hi
}

// maxStepWords is the most words of a state whose successors step
// fingerprints from their parents'; larger states are fingerprinted whole.
const maxStepWords = 64

// parentHash is a state being expanded, as its successors' fingerprints
// start from it: its words, their mixes and their sums. Its arrays have a
// fixed size, so that indexing them needs no bounds check.
type parentHash struct {
	h    *wordHash
	wide bool
	// full and tail: the state's whole words, and the offset of its last
	// word when its size is over 8 and not a multiple of 8 (0: none).
	full  int
	tail  uintptr
	short bool // the state is shorter than a word
	words [maxStepWords]uint64
	mix   [2][maxStepWords]uint64
	sum   [2]uint64
}

// newParentHash returns the parent of successors fingerprinted with h, of
// at most maxStepWords words (checker.stepped).
func newParentHash(h *wordHash, wide bool) *parentHash {
	ph := &parentHash{h: h, wide: wide, full: h.full, short: h.size < 8}
	if h.n > h.full && !ph.short {
		ph.tail = h.size - 8
	}
	return ph
}

// reset makes the state at p the parent.
func (ph *parentHash) reset(p unsafe.Pointer) {
	h := ph.h
	ph.sum = [2]uint64{}
	for i := 0; i < h.n; i++ {
		w := h.word(p, i)
		ph.words[i&(maxStepWords-1)] = w
		m := mixWord(w, h.keys[0][i])
		ph.mix[0][i&(maxStepWords-1)] = m
		ph.sum[0] += m
		if ph.wide {
			m = mixWord(w, h.keys[1][i])
			ph.mix[1][i&(maxStepWords-1)] = m
			ph.sum[1] += m
		}
	}
}

// step returns the fingerprint of the successor at p (its words against
// the parent's), and whether the successor is the parent (no word
// differs).
func (ph *parentHash) step(p unsafe.Pointer) (fp, hi uint64, same bool) {
	if ph.wide || ph.short {
		return ph.stepAny(p)
	}
	lo := ph.sum[0]
	changed := false
	keys := ph.h.keys[0]
	for i := 0; i < ph.full; i++ {
		w := load64(p, uintptr(i)*8)
		if k := i & (maxStepWords - 1); w != ph.words[k] {
			changed = true
			lo += mixWord(w, keys[i]) - ph.mix[0][k]
		}
	}
	if ph.tail != 0 {
		i := ph.full
		if k := i & (maxStepWords - 1); load64(p, ph.tail) != ph.words[k] {
			changed = true
			lo += mixWord(load64(p, ph.tail), keys[i]) - ph.mix[0][k]
		}
	}
	return finish(lo), 0, !changed
}

// stepAny is step for 128-bit fingerprints and for states shorter than a
// word.
func (ph *parentHash) stepAny(p unsafe.Pointer) (fp, hi uint64, same bool) {
	h := ph.h
	lo, up := ph.sum[0], ph.sum[1]
	same = true
	for i := 0; i < h.n; i++ {
		k := i & (maxStepWords - 1)
		if w := h.word(p, i); w != ph.words[k] {
			same = false
			lo += mixWord(w, h.keys[0][i]) - ph.mix[0][k]
			if ph.wide {
				up += mixWord(w, h.keys[1][i]) - ph.mix[1][k]
			}
		}
	}
	if ph.wide {
		hi = finish(up)
	}
	return finish(lo), hi, same
}
