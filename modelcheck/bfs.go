package modelcheck

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// sizeText formats a byte count in MiB or GiB.
func sizeText(b int64) string {
	if b >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}

// entry is a state waiting to be expanded, with its ref in the seen-set log.
type entry[S any] struct {
	s S
	r ref
}

// finding is the first (shortest) problem the search met.
type finding[S any] struct {
	kind, name string
	length     int    // trace length, in states
	at         ref    // the last state (invariant, deadlock) or the step's source (action)
	action     string // action properties: the step's action
	to         S      // action properties: the step's target
	// step says the trace ends with the step at -> to (action properties,
	// and invariants on a state outside the constraint, never stored).
	step bool
	// distinct and generated are the figures at the moment the problem
	// was met, counted in the search order: with one worker they are
	// single-worker TLC's.
	distinct, generated int64
}

type checker[S any] struct {
	m     Model[S]
	opts  Options
	inv   []int
	names []string
	act   ActionPropertied[S]
	acts  []int
	cons  Constrained[S]
	acons ActionConstrained[S]
	view  Viewed[S]
	sym   Symmetric[S]
	live  Live[S]
	lives []int
	// plain: the model is Plain, so a state's fingerprint is its bytes'
	// (words).
	plain bool
	words *wordHash
	// stepped: plain, and without a view or a symmetry, so a successor's
	// fingerprint is computed from its parent's (parentHash.step).
	stepped bool
	// ptr is the model's PointerChecked methods, if it has them.
	ptr PointerChecked[S]
	// inPlace is the model's NextInto, if it has it.
	inPlace InPlace[S]

	set *fpSet
	// recent[w] is worker w's cache of recent fingerprints (expansion):
	// kept from level to level, since every fingerprint it holds is in
	// the set once the level that met it is complete.
	recent []*recentCache
	// sortBufs[w] and sortBatches[w] are worker w's room for sorted
	// batches (LookupSorted), kept from level to level.
	sortBufs    []*sortBuf
	sortBatches [][]pending[S]
	pool        blockPool[S] // blocks of expanded levels, for the next ones
	// q, if set, moves the queue's blocks to disk past queueCap bytes
	// (queuespill.go); queuePeak is the most memory the queue was seen
	// to hold.
	q         *queueSpill
	queueCap  int64
	queuePeak atomic.Int64
	// arena holds the seen-set's log and, for plain states, the queues'
	// blocks, until the run ends (dropArena).
	arena     *arena
	distinct  atomic.Int64
	generated atomic.Int64
	queue     atomic.Int64
	depth     atomic.Int64

	// ordered is set with one worker: the search then visits states in
	// single-worker TLC's order and stops at the first problem in that
	// order, with TLC's figures (see Options.Workers).
	ordered bool

	stop     atomic.Bool // every worker stops at once
	liveness atomic.Bool // the liveness phase has begun (for progress reports)
	noInsert atomic.Bool // finish the level looking only for shorter problems
	sawNew   atomic.Bool // in noInsert mode: a state outside the set was met

	// The level being expanded: its size and the distinct count when it
	// began, for the memory budget's estimate of the queues.
	curLen, levelStart int64

	mu     sync.Mutex
	found  *finding[S]
	reason string // why the run is incomplete
	err    error
}

func newChecker[S any](m Model[S], opts Options) (*checker[S], error) {
	opts.fill()
	if opts.FingerprintBits != 64 && opts.FingerprintBits != 128 {
		return nil, fmt.Errorf("modelcheck: fingerprints of %d bits: want 64 or 128", opts.FingerprintBits)
	}
	c := &checker[S]{m: m, opts: opts, set: newFPSet(opts.Workers, opts.FingerprintBits == 128), ordered: opts.Workers == 1}
	c.recent = make([]*recentCache, opts.Workers)
	switch opts.Lookup {
	case LookupAuto, LookupSorted:
		c.sortBufs = make([]*sortBuf, opts.Workers)
		c.sortBatches = make([][]pending[S], opts.Workers)
		for w := range c.sortBufs {
			c.sortBufs[w] = &sortBuf{}
		}
	case LookupHash:
	default:
		return nil, fmt.Errorf("modelcheck: unknown lookup %v", opts.Lookup)
	}
	var err error
	c.names = m.Invariants()
	if c.inv, err = pick("invariant", c.names, opts.Invariants); err != nil {
		return nil, err
	}
	if a, ok := m.(ActionPropertied[S]); ok {
		c.act = a
		if c.acts, err = pick("action property", a.ActionProperties(), opts.ActionProperties); err != nil {
			return nil, err
		}
	} else if len(opts.ActionProperties) > 0 {
		return nil, fmt.Errorf("%w: the model has no action properties (asked for %q)", ErrUnknownProperty, opts.ActionProperties[0])
	}
	if l, ok := m.(Live[S]); ok {
		c.live = l
		if c.lives, err = pick("liveness property", l.LivenessProperties(), opts.Liveness); err != nil {
			return nil, err
		}
	} else if len(opts.Liveness) > 0 {
		return nil, fmt.Errorf("%w: the model has no liveness properties (asked for %q)", ErrUnknownProperty, opts.Liveness[0])
	}
	if opts.UseConstraint {
		c.cons, _ = m.(Constrained[S])
		c.acons, _ = m.(ActionConstrained[S])
		if c.cons == nil && c.acons == nil {
			return nil, fmt.Errorf("modelcheck: UseConstraint set but the model has no Constraint or ActionConstraint method")
		}
	}
	if opts.UseView {
		if c.view, _ = m.(Viewed[S]); c.view == nil {
			return nil, fmt.Errorf("modelcheck: UseView set but the model has no View method")
		}
	}
	if opts.UseSymmetry {
		if c.sym, _ = m.(Symmetric[S]); c.sym == nil {
			return nil, fmt.Errorf("modelcheck: UseSymmetry set but the model has no Canonical method")
		}
	}
	c.ptr, _ = m.(PointerChecked[S])
	c.inPlace, _ = m.(InPlace[S])
	if _, ok := m.(Plain); ok {
		if err := checkPlain(reflect.TypeFor[S]()); err != nil {
			return nil, fmt.Errorf("modelcheck: the model declares its states plain, but %w", err)
		}
		c.plain = true
		c.words = newWordHash(unsafe.Sizeof(*new(S)))
		c.stepped = c.view == nil && c.sym == nil && c.words.n <= maxStepWords
	}
	c.arena = &arena{}
	c.set.arena = c.arena
	if !c.set.wide {
		c.set.spillDir = opts.SpillDir
		if opts.SpillDir != "" && opts.MemoryBudget > 0 && rawType(reflect.TypeFor[S]()) {
			c.q, c.queueCap = &queueSpill{parent: opts.SpillDir}, opts.MemoryBudget/4
		}
	}
	if c.plain {
		c.pool.arena = c.arena
	}
	if (c.view != nil || c.sym != nil) && c.live != nil && len(c.lives) > 0 {
		return nil, fmt.Errorf("modelcheck: liveness is not checked under a SYMMETRY or VIEW (it could miss violations); select no liveness property")
	}
	return c, nil
}

// key encodes s as the seen-set identifies it (its view, of its orbit's
// representative under the symmetry) and returns the encoding and its
// fingerprint: fp, and hi, the high word of a 128-bit one (0 for 64 bits).
// A plain state without a view is fingerprinted in place: out is then buf
// unchanged.
func (c *checker[S]) key(buf []byte, s S) (out []byte, fp, hi uint64) {
	if c.sym != nil {
		s = c.sym.Canonical(s)
	}
	var b []byte
	switch {
	case c.view != nil:
		buf = c.view.View(buf[:0], s)
		b = buf
	case c.plain:
		lo, up := c.words.sums(unsafe.Pointer(&s), c.set.wide)
		if c.set.wide {
			hi = finish(up)
		}
		return buf, finish(lo), hi
	default:
		buf = c.m.Encode(buf[:0], s)
		b = buf
	}
	if c.set.wide {
		hi = fingerprintHi(b)
	}
	return buf, fingerprint(b), hi
}

// inModel reports whether the step from -> to lies inside the state and
// action constraints.
func (c *checker[S]) inModel(action string, from, to S) bool {
	return (c.cons == nil || c.cons.Constraint(to)) && (c.acons == nil || c.acons.ActionConstraint(action, from, to))
}

// report records a problem; the shortest wins, the first among equals.
func (c *checker[S]) report(f *finding[S]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.found != nil && c.found.length <= f.length {
		return
	}
	c.found = f
	if c.opts.Continue {
		return
	}
	if c.ordered || f.kind == "deadlock" || !c.opts.CheckDeadlock {
		// Nothing shorter can turn up: stop now.
		c.stop.Store(true)
		return
	}
	// A deadlock in the rest of this level would be one state shorter.
	c.noInsert.Store(true)
}

func (c *checker[S]) halt(reason string, err error) {
	c.mu.Lock()
	if c.reason == "" && c.err == nil {
		c.reason, c.err = reason, err
	}
	c.mu.Unlock()
	c.stop.Store(true)
}

// failing returns the first selected invariant that s breaks, or -1.
func (c *checker[S]) failing(s *S) int {
	if len(c.inv) == 0 {
		return -1
	}
	if c.ptr != nil {
		return c.ptr.FailingPtr(c.inv, s)
	}
	for _, i := range c.inv {
		if !c.m.Holds(i, *s) {
			return i
		}
	}
	return -1
}

// checkState evaluates the selected invariants on a state; f is the
// finding to report if one fails (kind and name are filled in here).
func (c *checker[S]) checkState(s S, f finding[S]) bool {
	if i := c.failing(&s); i >= 0 {
		f.kind, f.name = "invariant", c.names[i]
		c.report(&f)
		return false
	}
	return true
}

// deepen records that a state of this depth was stored: the depth TLC
// reports is the deepest stored state's.
func (c *checker[S]) deepen(depth int) {
	for {
		d := c.depth.Load()
		if d >= int64(depth) || c.depth.CompareAndSwap(d, int64(depth)) {
			return
		}
	}
}

func (c *checker[S]) run(ctx context.Context) (*Result[S], error) {
	start := time.Now()
	defer c.dropArena()
	defer c.closeSpill()
	if c.opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.Timeout)
		defer cancel()
	}
	stopWatch := context.AfterFunc(ctx, func() {
		if c.opts.Timeout > 0 && ctx.Err() == context.DeadlineExceeded {
			c.halt(fmt.Sprintf("time limit %v reached", c.opts.Timeout), nil)
		} else {
			c.halt("cancelled: "+context.Cause(ctx).Error(), nil)
		}
	})
	defer stopWatch()

	var wg sync.WaitGroup
	done := make(chan struct{})
	if c.opts.Progress != nil {
		wg.Add(1)
		go c.progressLoop(start, done, &wg)
	}

	var (
		cur     *blocks[S]
		level   = 1
		resumed int
	)
	if c.opts.Recover != "" {
		var err error
		if level, cur, err = c.readCheckpoint(c.opts.Recover); err != nil {
			close(done)
			wg.Wait()
			return nil, err
		}
		resumed = level
	} else {
		cur = c.initial()
	}
	c.search(cur, level)
	stopProgress := func() {
		close(done)
		wg.Wait()
	}
	if c.err != nil {
		stopProgress()
		return nil, c.err
	}
	res := c.result(start)
	res.ResumedAt = resumed
	c.set.release()
	if c.found == nil && c.reason == "" && c.live != nil && len(c.lives) > 0 {
		c.liveness.Store(true)
		c.queue.Store(0)
		err := c.checkLiveness(ctx, start, res)
		stopProgress()
		if err != nil {
			return nil, err
		}
		res.Elapsed = time.Since(start)
		return res, nil
	}
	stopProgress()
	return res, nil
}

// search expands the levels from cur (of depth level) until none is
// left or the run stops, writing checkpoints when they are due.
func (c *checker[S]) search(cur *blocks[S], level int) {
	lastCk := time.Now()
	for ; cur.len() > 0 && !c.stop.Load(); level++ {
		if c.checkpointDue(lastCk) {
			if err := c.writeCheckpoint(level, cur); err != nil {
				c.halt("", fmt.Errorf("modelcheck: checkpoint %s: %w", describeCheckpoint(c.opts.CheckpointDir), err))
				break
			}
			lastCk = time.Now()
		}
		if c.opts.MaxDepth > 0 && level >= c.opts.MaxDepth {
			// Expand the last allowed level only to learn whether the
			// limit hid anything.
			c.noInsert.Store(true)
		}
		c.curLen, c.levelStart = int64(cur.len()), c.distinct.Load()
		next, err := c.expandLevel(cur, level)
		c.set.reclaim()
		if err != nil {
			c.halt("", fmt.Errorf("modelcheck: reading the queue back from %s: %w", c.opts.SpillDir, err))
			break
		}
		if c.spillDue(next) {
			if err := c.set.spillOut(); err != nil {
				c.halt("", fmt.Errorf("modelcheck: spilling the seen-set to %s: %w", c.opts.SpillDir, err))
				break
			}
		}
		if c.noInsert.Load() {
			if c.found == nil && c.sawNew.Load() {
				c.halt(fmt.Sprintf("depth limit %d reached", c.opts.MaxDepth), nil)
			}
			break
		}
		cur = next
	}
}

// sortedLookup reports whether the workers look successors up in sorted
// batches during the next level.
func (c *checker[S]) sortedLookup() bool {
	return c.opts.Lookup == LookupSorted || c.opts.Lookup == LookupAuto && c.set.spill != nil
}

// spillDue reports whether the seen-set should move to disk before the
// level next is expanded: the set and the queue hold more than half the
// memory budget (and the search goes on).
func (c *checker[S]) spillDue(next *blocks[S]) bool {
	b := c.opts.MemoryBudget
	if c.set.spillDir == "" || b <= 0 || c.stop.Load() || next.len() == 0 {
		return false
	}
	queue := (int64(next.len()-next.spilled) + c.pool.n.Load()*blockSize) * int64(unsafe.Sizeof(entry[S]{}))
	return c.set.mem.Load()+queue > b/2
}

// closeSpill removes the seen-set's and the queue's files once the run
// is over.
func (c *checker[S]) closeSpill() {
	if c.set.spill != nil {
		c.set.spill.close()
	}
	if c.q != nil {
		c.q.close()
	}
}

// result assembles the figures and, for a finding, its trace.
func (c *checker[S]) result(start time.Time) *Result[S] {
	res := &Result[S]{
		Distinct:  c.distinct.Load(),
		Generated: c.generated.Load(),
		Depth:     int(c.depth.Load()),
		Elapsed:   time.Since(start),
		Workers:   c.opts.Workers,
		SetBytes:  c.set.bytes(),
	}
	if sp := c.set.spill; sp != nil {
		res.SpillBytes, res.Spills = sp.disk(), sp.spills
	}
	if c.q != nil {
		res.QueueSpillBytes, res.QueueDiskPeak = c.q.written.Load(), c.q.peak.Load()
	}
	res.QueuePeak = c.queuePeak.Load()
	res.FingerprintBits = c.opts.FingerprintBits
	res.Collision = CollisionProbabilityBits(res.Distinct, res.Generated, c.opts.FingerprintBits)
	switch {
	case c.found != nil:
		f := c.found
		res.Outcome, res.Violated, res.Kind = Violated, f.name, f.kind
		if f.kind == "deadlock" {
			res.Outcome = Deadlock
		}
		if f.at == noParent {
			// An initial state outside the constraint, never stored.
			res.Trace = []Step[S]{{Action: "Init", Label: "Init", State: f.to}}
		} else {
			res.Trace = c.rebuild(f.at)
		}
		if f.step {
			last := res.Trace[len(res.Trace)-1].State
			res.Trace = append(res.Trace, Step[S]{Action: f.action, Label: c.label(f.action, last, f.to), State: f.to})
		}
		if c.ordered && !c.opts.Continue {
			// The figures when the problem was met, as single-worker TLC
			// reports them.
			res.Distinct, res.Generated = f.distinct, f.generated
		}
	case c.reason != "":
		res.Outcome, res.Reason = Incomplete, c.reason
	}
	return res
}

// dropArena unmaps the arena once the run is over: the seen-set's log
// and the blocks in the pool are not read again.
func (c *checker[S]) dropArena() {
	c.pool.mu.Lock()
	clear(c.pool.free)
	c.pool.free = nil
	c.pool.n.Store(0)
	c.pool.mu.Unlock()
	c.set.logs = nil
	c.arena.drop()
}

// initial inserts and checks the initial states: level 1.
func (c *checker[S]) initial() *blocks[S] {
	cur := blocks[S]{pool: &c.pool}
	var buf []byte
	// As TLC does, every initial state is generated even after a
	// violation, but none is stored or checked after it.
	c.m.Init(func(s S) {
		c.generated.Add(1)
		if c.stop.Load() {
			return
		}
		if c.cons != nil && !c.cons.Constraint(s) {
			c.checkState(s, finding[S]{length: 1, at: noParent, to: s, distinct: c.distinct.Load(), generated: c.generated.Load()})
			return
		}
		var fp, hi uint64
		buf, fp, hi = c.key(buf, s)
		r, isNew, err := c.set.insert(fp, hi, noParent, 0)
		if err != nil {
			c.halt("", err)
			return
		}
		if isNew {
			c.deepen(1)
			c.checkState(s, finding[S]{length: 1, at: r, distinct: c.distinct.Add(1), generated: c.generated.Load()})
			cur.add(entry[S]{s, r})
		}
	})
	if c.found != nil && c.ordered {
		c.found.generated = c.generated.Load()
	}
	c.queue.Store(int64(cur.len()))
	return &cur
}

func (c *checker[S]) progressLoop(start time.Time, done <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	t := time.NewTicker(c.opts.ProgressEvery)
	defer t.Stop()
	last, lastAt := int64(0), start
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			d := c.distinct.Load()
			phase := "bfs"
			if c.liveness.Load() {
				phase = "liveness"
			}
			if d < last { // the liveness phase counts afresh
				last = 0
			}
			c.opts.Progress(Progress{
				Elapsed:         now.Sub(start),
				Depth:           int(c.depth.Load()),
				Distinct:        d,
				Generated:       c.generated.Load(),
				Queue:           c.queue.Load(),
				StatesPerSecond: float64(d-last) / now.Sub(lastAt).Seconds(),
				Phase:           phase,
			})
			last, lastAt = d, now
		}
	}
}
