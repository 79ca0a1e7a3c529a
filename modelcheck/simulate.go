package modelcheck

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// SimOptions configures Simulate. The zero value runs one walk per core
// until the context is done, each at most 100 steps deep.
type SimOptions struct {
	// Seed makes the walks reproducible: walk i uses a generator seeded
	// with (Seed, i), so a violation is found again with the same seed
	// whatever the number of workers.
	Seed uint64
	// Depth bounds each walk (states after the initial one); 0 means 100.
	Depth int
	// Walks is the number of walks; 0 means until Timeout or the context
	// ends.
	Walks int64
	// Timeout stops the simulation after this long; 0 means none.
	Timeout time.Duration
	// Workers is the number of goroutines; 0 means runtime.GOMAXPROCS(0).
	Workers int
	// CheckDeadlock reports a walk that reaches a state without
	// successors.
	CheckDeadlock bool
	// Invariants and ActionProperties select what is checked, as in
	// Options (nil means all).
	Invariants, ActionProperties []string

	_ struct{}
}

// SimResult reports a simulation. Generated counts every successor
// computed (each is checked, as TLC's -simulate checks every successor it
// enumerates); Steps counts the states the walks visited.
type SimResult[S any] struct {
	Outcome        Outcome // OK (no violation found), Violated or Deadlock
	Violated, Kind string
	// Trace is the walk up to the violation; Walk is its index, so the
	// same Seed replays it. The trace is not necessarily shortest.
	Trace     []Step[S]
	Walk      int64
	Walks     int64
	Steps     int64
	Generated int64
	Elapsed   time.Duration
}

// Simulate checks m by random walks from its initial states, in the manner
// of TLC's -simulate: at each step every successor is generated and
// checked, then one is chosen uniformly at random. It finds violations in
// state spaces too large to explore, but proves nothing when it finds
// none. A cancelled ctx or the timeout ends it with the figures so far.
func Simulate[S any](ctx context.Context, m Model[S], opts SimOptions) (*SimResult[S], error) {
	c, err := newChecker(m, Options{Invariants: opts.Invariants, ActionProperties: opts.ActionProperties, Liveness: []string{}})
	if err != nil {
		return nil, err
	}
	if opts.Depth <= 0 {
		opts.Depth = 100
	}
	if opts.Workers <= 0 {
		opts.Workers = c.opts.Workers
	}
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	sim := &simulation[S]{m: m, c: c, opts: opts, res: &SimResult[S]{Outcome: OK}}
	m.Init(func(s S) { sim.inits = append(sim.inits, s) })
	if len(sim.inits) == 0 {
		return nil, fmt.Errorf("modelcheck: the model has no initial state")
	}
	if c.act != nil {
		sim.actNames = c.act.ActionProperties()
	}
	sim.stopAt.Store(1<<63 - 1)
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < opts.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sim.work(ctx)
		}()
	}
	wg.Wait()
	res := sim.res
	res.Walks, res.Steps, res.Generated, res.Elapsed = sim.walks.Load(), sim.steps.Load(), sim.generated.Load(), time.Since(start)
	if sim.found {
		// Label the chosen steps of the reported walk for people.
		for i := 1; i < len(res.Trace); i++ {
			st := &res.Trace[i]
			st.Label = c.label(st.Action, res.Trace[i-1].State, st.State)
		}
	}
	return res, nil
}

// simulation is one Simulate run: the walks its workers share.
type simulation[S any] struct {
	m        Model[S]
	c        *checker[S]
	opts     SimOptions
	inits    []S
	actNames []string

	next, walks, steps, generated atomic.Int64
	stopAt                        atomic.Int64 // walks from this index on are not needed

	mu    sync.Mutex // guards found and res
	found bool
	res   *SimResult[S]
}

// simSucc is one successor of a walk's current state.
type simSucc[S any] struct {
	action string
	s      S
}

// report records that walk found a problem; the lowest walk index wins,
// so the result does not depend on which worker got there first.
func (sim *simulation[S]) report(walk int64, kind, name string, trace []Step[S]) {
	sim.mu.Lock()
	defer sim.mu.Unlock()
	if !sim.found || walk < sim.res.Walk {
		sim.found = true
		res := sim.res
		res.Outcome, res.Kind, res.Violated, res.Trace, res.Walk = Violated, kind, name, trace, walk
		if kind == "deadlock" {
			res.Outcome = Deadlock
		}
	}
	for {
		cur := sim.stopAt.Load()
		if walk >= cur || sim.stopAt.CompareAndSwap(cur, walk) {
			break
		}
	}
}

// bad returns the name of the first invariant s violates, or "".
func (sim *simulation[S]) bad(s S) string {
	for _, i := range sim.c.inv {
		if !sim.m.Holds(i, s) {
			return sim.c.names[i]
		}
	}
	return ""
}

// work runs walks, taking the next index each time, until there are
// enough, a lower walk has found a problem, or ctx ends.
func (sim *simulation[S]) work(ctx context.Context) {
	var succs []simSucc[S]
	for ctx.Err() == nil {
		walk := sim.next.Add(1) - 1
		if sim.opts.Walks > 0 && walk >= sim.opts.Walks || walk >= sim.stopAt.Load() {
			return
		}
		if !sim.walk(ctx, walk, &succs) {
			return
		}
		sim.walks.Add(1)
	}
}

// walk runs walk number walk from its seed; it returns false when the
// walk found a problem (reported).
func (sim *simulation[S]) walk(ctx context.Context, walk int64, succs *[]simSucc[S]) bool {
	m, c := sim.m, sim.c
	rng := rand.New(rand.NewPCG(sim.opts.Seed, uint64(walk)))
	cur := sim.inits[rng.IntN(len(sim.inits))]
	trace := []Step[S]{{Action: "Init", Label: "Init", State: cur}}
	if name := sim.bad(cur); name != "" {
		sim.report(walk, "invariant", name, trace)
		return false
	}
	// A walk below the first violating one runs to its end, so the lowest
	// violating walk is found whatever the timing.
	for depth := 0; depth < sim.opts.Depth && walk < sim.stopAt.Load() && ctx.Err() == nil; depth++ {
		*succs = (*succs)[:0]
		m.Next(cur, func(a string, t S) { *succs = append(*succs, simSucc[S]{a, t}) })
		sim.generated.Add(int64(len(*succs)))
		for _, sc := range *succs {
			if c.act != nil {
				for _, i := range c.acts {
					if !c.act.ActionHolds(i, sc.action, cur, sc.s) {
						sim.report(walk, "action", sim.actNames[i], append(trace, Step[S]{Action: sc.action, Label: c.label(sc.action, cur, sc.s), State: sc.s}))
						return false
					}
				}
			}
			if name := sim.bad(sc.s); name != "" {
				sim.report(walk, "invariant", name, append(trace, Step[S]{Action: sc.action, Label: c.label(sc.action, cur, sc.s), State: sc.s}))
				return false
			}
		}
		if len(*succs) == 0 {
			if sim.opts.CheckDeadlock {
				sim.report(walk, "deadlock", "deadlock", trace)
				return false
			}
			break
		}
		pick := (*succs)[rng.IntN(len(*succs))]
		trace = append(trace, Step[S]{Action: pick.action, Label: pick.action, State: pick.s})
		cur = pick.s
		sim.steps.Add(1)
	}
	return true
}
