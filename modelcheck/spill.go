package modelcheck

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"unsafe"
)

// The seen-set past memory (Options.SpillDir). When the set and the queue
// pass half the memory budget at the end of a level, the set moves to
// disk (spillOut): the fingerprints of the tables are merged into one
// sorted file, the run, and the tables start again empty; the full chunks
// of the workers' logs are appended to a file per worker and leave
// memory. What stays in memory is the run's index (one fingerprint in
// spillStride, about 0.02 bytes a state), the logs' last chunks and the
// tables of the states found since the last spill.
//
// A successor missing from the tables is looked up in the run before it
// is claimed (spilledClaim). The run is mapped, and read through the page
// cache: sorted lookups (LookupSorted) meet the run's fingerprints in
// ascending order, as the batch's misses are, so neighbouring lookups read
// the same pages. The run is rewritten whole at each spill (a pass over
// the part of the set on disk), and a spill is taken only when the set in
// memory has filled its half of the budget again, so the passes are as
// few as the budget allows. Only 64-bit fingerprints are spilled: a
// 128-bit set stops at its budget as before.

// spill is the part of a seen-set moved to disk.
type spill struct {
	dir string // the set's own folder, removed by close
	gen int    // how many runs were written (the run's file name)
	// run is the run file mapped: each shard's fingerprints in ascending
	// order, shard after shard; shard k's are run[off[k]:off[k+1]].
	run     []uint64
	runMap  []byte
	off     [numShards + 1]int
	logs    []*os.File // logs[w]: worker w's spilled log chunks
	logEnd  []int64    // the end of each log file
	spills  int
	runSize int64
}

// newSpill creates a folder for a set's files inside dir.
func newSpill(dir string, workers int) (*spill, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	own, err := os.MkdirTemp(dir, "modelcheck-spill-")
	if err != nil {
		return nil, err
	}
	return &spill{dir: own, logs: make([]*os.File, workers), logEnd: make([]int64, workers)}, nil
}

// contains reports whether fp is in the run. A shard's fingerprints are
// spread evenly over their range (they are hashes), so fp's place in the
// shard is about its share of the range: contains starts there and
// gallops to the place, touching a line or two where a binary search
// touches a dozen.
func (sp *spill) contains(fp uint64) bool {
	k := fp & (numShards - 1)
	seg := sp.run[sp.off[k]:sp.off[k+1]]
	n := len(seg)
	if n == 0 {
		return false
	}
	g, _ := bits.Mul64(fp, uint64(n)) // fp's share of the range, times n
	i := int(g)
	if seg[i] == fp {
		return true
	}
	// Gallop from i towards fp to a bracket (lo, hi] then search it.
	lo, hi := i, i
	if seg[i] < fp {
		for step := 1; ; step *= 2 {
			lo, hi = hi, i+step
			if hi >= n {
				hi = n - 1
				break
			}
			if seg[hi] >= fp {
				break
			}
		}
	} else {
		for step := 1; ; step *= 2 {
			hi, lo = lo, i-step
			if lo < 0 {
				lo = -1
				break
			}
			if seg[lo] < fp {
				break
			}
		}
	}
	_, found := slices.BinarySearch(seg[lo+1:hi+1], fp)
	return found
}

// disk returns the bytes the set holds on disk.
func (sp *spill) disk() int64 {
	b := sp.runSize
	for _, e := range sp.logEnd {
		b += e
	}
	return b
}

// close unmaps the run and removes the set's folder.
func (sp *spill) close() error {
	sp.unmapRun()
	for _, f := range sp.logs {
		if f != nil {
			f.Close()
		}
	}
	return os.RemoveAll(sp.dir)
}

func (sp *spill) unmapRun() {
	if sp.runMap != nil {
		unmapFile(sp.runMap)
	}
	sp.run, sp.runMap = nil, nil
}

// spilledClaim is claim64 in a set with a run on disk: a fingerprint
// missing from the tables is new only if the run lacks it too.
func (s *fpSet) spilledClaim(fp uint64, w int) bool {
	if s.lookup64(fp) || s.spill.contains(fp) {
		return false
	}
	return s.claim64(fp, w)
}

// lookup64 reports whether fp is in the tables of a 64-bit set.
func (s *fpSet) lookup64(fp uint64) bool {
	t := s.tabs[fp&(numShards-1)].Load()
	if t == nil {
		return false
	}
	mask := uint64(len(t.slots) - 1)
	for i := t.home(fp); ; i = (i + 1) & mask {
		switch atomic.LoadUint64(&t.slots[i]) {
		case fp:
			return true
		case 0, closed:
			// closed: growing, and not copied yet; the fingerprints of
			// the old table are all before its closed slots in a probe.
			return false
		}
	}
}

// spillOut moves the tables into the run and the logs' full chunks into
// their files. It must run while no worker inserts.
func (s *fpSet) spillOut() error {
	if s.spill == nil {
		sp, err := newSpill(s.spillDir, len(s.logs))
		if err != nil {
			return err
		}
		s.spill = sp
	}
	sp := s.spill
	s.reclaim()
	name := filepath.Join(sp.dir, fmt.Sprintf("run-%d", sp.gen+1))
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var off [numShards + 1]int
	var fresh []uint64
	n := 0
	word := make([]byte, 8)
	put := func(v uint64) error {
		n++
		binary.LittleEndian.PutUint64(word, v)
		_, err := w.Write(word)
		return err
	}
	for k := 0; k < numShards; k++ {
		off[k] = n
		fresh = fresh[:0]
		if t := s.tabs[k].Load(); t != nil {
			for _, v := range t.slots {
				if v >= minFP {
					fresh = append(fresh, v)
				}
			}
		}
		slices.Sort(fresh)
		var old []uint64
		if sp.run != nil {
			old = sp.run[sp.off[k]:sp.off[k+1]]
		}
		i, j := 0, 0
		for i < len(old) || j < len(fresh) {
			var v uint64
			if j == len(fresh) || (i < len(old) && old[i] < fresh[j]) {
				v, i = old[i], i+1
			} else {
				v, j = fresh[j], j+1
			}
			if err := put(v); err != nil {
				f.Close()
				return err
			}
		}
	}
	off[numShards] = n
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	m, err := mapFile(name, n*8)
	if err != nil {
		return err
	}
	sp.unmapRun()
	if sp.gen > 0 {
		os.Remove(filepath.Join(sp.dir, fmt.Sprintf("run-%d", sp.gen)))
	}
	sp.gen++
	sp.runMap = m
	if n > 0 {
		sp.run = unsafe.Slice((*uint64)(unsafe.Pointer(&m[0])), n)
	}
	sp.off, sp.runSize = off, int64(n)*8
	for k := range s.tabs {
		if t := s.tabs[k].Swap(nil); t != nil {
			s.freeTable(t)
		}
		s.shards[k].n = 0
	}
	for w := range s.counts {
		c := &s.counts[w]
		clear(c.own[:])
		for k := range c.n {
			c.n[k].Store(0)
		}
	}
	if err := s.spillLogs(); err != nil {
		return err
	}
	sp.spills++
	debug.FreeOSMemory() // the tables and the chunks just dropped
	return nil
}

// spillLogs appends every full chunk of the logs still in memory to its
// worker's log file.
func (s *fpSet) spillLogs() error {
	sp := s.spill
	for w := range s.logs {
		lg := &s.logs[w]
		for c := range lg.fps {
			if len(lg.fps[c]) < chunkSize {
				continue
			}
			if sp.logs[w] == nil {
				f, err := os.Create(filepath.Join(sp.dir, fmt.Sprintf("log-%d", w)))
				if err != nil {
					return err
				}
				sp.logs[w] = f
			}
			buf := make([]byte, 0, chunkSize*12)
			for _, v := range lg.fps[c] {
				buf = binary.LittleEndian.AppendUint64(buf, v)
			}
			for _, v := range lg.parents[c] {
				buf = binary.LittleEndian.AppendUint32(buf, v)
			}
			if _, err := sp.logs[w].WriteAt(buf, sp.logEnd[w]); err != nil {
				return err
			}
			for len(lg.at) <= c {
				lg.at = append(lg.at, -1)
			}
			lg.at[c] = sp.logEnd[w]
			sp.logEnd[w] += int64(len(buf))
			s.mem.Add(-int64(chunkSize * 12))
			lg.fps[c], lg.parents[c] = nil, nil
		}
	}
	return nil
}

// spilledChunk reads chunk c of worker w's log back from its file.
func (s *fpSet) spilledChunk(w, c int) (fps []uint64, parents []uint32, err error) {
	lg := &s.logs[w]
	buf := make([]byte, chunkSize*12)
	if _, err := s.spill.logs[w].ReadAt(buf, lg.at[c]); err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, err
	}
	fps, parents = make([]uint64, chunkSize), make([]uint32, chunkSize)
	for i := range fps {
		fps[i] = binary.LittleEndian.Uint64(buf[8*i:])
		parents[i] = binary.LittleEndian.Uint32(buf[8*chunkSize+4*i:])
	}
	return fps, parents, nil
}

// spilledEntry reads entry i of chunk c of worker w's log from its file.
func (s *fpSet) spilledEntry(w, c, i int) (fp uint64, parent ref) {
	var b [8]byte
	f, at := s.spill.logs[w], s.logs[w].at[c]
	if _, err := f.ReadAt(b[:], at+int64(8*i)); err != nil {
		panic(fmt.Sprintf("modelcheck: reading the spilled log: %v", err))
	}
	fp = binary.LittleEndian.Uint64(b[:])
	if _, err := f.ReadAt(b[:4], at+int64(8*chunkSize+4*i)); err != nil {
		panic(fmt.Sprintf("modelcheck: reading the spilled log: %v", err))
	}
	return fp, binary.LittleEndian.Uint32(b[:4])
}
