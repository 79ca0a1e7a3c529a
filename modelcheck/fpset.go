package modelcheck

import (
	"errors"
	"sync"
)

const (
	shardBits  = 8
	numShards  = 1 << shardBits
	chunkBits  = 12
	chunkSize  = 1 << chunkBits
	maxLocal   = 1<<(32-shardBits) - 1
	noParent   = ^uint32(0)
	minSlots   = 1 << 4
	loadFactor = 0.8
)

// errSetFull reports that one shard of the fingerprint set holds as many
// states as a 32-bit state reference can name (about four billion in all).
var errSetFull = errors.New("modelcheck: fingerprint set full (more than 2^32 states)")

// fpSet is the seen-set: a sharded open-addressing hash set of 64-bit
// fingerprints. Besides the set, each shard keeps a log of the states it
// admitted, in admission order: the state's fingerprint and a reference
// (shard, position) to the state it was first reached from. Counterexamples
// are rebuilt by following those references back to an initial state and
// replaying the model forwards, so no state is ever stored whole.
//
// Memory: 8 bytes per slot at a load between 0.4 and 0.8, plus 12 bytes of
// log per state: between 22 and 32 bytes per distinct state.
type fpSet struct {
	shards [numShards]fpShard
}

type fpShard struct {
	mu      sync.Mutex
	slots   []uint64
	n       int
	fps     [][]uint64
	parents [][]uint32
	_       [64]byte // keep neighbouring shards' locks off one cache line
}

// ref names a state in the log: the shard in the low bits, the position above.
type ref = uint32

// insert adds fp with the given parent, returning the new state's ref and
// true, or false if fp was already present.
func (s *fpSet) insert(fp uint64, parent ref) (ref, bool, error) {
	si := fp & (numShards - 1)
	sh := &s.shards[si]
	h := fp >> shardBits
	sh.mu.Lock()
	if sh.slots == nil {
		sh.slots = make([]uint64, minSlots)
	}
	mask := uint64(len(sh.slots) - 1)
	i := h & mask
	for {
		v := sh.slots[i]
		if v == fp {
			sh.mu.Unlock()
			return 0, false, nil
		}
		if v == 0 {
			break
		}
		i = (i + 1) & mask
	}
	if sh.n >= maxLocal {
		sh.mu.Unlock()
		return 0, false, errSetFull
	}
	sh.slots[i] = fp
	local := sh.n
	sh.n++
	c := local >> chunkBits
	if local&(chunkSize-1) == 0 {
		// The first chunk grows by appending, so small runs stay small;
		// later chunks are allocated whole and never copied.
		capacity := chunkSize
		if c == 0 {
			capacity = 16
		}
		sh.fps = append(sh.fps, make([]uint64, 0, capacity))
		sh.parents = append(sh.parents, make([]uint32, 0, capacity))
	}
	sh.fps[c] = append(sh.fps[c], fp)
	sh.parents[c] = append(sh.parents[c], parent)
	if float64(sh.n) > loadFactor*float64(len(sh.slots)) {
		sh.grow()
	}
	sh.mu.Unlock()
	return ref(local)<<shardBits | ref(si), true, nil
}

// contains reports whether fp is in the set.
func (s *fpSet) contains(fp uint64) bool {
	sh := &s.shards[fp&(numShards-1)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.slots == nil {
		return false
	}
	mask := uint64(len(sh.slots) - 1)
	for i := (fp >> shardBits) & mask; ; i = (i + 1) & mask {
		switch sh.slots[i] {
		case fp:
			return true
		case 0:
			return false
		}
	}
}

func (sh *fpShard) grow() {
	old := sh.slots
	sh.slots = make([]uint64, 2*len(old))
	mask := uint64(len(sh.slots) - 1)
	for _, v := range old {
		if v == 0 {
			continue
		}
		i := (v >> shardBits) & mask
		for sh.slots[i] != 0 {
			i = (i + 1) & mask
		}
		sh.slots[i] = v
	}
}

// entry returns the fingerprint and parent of the state r names.
func (s *fpSet) entry(r ref) (fp uint64, parent ref) {
	sh := &s.shards[r&(numShards-1)]
	local := int(r >> shardBits)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.fps[local>>chunkBits][local&(chunkSize-1)], sh.parents[local>>chunkBits][local&(chunkSize-1)]
}

// bytes returns the memory the set holds: slots and log chunks.
func (s *fpSet) bytes() int64 {
	var b int64
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		b += int64(len(sh.slots)) * 8
		for c := range sh.fps {
			b += int64(cap(sh.fps[c]))*8 + int64(cap(sh.parents[c]))*4
		}
		sh.mu.Unlock()
	}
	return b
}
