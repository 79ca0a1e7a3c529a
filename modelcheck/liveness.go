package modelcheck

import (
	"context"
	"fmt"
	"sync"
	"time"
	"unsafe"
)

// The liveness search runs after a complete, violation-free safety search.
// It builds the reachable state graph explicitly, then for each property
// P ~> Q looks for a fair cycle among the states without Q that a state
// with P and without Q can reach without passing through Q. Fair cycles are
// found by the Emerson–Lei refinement of strongly connected components:
// a component in which some weak instance is enabled everywhere and taken
// nowhere holds no fair cycle; states where a strong instance is enabled
// but which no edge of the component takes are removed and the rest is
// decomposed again. Every state may stutter, so a single state is a cycle
// too (fair when no instance is enabled in it).

// lgraph is the explicit reachable graph, with fairness annotations.
type lgraph[S any] struct {
	states []S
	parent []int32 // BFS tree, -1 for initial states
	// out-edges of node v: targets[edgeStart[v]:edgeStart[v+1]]
	edgeStart []int32
	targets   []int32
	actions   []string
	// fairness instances taken by edge e: keys[takenStart[e]:takenStart[e+1]]
	takenStart []int32
	taken      []int32
	// fairness instances enabled in node v
	enabledStart []int32
	enabled      []int32
	keyNames     []string
	strong       []bool
	p, q         [][]bool // per property, per node
}

// buildGraph explores the reachable graph again, storing it; the distinct
// counter restarts from zero so progress reports show how far it got.
func (c *checker[S]) buildGraph(ctx context.Context) (*lgraph[S], error) {
	b := &graphBuilder[S]{g: &lgraph[S]{}, ids: map[[2]uint64]int32{}, keyIndex: map[string]int32{}}
	g := b.g
	c.distinct.Store(0)
	var buf []byte
	c.m.Init(func(s S) {
		if c.cons == nil || c.cons.Constraint(s) {
			var fp, hi uint64
			buf, fp, hi = c.key(buf, s)
			b.add(s, fp, hi, -1)
		}
	})
	g.edgeStart = append(g.edgeStart, 0)
	g.takenStart = append(g.takenStart, 0)
	g.enabledStart = append(g.enabledStart, 0)
	g.p = make([][]bool, len(c.lives))
	g.q = make([][]bool, len(c.lives))
	// The nodes are expanded in windows: the workers expand a window's
	// nodes (successors, fingerprints, fairness, P and Q: the costly part)
	// into per-node results, then the results are added to the graph in
	// node order, so the graph is the same whatever the workers.
	var exp []nodeExpansion[S]
	for v := int32(0); int(v) < len(g.states); {
		if ctx.Err() != nil {
			return nil, nil
		}
		if budget := c.opts.MemoryBudget; budget > 0 && g.bytes(len(b.ids))+c.set.mem.Load() > budget {
			c.reason = fmt.Sprintf("memory budget of %s reached during the liveness check (state graph of %d states)", sizeText(budget), len(g.states))
			return nil, nil
		}
		hi := min(int32(len(g.states)), v+graphWindow)
		exp = c.expandNodes(g.states[v:hi], exp)
		for k := range exp[:hi-v] {
			b.addNode(&exp[k], v, len(c.lives))
			v++
		}
		c.distinct.Store(int64(len(g.states)))
		c.queue.Store(int64(len(g.states)) - int64(v))
	}
	return g, b.keyErr
}

// graphBuilder adds nodes, edges and fairness instances to a graph.
type graphBuilder[S any] struct {
	g        *lgraph[S]
	ids      map[[2]uint64]int32 // node of each fingerprint
	keyIndex map[string]int32    // index of each fairness instance
	// known[k]: instance k has been seen enabled, so its strength is known.
	known  []bool
	keyErr error
}

// key interns a fairness instance. Its strength is known once it has been
// seen enabled; an instance only ever seen taken is never enabled and so
// constrains nothing, whatever its strength.
func (b *graphBuilder[S]) key(k string, strong, fromEnabled bool) int32 {
	g := b.g
	i, ok := b.keyIndex[k]
	if !ok {
		i = int32(len(g.keyNames))
		b.keyIndex[k] = i
		g.keyNames = append(g.keyNames, k)
		g.strong = append(g.strong, strong)
		b.known = append(b.known, fromEnabled)
	} else if fromEnabled && !b.known[i] {
		g.strong[i], b.known[i] = strong, true
	} else if fromEnabled && g.strong[i] != strong && b.keyErr == nil {
		b.keyErr = fmt.Errorf("modelcheck: fairness instance %q is both weak and strong", k)
	}
	return i
}

// add returns the node of fingerprint (fp, hi), adding s as a new node
// reached from parent if it has none.
func (b *graphBuilder[S]) add(s S, fp, hi uint64, parent int32) int32 {
	if id, ok := b.ids[[2]uint64{fp, hi}]; ok {
		return id
	}
	g := b.g
	id := int32(len(g.states))
	b.ids[[2]uint64{fp, hi}] = id
	g.states = append(g.states, s)
	g.parent = append(g.parent, parent)
	return id
}

// addNode adds node v's expansion x: its edges, the instances they take,
// the instances enabled in v, and P and Q of each of the lives properties.
func (b *graphBuilder[S]) addNode(x *nodeExpansion[S], v int32, lives int) {
	g := b.g
	for _, e := range x.edges {
		g.targets = append(g.targets, b.add(e.to, e.fp, e.hi, v))
		g.actions = append(g.actions, e.action)
		for _, k := range e.taken {
			g.taken = append(g.taken, b.key(k, false, false))
		}
		g.takenStart = append(g.takenStart, int32(len(g.taken)))
	}
	g.edgeStart = append(g.edgeStart, int32(len(g.targets)))
	for _, en := range x.enabled {
		g.enabled = append(g.enabled, b.key(en.key, en.strong, true))
	}
	g.enabledStart = append(g.enabledStart, int32(len(g.enabled)))
	for j := 0; j < lives; j++ {
		g.p[j] = append(g.p[j], x.p[j])
		g.q[j] = append(g.q[j], x.q[j])
	}
}

// graphWindow is how many nodes the workers expand at a time.
const graphWindow = 4096

// nodeExpansion is what a worker computes for one node of the graph.
type nodeExpansion[S any] struct {
	edges   []edgeExpansion[S]
	enabled []enabledKey
	p, q    []bool
}

type edgeExpansion[S any] struct {
	to     S
	fp, hi uint64
	action string
	taken  []string
}

type enabledKey struct {
	key    string
	strong bool
}

// expandNodes expands states on the workers into exp[i] for states[i],
// reusing exp's memory, and returns exp.
func (c *checker[S]) expandNodes(states []S, exp []nodeExpansion[S]) []nodeExpansion[S] {
	if len(exp) < len(states) {
		exp = append(exp, make([]nodeExpansion[S], len(states)-len(exp))...)
	}
	workers := max(1, min(c.opts.Workers, (len(states)+255)/256))
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := len(states)*w/workers, len(states)*(w+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for i := lo; i < hi; i++ {
				s, x := states[i], &exp[i]
				x.edges, x.enabled, x.p, x.q = x.edges[:0], x.enabled[:0], x.p[:0], x.q[:0]
				c.m.Next(s, func(action string, t S) {
					if !c.inModel(action, s, t) {
						return
					}
					var fp, fhi uint64
					buf, fp, fhi = c.key(buf, t)
					if len(x.edges) < cap(x.edges) { // reuse the edge and its taken list
						x.edges = x.edges[:len(x.edges)+1]
					} else {
						x.edges = append(x.edges, edgeExpansion[S]{})
					}
					e := &x.edges[len(x.edges)-1]
					e.to, e.fp, e.hi, e.action, e.taken = t, fp, fhi, action, e.taken[:0]
					c.live.FairTaken(action, s, t, func(k string) { e.taken = append(e.taken, k) })
				})
				c.live.FairEnabled(s, func(k string, strong bool) {
					x.enabled = append(x.enabled, enabledKey{k, strong})
				})
				for _, j := range c.lives {
					p, q := c.live.LeadsTo(j, s)
					x.p, x.q = append(x.p, p), append(x.q, q)
				}
			}
		}()
	}
	wg.Wait()
	return exp
}

// bytes estimates the memory g holds, with an id map of n entries.
func (g *lgraph[S]) bytes(n int) int64 {
	var s S
	b := int64(cap(g.states))*int64(unsafe.Sizeof(s)) + int64(cap(g.parent)+cap(g.edgeStart)+cap(g.targets)+cap(g.takenStart)+cap(g.taken)+cap(g.enabledStart)+cap(g.enabled))*4
	b += int64(cap(g.actions)) * int64(unsafe.Sizeof(""))
	return b + int64(n)*48 // a map entry of [2]uint64 -> int32, with its share of buckets
}

// checkLiveness checks every selected liveness property; on a violation
// it fills res with the lasso.
func (c *checker[S]) checkLiveness(ctx context.Context, start time.Time, res *Result[S]) error {
	g, err := c.buildGraph(ctx)
	if err != nil {
		return err
	}
	if g == nil {
		res.Outcome, res.Reason = Incomplete, "cancelled during the liveness check"
		if c.reason != "" {
			res.Reason = c.reason
		}
		return nil
	}
	names := c.live.LivenessProperties()
	for j, i := range c.lives {
		if ctx.Err() != nil {
			res.Outcome, res.Reason = Incomplete, "cancelled during the liveness check"
			return nil
		}
		l := g.findViolation(g.p[j], g.q[j])
		if l == nil {
			continue
		}
		res.Outcome, res.Violated, res.Kind = Violated, names[i], "liveness"
		res.Trace, res.LoopLabel, res.LoopAction = c.lassoTrace(g, l)
		res.LoopStart = l.loop
		return nil
	}
	return nil
}
