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
	var inits []S
	m.Init(func(s S) { inits = append(inits, s) })
	if len(inits) == 0 {
		return nil, fmt.Errorf("modelcheck: the model has no initial state")
	}
	start := time.Now()
	res := &SimResult[S]{Outcome: OK}
	var (
		next         atomic.Int64
		walks, steps atomic.Int64
		generated    atomic.Int64
		mu           sync.Mutex // guards found and res
		found        bool
		wg           sync.WaitGroup
		stopAt       atomic.Int64 // walks from this index on are not needed
		actNames     []string
	)
	if c.act != nil {
		actNames = c.act.ActionProperties()
	}
	stopAt.Store(1<<63 - 1)
	report := func(walk int64, kind, name string, trace []Step[S]) {
		mu.Lock()
		defer mu.Unlock()
		// The lowest walk index wins, so the result does not depend on
		// which worker got there first.
		if !found || walk < res.Walk {
			found = true
			res.Outcome, res.Kind, res.Violated, res.Trace, res.Walk = Violated, kind, name, trace, walk
			if kind == "deadlock" {
				res.Outcome = Deadlock
			}
		}
		for {
			cur := stopAt.Load()
			if walk >= cur || stopAt.CompareAndSwap(cur, walk) {
				break
			}
		}
	}
	type succ struct {
		action string
		s      S
	}
	for w := 0; w < opts.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var succs []succ
			for ctx.Err() == nil {
				walk := next.Add(1) - 1
				if opts.Walks > 0 && walk >= opts.Walks || walk >= stopAt.Load() {
					return
				}
				rng := rand.New(rand.NewPCG(opts.Seed, uint64(walk)))
				cur := inits[rng.IntN(len(inits))]
				trace := []Step[S]{{Action: "Init", Label: "Init", State: cur}}
				bad := func(s S) string {
					for _, i := range c.inv {
						if !m.Holds(i, s) {
							return c.names[i]
						}
					}
					return ""
				}
				if name := bad(cur); name != "" {
					report(walk, "invariant", name, trace)
					return
				}
				// A walk below the first violating one runs to its end, so
				// the lowest violating walk is found whatever the timing.
				for depth := 0; depth < opts.Depth && walk < stopAt.Load() && ctx.Err() == nil; depth++ {
					succs = succs[:0]
					m.Next(cur, func(a string, t S) { succs = append(succs, succ{a, t}) })
					generated.Add(int64(len(succs)))
					for _, sc := range succs {
						if c.act != nil {
							for _, i := range c.acts {
								if !c.act.ActionHolds(i, sc.action, cur, sc.s) {
									report(walk, "action", actNames[i], append(trace, Step[S]{Action: sc.action, Label: c.label(sc.action, cur, sc.s), State: sc.s}))
									return
								}
							}
						}
						if name := bad(sc.s); name != "" {
							report(walk, "invariant", name, append(trace, Step[S]{Action: sc.action, Label: c.label(sc.action, cur, sc.s), State: sc.s}))
							return
						}
					}
					if len(succs) == 0 {
						if opts.CheckDeadlock {
							report(walk, "deadlock", "deadlock", trace)
							return
						}
						break
					}
					pick := succs[rng.IntN(len(succs))]
					trace = append(trace, Step[S]{Action: pick.action, Label: pick.action, State: pick.s})
					cur = pick.s
					steps.Add(1)
				}
				walks.Add(1)
			}
		}()
	}
	wg.Wait()
	res.Walks, res.Steps, res.Generated, res.Elapsed = walks.Load(), steps.Load(), generated.Load(), time.Since(start)
	if found {
		// Label the chosen steps of the reported walk for people.
		for i := 1; i < len(res.Trace); i++ {
			st := &res.Trace[i]
			st.Label = c.label(st.Action, res.Trace[i-1].State, st.State)
		}
	}
	return res, nil
}
