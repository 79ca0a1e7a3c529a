package modelcheck

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"
	"unsafe"
)

// A checkpoint is written at the end of a level (Options.CheckpointDir),
// at most every Options.CheckpointEvery: the seen-set's logs (fingerprint
// and parent of every state), the states of the next level, and the
// figures so far. Recovering (Options.Recover) rebuilds the set from the
// logs and resumes with that level, so a run killed half-way ends with the
// figures of an uninterrupted one. The file is written beside the old one
// and renamed over it, so a kill while writing leaves the previous
// checkpoint whole.

// checkpointFile is the checkpoint's name inside its folder.
const checkpointFile = "checkpoint.bin"

// checkpointMagic starts every checkpoint file (the format's version).
const checkpointMagic = "drainproof-checkpoint-2\n"

// ErrCheckpoint is wrapped by the errors of reading a checkpoint that
// does not belong to this run (another model or other options) or is
// damaged.
var ErrCheckpoint = errors.New("modelcheck: unusable checkpoint")

// checkpointHeader is the fixed part of a checkpoint.
type checkpointHeader struct {
	Key                 uint64 // the model and the options that shape the search
	Level               int    // the level the frontier is (its states are not expanded yet)
	Distinct, Generated int64
	Depth               int64
	Wide                bool
	Workers             int // the workers whose logs follow
	LogLens             []int
	Frontier            int
	RawStates           bool // frontier states as raw bytes, else gob
}

// checkpointKey identifies what a checkpoint may resume: the encodings of
// the initial states and their successors, Options.CheckpointID and the
// options that change the search.
func (c *checker[S]) checkpointKey() uint64 {
	var b []byte
	c.m.Init(func(s S) {
		b = append(c.m.Encode(b, s), 0xff)
		c.m.Next(s, func(a string, t S) { b = append(c.m.Encode(append(b, a...), t), 0xfe) })
	})
	o := c.opts
	b = fmt.Appendf(b, "%q|%v|%v|%v|%v|%v|%v|%v|%v|%v|%d", o.CheckpointID, c.inv, c.acts, c.lives, o.CheckDeadlock, o.Continue,
		o.UseConstraint, o.UseView, o.UseSymmetry, c.set.wide, o.MaxDepth)
	return fingerprint(b)
}

// rawType reports whether values of t can be written as their memory:
// no pointers, strings, slices, maps, interfaces, channels or functions.
func rawType(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	case reflect.Array:
		return rawType(t.Elem())
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if !rawType(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
}

// writeCheckpoint saves the search before it expands level, whose states
// are cur.
func (c *checker[S]) writeCheckpoint(level int, cur *blocks[S]) error {
	dir := c.opts.CheckpointDir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var zero S
	h := checkpointHeader{
		Key: c.checkpointKey(), Level: level, Distinct: c.distinct.Load(), Generated: c.generated.Load(),
		Depth: c.depth.Load(), Wide: c.set.wide, Workers: len(c.set.logs), Frontier: cur.len(),
		RawStates: rawType(reflect.TypeOf(zero)),
	}
	for i := range c.set.logs {
		h.LogLens = append(h.LogLens, c.set.logs[i].n)
	}
	tmp, err := os.CreateTemp(dir, checkpointFile+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	w := bufio.NewWriterSize(tmp, 1<<20)
	enc := gob.NewEncoder(w)
	if _, err := io.WriteString(w, checkpointMagic); err != nil {
		return err
	}
	if err := enc.Encode(h); err != nil {
		return err
	}
	words := func(xs []uint64) error { return binary.Write(w, binary.LittleEndian, xs) }
	for i := range c.set.logs {
		lg := &c.set.logs[i]
		for k := range lg.fps {
			fps, parents := lg.fps[k], lg.parents[k]
			if fps == nil { // spilled
				if fps, parents, err = c.set.spilledChunk(i, k); err != nil {
					return err
				}
			}
			if err := words(fps); err != nil {
				return err
			}
			if err := binary.Write(w, binary.LittleEndian, parents); err != nil {
				return err
			}
			if h.Wide {
				if err := words(lg.his[k]); err != nil {
					return err
				}
			}
		}
	}
	// The queue's blocks on disk are read into a scratch block, and stay
	// on disk for the search.
	err = c.eachBlock(cur, func(blk []entry[S]) error {
		for _, e := range blk {
			if err := binary.Write(w, binary.LittleEndian, e.r); err != nil {
				return err
			}
			if h.RawStates {
				if _, err := w.Write(unsafe.Slice((*byte)(unsafe.Pointer(&e.s)), unsafe.Sizeof(e.s))); err != nil {
					return err
				}
			} else if err := enc.Encode(&e.s); err != nil {
				return fmt.Errorf("modelcheck: cannot checkpoint a state of type %T: %w", e.s, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, checkpointFile))
}

// readCheckpoint loads the checkpoint in dir into c (whose set is empty)
// and returns the level to resume with and its states.
func (c *checker[S]) readCheckpoint(dir string) (int, *blocks[S], error) {
	path := filepath.Join(dir, checkpointFile)
	f, err := os.Open(path)
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrCheckpoint, path, fmt.Sprintf(format, a...))
	}
	r := bufio.NewReaderSize(f, 1<<20)
	magic := make([]byte, len(checkpointMagic))
	if _, err := io.ReadFull(r, magic); err != nil || !bytes.Equal(magic, []byte(checkpointMagic)) {
		return 0, nil, bad("not a checkpoint of this checker")
	}
	dec := gob.NewDecoder(r)
	var h checkpointHeader
	if err := dec.Decode(&h); err != nil {
		return 0, nil, bad("%v", err)
	}
	if h.Key != c.checkpointKey() {
		return 0, nil, bad("it was written for another model or other options (invariants, properties, constraints, view, symmetry, fingerprints, depth limit)")
	}
	if h.Wide != c.set.wide || h.Workers != len(h.LogLens) || h.Workers < 1 {
		return 0, nil, bad("inconsistent header")
	}
	// The logs are loaded in the order they were written; old worker k's
	// states go to worker k mod the new number of workers, after those of
	// the old workers already loaded there, and refs are translated.
	oldBits := uint(0)
	for 1<<oldBits < h.Workers {
		oldBits++
	}
	base := make([]int, h.Workers)
	filled := make([]int, len(c.set.logs))
	for k, n := range h.LogLens {
		base[k] = filled[k%len(filled)]
		filled[k%len(filled)] += n
	}
	translate := func(old ref) (ref, error) {
		if old == noParent {
			return noParent, nil
		}
		k, local := int(old&(1<<oldBits-1)), int(old>>oldBits)
		if k >= h.Workers || local >= h.LogLens[k] {
			return 0, bad("a reference points outside the logs")
		}
		return ref(base[k]+local)<<c.set.wbits | ref(k%len(c.set.logs)), nil
	}
	if err := c.loadLogs(r, &h, translate, bad); err != nil {
		return 0, nil, err
	}
	cur, err := c.loadFrontier(r, dec, &h, translate, bad)
	if err != nil {
		return 0, nil, err
	}
	c.distinct.Store(h.Distinct)
	c.generated.Store(h.Generated)
	c.depth.Store(h.Depth)
	c.queue.Store(int64(cur.len()))
	return h.Level, cur, nil
}

// loadLogs reads the logs of a checkpoint into the set, translating the
// parents' refs.
func (c *checker[S]) loadLogs(r io.Reader, h *checkpointHeader, translate func(ref) (ref, error), bad func(string, ...any) error) error {
	for k, n := range h.LogLens {
		w := k % len(c.set.logs)
		for done := 0; done < n; {
			m := min(chunkSize, n-done) // the log's chunks, as written
			fps, parents := make([]uint64, m), make([]uint32, m)
			his := make([]uint64, m)
			if err := binary.Read(r, binary.LittleEndian, fps); err != nil {
				return bad("logs: %v", err)
			}
			if err := binary.Read(r, binary.LittleEndian, parents); err != nil {
				return bad("logs: %v", err)
			}
			if h.Wide {
				if err := binary.Read(r, binary.LittleEndian, his); err != nil {
					return bad("logs: %v", err)
				}
			}
			for i := range fps {
				p, err := translate(parents[i])
				if err != nil {
					return err
				}
				if err := c.set.load(fps[i], his[i], p, w); err != nil {
					return err
				}
			}
			done += m
			if c.set.spillDir != "" && c.opts.MemoryBudget > 0 && c.set.mem.Load() > c.opts.MemoryBudget/2 {
				if err := c.set.spillOut(); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// loadFrontier reads the states of the level to expand next, moving its
// full blocks to disk past the queue's share of the memory budget.
func (c *checker[S]) loadFrontier(r io.Reader, dec *gob.Decoder, h *checkpointHeader, translate func(ref) (ref, error), bad func(string, ...any) error) (*blocks[S], error) {
	cur := &blocks[S]{pool: &c.pool}
	for i := 0; i < h.Frontier; i++ {
		if c.q != nil && i%blockSize == 0 && c.queueBytes() > c.queueCap {
			// A frontier past the queue's share of the budget is
			// spilled as it loads, as the search would have.
			if err := c.spillBlocks(cur); err != nil {
				return nil, fmt.Errorf("modelcheck: spilling the queue to %s: %w", c.opts.SpillDir, err)
			}
		}
		var old ref
		if err := binary.Read(r, binary.LittleEndian, &old); err != nil {
			return nil, bad("frontier: %v", err)
		}
		nr, err := translate(old)
		if err != nil {
			return nil, err
		}
		var s S
		if h.RawStates {
			if _, err := io.ReadFull(r, unsafe.Slice((*byte)(unsafe.Pointer(&s)), unsafe.Sizeof(s))); err != nil {
				return nil, bad("frontier: %v", err)
			}
		} else if err := dec.Decode(&s); err != nil {
			return nil, bad("frontier: %v", err)
		}
		cur.add(entry[S]{s, nr})
	}
	return cur, nil
}

// load adds a state read from a checkpoint: to the table if new, and to
// worker w's log in any case (the checkpoint holds each state once).
func (s *fpSet) load(fp, hi uint64, parent ref, w int) error {
	if fp < minFP {
		return fmt.Errorf("%w: fingerprint %d is reserved", ErrCheckpoint, fp)
	}
	if _, isNew, err := s.insert(fp, hi, parent, w); err != nil {
		return err
	} else if !isNew {
		return fmt.Errorf("%w: a fingerprint appears twice", ErrCheckpoint)
	}
	return nil
}

// checkpointDue reports whether a checkpoint should be written now.
func (c *checker[S]) checkpointDue(last time.Time) bool {
	return c.opts.CheckpointDir != "" && c.found == nil && c.reason == "" && !c.stop.Load() &&
		time.Since(last) >= c.opts.CheckpointEvery
}

// describeCheckpoint is the checkpoint's path, for messages.
func describeCheckpoint(dir string) string {
	return strings.TrimSuffix(dir, "/") + "/" + checkpointFile
}
