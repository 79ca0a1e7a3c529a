package eventservice

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"unsafe"
)

// table is a broker's published dispatchers by ID: an open-addressing
// hash table (linear probing, backward-shift deletion, so no tombstones).
// It exists instead of a Go map so that one probe does what a map needs
// two operations for: a registration looks its ID up once and keeps the
// free slot it found for the publish (see [table.find] and
// [table.insertAt]), and a removal finds and deletes its entry in the
// same probe ([table.deleteID]). A Go map also reseeds its hash with a
// random number whenever a delete empties it, which a broker whose
// dispatchers come and go does often.
//
// IDs are hashed with a random key per table by [strhash], the
// runtime's own fallback string hash (wyhash), inlined here because
// hash/maphash costs about twice as much for short IDs.
//
// A table is not safe for concurrent use; the broker guards it as it
// guarded its map (see [broker.loopLock]).
type table struct {
	key     [2]uint64 // strhash's random key
	slots   []slot    // len is a power of two, or 0
	n       int       // entries in use
	version uint64    // bumped by every delete and resize: a kept slot is stale
}

// slot is one entry of a table; d nil means free.
type slot struct {
	hash uint64
	d    *dispatcher
}

// hint is what find returns for a later insertAt or put: the slot it
// found (the entry's, or the free one where the ID would go) and the
// table's version then.
type hint struct {
	i       int
	hash    uint64
	version uint64
}

func newTable() table {
	return table{key: [2]uint64{rand.Uint64() | 1, rand.Uint64()}}
}

// strhash hashes s with key k: the structure of the Go runtime's
// memhashFallback (wyhash), which the runtime uses where AES hashing is
// unavailable, over a random per-table key.
func strhash(s string, k *[2]uint64) uint64 {
	const m5 = 0x1d8e4e27c47d124f
	n := len(s)
	p := unsafe.Slice(unsafe.StringData(s), n) // read only
	seed := k[0]
	var a, b uint64
	switch {
	case n == 0:
		return seed
	case n < 4:
		a = uint64(p[0]) | uint64(p[n>>1])<<8 | uint64(p[n-1])<<16
	case n <= 8:
		a = uint64(binary.LittleEndian.Uint32(p))
		b = uint64(binary.LittleEndian.Uint32(p[n-4:]))
	case n <= 16:
		a = binary.LittleEndian.Uint64(p)
		b = binary.LittleEndian.Uint64(p[n-8:])
	default:
		q := p
		for ; len(q) > 16; q = q[16:] {
			seed = mix(binary.LittleEndian.Uint64(q)^k[1], binary.LittleEndian.Uint64(q[8:])^seed)
		}
		a = binary.LittleEndian.Uint64(p[n-16:])
		b = binary.LittleEndian.Uint64(p[n-8:])
	}
	return mix(m5^uint64(n), mix(a^k[1], b^seed))
}

func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// len returns the number of entries.
func (t *table) len() int { return t.n }

// find returns the entry for id, or nil and a hint for insertAt.
func (t *table) find(id DispatcherID) (*dispatcher, hint) {
	h := strhash(string(id), &t.key)
	if len(t.slots) == 0 {
		return nil, hint{i: -1, hash: h}
	}
	// The load is at most 3/4: the probe ends at a free slot.
	mask := len(t.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.d == nil {
			return nil, hint{i: i, hash: h, version: t.version}
		}
		if s.hash == h && s.d.id == id {
			return s.d, hint{i: i, hash: h, version: t.version}
		}
	}
}

// get returns the entry for id, or nil.
func (t *table) get(id DispatcherID) *dispatcher {
	d, _ := t.find(id)
	return d
}

// putAt is put with the hint find returned for d.id: if the table has not
// changed since and find found no entry, d goes to the slot find kept,
// without a probe.
func (t *table) putAt(d *dispatcher, h hint) (replaced bool) {
	if h.i >= 0 && h.version == t.version && t.slots[h.i].d == nil && (t.n+1)*4 <= len(t.slots)*3 {
		t.slots[h.i] = slot{hash: h.hash, d: d}
		t.n++
		return false
	}
	return t.put(d)
}

// insertAt stores d, whose ID is not in t, with the hint find returned
// for it. If the table changed meanwhile (a delete or a resize), or it is
// too full, it probes again.
func (t *table) insertAt(d *dispatcher, h hint) {
	if (t.n+1)*4 > len(t.slots)*3 { // keep the load ≤ 3/4
		t.grow()
		h.i = -1
	}
	if h.i < 0 || h.version != t.version {
		h.i = t.free(h.hash)
	}
	t.slots[h.i] = slot{hash: h.hash, d: d}
	t.n++
}

// put stores d, replacing the entry for d.id if any; it reports whether
// it replaced one.
func (t *table) put(d *dispatcher) (replaced bool) {
	old, h := t.find(d.id)
	if old == nil {
		t.insertAt(d, h)
		return false
	}
	t.slots[h.i].d = d
	return true
}

// free returns the first free slot of hash's probe sequence.
func (t *table) free(hash uint64) int {
	mask := len(t.slots) - 1
	i := int(hash) & mask
	for t.slots[i].d != nil {
		i = (i + 1) & mask
	}
	return i
}

func (t *table) grow() {
	old := t.slots
	t.slots = make([]slot, max(8, 2*len(old)))
	t.version++
	for _, s := range old {
		if s.d != nil {
			t.slots[t.free(s.hash)] = s
		}
	}
}

// deleteID deletes the entry for id, if any, and returns it (nil if
// none); with want non-nil it deletes only an entry that is want itself.
func (t *table) deleteID(id DispatcherID, want *dispatcher) *dispatcher {
	if len(t.slots) == 0 {
		return nil
	}
	h := strhash(string(id), &t.key)
	mask := len(t.slots) - 1
	i := int(h) & mask
	for {
		s := &t.slots[i]
		if s.d == nil {
			return nil
		}
		if s.hash == h && s.d.id == id {
			break
		}
		i = (i + 1) & mask
	}
	d := t.slots[i].d
	if want != nil && d != want {
		return nil
	}
	// Backward-shift deletion: move later entries of the cluster back
	// into the hole when their home slot allows it.
	t.version++
	t.n--
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		s := t.slots[j]
		if s.d == nil {
			break
		}
		home := int(s.hash) & mask
		// s may move to i if i lies cyclically in [home, j).
		if (j-home)&mask >= (j-i)&mask {
			t.slots[i] = s
			i = j
		}
	}
	t.slots[i] = slot{}
	return d
}

// all calls yield for every entry, in no particular order.
func (t *table) all(yield func(*dispatcher)) {
	for _, s := range t.slots {
		if s.d != nil {
			yield(s.d)
		}
	}
}
