package modelcheck

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

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
}

type checker[S any] struct {
	m     Model[S]
	opts  Options
	inv   []int
	names []string
	act   ActionPropertied[S]
	acts  []int
	cons  Constrained[S]
	live  Live[S]
	lives []int

	set       fpSet
	distinct  atomic.Int64
	generated atomic.Int64
	queue     atomic.Int64
	depth     atomic.Int64

	stop     atomic.Bool // every worker stops at once
	noInsert atomic.Bool // finish the level looking only for shorter problems
	sawNew   atomic.Bool // in noInsert mode: a state outside the set was met

	mu     sync.Mutex
	found  *finding[S]
	reason string // why the run is incomplete
	err    error
}

func newChecker[S any](m Model[S], opts Options) (*checker[S], error) {
	opts.fill()
	c := &checker[S]{m: m, opts: opts}
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
		cons, ok := m.(Constrained[S])
		if !ok {
			return nil, fmt.Errorf("modelcheck: UseConstraint set but the model has no Constraint method")
		}
		c.cons = cons
	}
	return c, nil
}

// report records a problem; the shortest wins, the first among equals.
func (c *checker[S]) report(f *finding[S]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.found != nil && c.found.length <= f.length {
		return
	}
	c.found = f
	if f.kind == "deadlock" || !c.opts.CheckDeadlock {
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

// checkState evaluates the selected invariants on a new state.
func (c *checker[S]) checkState(s S, r ref, length int) {
	for _, i := range c.inv {
		if !c.m.Holds(i, s) {
			c.report(&finding[S]{kind: "invariant", name: c.names[i], length: length, at: r})
			return
		}
	}
}

func (c *checker[S]) run(ctx context.Context) (*Result[S], error) {
	start := time.Now()
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
		go c.progressLoop(start, done, &wg, "bfs")
	}

	cur := c.initial()
	for level := 1; len(cur) > 0 && !c.stop.Load(); level++ {
		c.depth.Store(int64(level))
		if c.opts.MaxDepth > 0 && level >= c.opts.MaxDepth {
			// Expand the last allowed level only to learn whether the
			// limit hid anything.
			c.noInsert.Store(true)
		}
		next := c.expandLevel(cur, level)
		if c.noInsert.Load() {
			if c.found == nil && c.sawNew.Load() {
				c.halt(fmt.Sprintf("depth limit %d reached", c.opts.MaxDepth), nil)
			}
			break
		}
		cur = next
	}
	close(done)
	wg.Wait()
	if c.err != nil {
		return nil, c.err
	}
	res := c.result(start)
	if c.found == nil && c.reason == "" && c.live != nil && len(c.lives) > 0 {
		if err := c.checkLiveness(ctx, start, res); err != nil {
			return nil, err
		}
		res.Elapsed = time.Since(start)
	}
	return res, nil
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
	res.Collision = CollisionProbability(res.Distinct, res.Generated)
	switch {
	case c.found != nil:
		f := c.found
		res.Outcome, res.Violated, res.Kind = Violated, f.name, f.kind
		if f.kind == "deadlock" {
			res.Outcome = Deadlock
		}
		res.Trace = c.rebuild(f.at)
		if f.kind == "action" {
			last := res.Trace[len(res.Trace)-1].State
			res.Trace = append(res.Trace, Step[S]{Action: f.action, Label: c.label(f.action, last, f.to), State: f.to})
		}
	case c.reason != "":
		res.Outcome, res.Reason = Incomplete, c.reason
	}
	return res
}

// initial inserts and checks the initial states: level 1.
func (c *checker[S]) initial() []entry[S] {
	var cur []entry[S]
	var buf []byte
	c.m.Init(func(s S) {
		c.generated.Add(1)
		if c.cons != nil && !c.cons.Constraint(s) {
			return
		}
		buf = c.m.Encode(buf[:0], s)
		r, isNew, err := c.set.insert(fingerprint(buf), noParent)
		if err != nil {
			c.halt("", err)
			return
		}
		if isNew {
			c.distinct.Add(1)
			c.checkState(s, r, 1)
			cur = append(cur, entry[S]{s, r})
		}
	})
	c.queue.Store(int64(len(cur)))
	if len(cur) > 0 {
		c.depth.Store(1)
	}
	return cur
}

// chunk is how many states a worker takes from the level at a time.
const chunk = 64

// expandLevel expands every state of cur (depth level) on the workers and
// returns the new states of the next level.
func (c *checker[S]) expandLevel(cur []entry[S], level int) []entry[S] {
	workers := c.opts.Workers
	if n := (len(cur) + chunk - 1) / chunk; n < workers {
		workers = n
	}
	var pos atomic.Int64
	outs := make([][]entry[S], workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			outs[w] = c.worker(cur, &pos, level)
		}(w)
	}
	wg.Wait()
	n := 0
	for _, o := range outs {
		n += len(o)
	}
	next := make([]entry[S], 0, n)
	for _, o := range outs {
		next = append(next, o...)
	}
	return next
}

func (c *checker[S]) worker(cur []entry[S], pos *atomic.Int64, level int) []entry[S] {
	var (
		out       []entry[S]
		buf       []byte
		from      entry[S]
		succ      int
		generated int64
		distinct  int64
	)
	maxStates := c.opts.MaxStates
	emit := func(action string, t S) {
		succ++
		generated++
		if c.act != nil {
			for _, i := range c.acts {
				if !c.act.ActionHolds(i, action, from.s, t) {
					c.report(&finding[S]{kind: "action", name: c.act.ActionProperties()[i], length: level + 1, at: from.r, action: action, to: t})
					return
				}
			}
		}
		if c.cons != nil && !c.cons.Constraint(t) {
			return
		}
		buf = c.m.Encode(buf[:0], t)
		fp := fingerprint(buf)
		if c.noInsert.Load() {
			if !c.sawNew.Load() && !c.set.contains(fp) {
				c.sawNew.Store(true)
			}
			return
		}
		r, isNew, err := c.set.insert(fp, from.r)
		if err != nil {
			c.halt("", err)
			return
		}
		if !isNew {
			return
		}
		distinct++
		c.checkState(t, r, level+1)
		out = append(out, entry[S]{t, r})
	}
	for !c.stop.Load() {
		lo := int(pos.Add(chunk)) - chunk
		if lo >= len(cur) {
			break
		}
		hi := min(lo+chunk, len(cur))
		for _, e := range cur[lo:hi] {
			if c.stop.Load() {
				break
			}
			from, succ = e, 0
			c.m.Next(e.s, emit)
			if succ == 0 && c.opts.CheckDeadlock {
				c.report(&finding[S]{kind: "deadlock", name: "deadlock", length: level, at: e.r})
			}
		}
		c.generated.Add(generated)
		total := c.distinct.Add(distinct)
		c.queue.Add(distinct - int64(hi-lo))
		generated, distinct = 0, 0
		if maxStates > 0 && total >= maxStates {
			c.halt(fmt.Sprintf("state limit %d reached", maxStates), nil)
		}
	}
	c.generated.Add(generated)
	c.distinct.Add(distinct)
	return out
}

func (c *checker[S]) progressLoop(start time.Time, done <-chan struct{}, wg *sync.WaitGroup, phase string) {
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
