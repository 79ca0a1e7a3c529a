package modelcheck

import (
	"sync"
	"unsafe"
)

// slabBytes is the size of a slab, and slabMin the smallest table that is
// carved from one: smaller tables stay on the Go heap.
const (
	slabBytes = 64 << 20
	slabMin   = 32 << 10
)

// slab is a region of memory mapped with huge-page advice, from which the
// seen-set carves its larger tables one after the other. A random probe
// into a table on 4 KiB pages also misses the TLB; 2 MiB pages map the
// whole set with a few entries. The Go heap cannot be given that advice,
// and one table per shard is smaller than a huge page until about 3*10^7
// states, hence slabs shared by the shards' tables. Measured on the large
// model, the two binaries alternated four times: one worker 5.76-5.93 s of
// user CPU with slabs, 6.07-6.31 s without (the kernel's huge pages on for
// the whole process, as a bound: 5.43-5.71 s against 5.94-6.06 s). The
// cost is memory: a slab's pages stay with the process until every table
// carved from it is freed (peak RSS 261-279 MiB instead of 224-263 MiB).
type slab struct {
	mem  []byte
	used int // bytes carved so far
	// written is the most bytes ever carved: below it, memory given back
	// to the carving (release) holds old words, and is cleared when it
	// is carved again; above it the slab is as the kernel mapped it.
	written int
	live    int // bytes of tables carved and not yet freed
	// holes are the freed extents below used, in address order, none
	// adjacent to another: carved again before used grows, so a table
	// grown takes memory whose pages are in already.
	holes []extent
}

// extent is a run of a slab's bytes: off, and n bytes from there.
type extent struct{ off, n int }

// slabs carves tables from slabs, carves the extents of freed tables
// again, and unmaps a slab once every table carved from it is freed (the
// tables of a level's growth are freed together, at the reclaim after the
// level).
//
// A freed extent is carved again (and cleared) before fresh memory is:
// the first write to a fresh page faults, and on the virtual machines
// these runs are measured on a fault costs about 3 µs per 4 KiB page
// (0.35 GB/s; 0.7 GB/s in huge pages that the host backs afresh), against
// clearing memory already in at several GB/s. Growth doubles the tables,
// so a run allocates about twice its final tables' memory. Large model,
// one worker, 3 runs alternated: peak RSS 224-227 MiB instead of 247 MiB,
// system time 0.20-0.22 s instead of 0.26-0.52 s, wall 3.96-4.06 s
// instead of 3.98-4.37 s. (As a bound on what growth costs: tables made
// at their final size from the start took 3.58-3.74 s, 185 MiB; the
// holes seldom fit, since the tables freed together are scattered among
// live ones.)
type slabs struct {
	mu     sync.Mutex
	cur    *slab
	others []*slab // mapped slabs other than cur, with live tables
}

// alloc returns n zeroed words and the slab they came from (nil: the Go
// heap).
func (a *slabs) alloc(n int) ([]uint64, *slab) {
	bytes := 8 * n
	if bytes < slabMin {
		return make([]uint64, n), nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, sl := range append([]*slab{a.cur}, a.others...) {
		if sl == nil {
			continue
		}
		if off, ok := sl.reuse(bytes); ok {
			words := unsafe.Slice((*uint64)(unsafe.Pointer(&sl.mem[off])), n)
			clear(words)
			sl.live += bytes
			return words, sl
		}
	}
	if a.cur == nil || a.cur.used+bytes > len(a.cur.mem) {
		if a.cur != nil {
			if a.cur.live == 0 {
				unmapSlab(a.cur.mem)
				a.cur.mem = nil
			} else {
				a.others = append(a.others, a.cur)
			}
		}
		mem := mapSlab(max(slabBytes, bytes))
		if mem == nil {
			a.cur = nil
			return make([]uint64, n), nil
		}
		a.cur = &slab{mem: mem}
	}
	sl := a.cur
	words := unsafe.Slice((*uint64)(unsafe.Pointer(&sl.mem[sl.used])), n)
	if sl.used < sl.written {
		clear(words[:min(n, (sl.written-sl.used)/8)])
	}
	sl.used += bytes
	sl.written = max(sl.written, sl.used)
	sl.live += bytes
	return words, sl
}

// reuse carves bytes from the first hole that holds them, and returns
// their offset.
func (sl *slab) reuse(bytes int) (int, bool) {
	for i, h := range sl.holes {
		if h.n < bytes {
			continue
		}
		if h.n == bytes {
			sl.holes = append(sl.holes[:i], sl.holes[i+1:]...)
		} else {
			sl.holes[i] = extent{h.off + bytes, h.n - bytes}
		}
		return h.off, true
	}
	return 0, false
}

// release makes the extent e of sl a hole, joined with the holes next to
// it; a hole that reaches used gives its bytes back to the carving.
func (sl *slab) release(e extent) {
	i := 0
	for i < len(sl.holes) && sl.holes[i].off < e.off {
		i++
	}
	sl.holes = append(sl.holes, extent{})
	copy(sl.holes[i+1:], sl.holes[i:])
	sl.holes[i] = e
	if i+1 < len(sl.holes) && e.off+e.n == sl.holes[i+1].off { // join the next
		sl.holes[i].n += sl.holes[i+1].n
		sl.holes = append(sl.holes[:i+1], sl.holes[i+2:]...)
	}
	if i > 0 && sl.holes[i-1].off+sl.holes[i-1].n == sl.holes[i].off { // join the previous
		sl.holes[i-1].n += sl.holes[i].n
		sl.holes = append(sl.holes[:i], sl.holes[i+1:]...)
	}
	if last := sl.holes[len(sl.holes)-1]; last.off+last.n == sl.used {
		sl.used = last.off
		sl.holes = sl.holes[:len(sl.holes)-1]
	}
}

// free gives back the words carved from sl (nil: the Go heap's, left to
// the collector). It must run while no goroutine reads them.
func (a *slabs) free(sl *slab, words []uint64) {
	if sl == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	bytes := 8 * len(words)
	sl.live -= bytes
	if sl.live == 0 && sl != a.cur {
		unmapSlab(sl.mem)
		sl.mem, sl.holes = nil, nil
		for i, o := range a.others {
			if o == sl {
				a.others = append(a.others[:i], a.others[i+1:]...)
				break
			}
		}
		return
	}
	off := int(uintptr(unsafe.Pointer(&words[0])) - uintptr(unsafe.Pointer(&sl.mem[0])))
	sl.release(extent{off, bytes})
}

// drop unmaps the current slab if no table is carved from it any more
// (the set released every table).
func (a *slabs) drop() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cur != nil && a.cur.live == 0 {
		unmapSlab(a.cur.mem)
		a.cur.mem, a.cur = nil, nil
	}
}

// arena hands out memory that lives until drop, carved piece after piece
// from slabs mapped with huge-page advice: the seen-set's log chunks and,
// for plain states, the level queues' blocks, both written once from
// start to end. From the Go heap their pages were faulted in 4 KiB at a
// time, and a page fault is dear on a virtual machine: with the log and
// the blocks on the heap they took three quarters of the large model's
// 24,700 page faults (perf record -e page-faults). Large model, 4 runs
// alternated: 1 worker 5.56-5.80 s wall, 5.91-6.12 s from the heap; 2
// workers 3.26-3.34 s, 3.42-3.49 s; 3,200-4,300 page faults; peak RSS
// 241-243 MiB instead of 229-236.
type arena struct {
	mu    sync.Mutex
	slabs [][]byte
	rest  []byte // what is left of the last slab
}

// alloc returns n zeroed bytes aligned to 64, or nil where no slab can be
// mapped (the caller then uses the Go heap). a may be nil.
func (a *arena) alloc(n int) unsafe.Pointer {
	if a == nil {
		return nil
	}
	n = (n + 63) &^ 63
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.rest) < n {
		mem := mapSlab(max(slabBytes, n))
		if mem == nil {
			return nil
		}
		a.slabs = append(a.slabs, mem)
		a.rest = mem
	}
	p := unsafe.Pointer(&a.rest[0])
	a.rest = a.rest[n:]
	return p
}

// arenaSlice returns an empty slice of capacity n carved from a, or nil
// where a has no memory to give (a may be nil); the caller then uses the
// Go heap. T must hold no pointers: the collector does not look into a.
func arenaSlice[T any](a *arena, n int) []T {
	p := a.alloc(n * int(unsafe.Sizeof(*new(T))))
	if p == nil {
		return nil
	}
	return unsafe.Slice((*T)(p), n)[:0]
}

// drop unmaps every slab. Nothing carved from them may be used after.
func (a *arena) drop() {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, mem := range a.slabs {
		unmapSlab(mem)
	}
	a.slabs, a.rest = nil, nil
}
