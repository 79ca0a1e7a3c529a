package modelcheck

import (
	"context"
	"fmt"
	"sort"
	"time"
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
	g := &lgraph[S]{}
	c.distinct.Store(0)
	ids := map[uint64]int32{}
	keyIndex := map[string]int32{}
	var buf []byte
	var keyErr error
	// key interns a fairness instance. Its strength is known once it has
	// been seen enabled; an instance only ever seen taken is never enabled
	// and so constrains nothing, whatever its strength.
	known := []bool{}
	key := func(k string, strong, fromEnabled bool) int32 {
		i, ok := keyIndex[k]
		if !ok {
			i = int32(len(g.keyNames))
			keyIndex[k] = i
			g.keyNames = append(g.keyNames, k)
			g.strong = append(g.strong, strong)
			known = append(known, fromEnabled)
		} else if fromEnabled && !known[i] {
			g.strong[i], known[i] = strong, true
		} else if fromEnabled && g.strong[i] != strong && keyErr == nil {
			keyErr = fmt.Errorf("modelcheck: fairness instance %q is both weak and strong", k)
		}
		return i
	}
	add := func(s S, parent int32) int32 {
		buf = c.m.Encode(buf[:0], s)
		fp := fingerprint(buf)
		if id, ok := ids[fp]; ok {
			return id
		}
		id := int32(len(g.states))
		ids[fp] = id
		g.states = append(g.states, s)
		g.parent = append(g.parent, parent)
		return id
	}
	c.m.Init(func(s S) {
		if c.cons == nil || c.cons.Constraint(s) {
			add(s, -1)
		}
	})
	g.edgeStart = append(g.edgeStart, 0)
	g.takenStart = append(g.takenStart, 0)
	g.enabledStart = append(g.enabledStart, 0)
	g.p = make([][]bool, len(c.lives))
	g.q = make([][]bool, len(c.lives))
	for v := int32(0); int(v) < len(g.states); v++ {
		if v&1023 == 0 && ctx.Err() != nil {
			return nil, nil
		}
		s := g.states[v]
		c.m.Next(s, func(action string, t S) {
			if c.cons != nil && !c.cons.Constraint(t) {
				return
			}
			w := add(t, v)
			g.targets = append(g.targets, w)
			g.actions = append(g.actions, action)
			c.live.FairTaken(action, s, t, func(k string) {
				g.taken = append(g.taken, key(k, false, false))
			})
			g.takenStart = append(g.takenStart, int32(len(g.taken)))
		})
		g.edgeStart = append(g.edgeStart, int32(len(g.targets)))
		c.live.FairEnabled(s, func(k string, strong bool) {
			g.enabled = append(g.enabled, key(k, strong, true))
		})
		g.enabledStart = append(g.enabledStart, int32(len(g.enabled)))
		for j, i := range c.lives {
			p, q := c.live.LeadsTo(i, s)
			g.p[j] = append(g.p[j], p)
			g.q[j] = append(g.q[j], q)
		}
		c.distinct.Store(int64(len(g.states)))
		c.queue.Store(int64(len(g.states)) - int64(v) - 1)
	}
	return g, keyErr
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
		return nil
	}
	names := c.live.LivenessProperties()
	for j, i := range c.lives {
		if ctx.Err() != nil {
			res.Outcome, res.Reason = Incomplete, "cancelled during the liveness check"
			return nil
		}
		lasso, loop := g.findViolation(g.p[j], g.q[j])
		if lasso == nil {
			continue
		}
		res.Outcome, res.Violated, res.Kind = Violated, names[i], "liveness"
		res.Trace = c.lassoTrace(g, lasso)
		res.LoopStart = loop
		return nil
	}
	return nil
}

// findViolation returns a lasso (node path from an initial state, the
// loop starting at index loop and returning to it), or nil.
func (g *lgraph[S]) findViolation(p, q []bool) (path []int32, loop int) {
	n := len(g.states)
	inB := make([]bool, n) // states without Q
	for v := 0; v < n; v++ {
		inB[v] = !q[v]
	}
	fair := make([]bool, n) // member of a fair SCC inside B
	var comps [][]int32
	g.fairComponents(inB, func(comp []int32) {
		comps = append(comps, comp)
		for _, v := range comp {
			fair[v] = true
		}
	})
	if len(comps) == 0 {
		return nil, 0
	}
	// States with P and not Q that reach a fair component inside B:
	// backward search from the components over B.
	rev := g.reverse()
	reach := make([]bool, n)
	var queue []int32
	for v := 0; v < n; v++ {
		if fair[v] {
			reach[v] = true
			queue = append(queue, int32(v))
		}
	}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, u := range rev.out(v) {
			if inB[u] && !reach[u] {
				reach[u] = true
				queue = append(queue, u)
			}
		}
	}
	// The shallowest trigger gives the shortest prefix (nodes are in BFS
	// order, so the lowest id is a shallowest one).
	start := int32(-1)
	for v := 0; v < n; v++ {
		if p[v] && inB[v] && reach[v] {
			start = int32(v)
			break
		}
	}
	if start < 0 {
		return nil, 0
	}
	for v := start; v >= 0; v = g.parent[v] {
		path = append(path, v)
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	// Walk inside B from start to the nearest fair state.
	toFair := g.shortestPath(start, func(v int32) bool { return fair[v] }, func(v int32) bool { return inB[v] })
	path = append(path, toFair[1:]...)
	entry := path[len(path)-1]
	var comp []int32
	for _, cm := range comps {
		for _, v := range cm {
			if v == entry {
				comp = cm
			}
		}
	}
	cycle := g.fairCycle(entry, comp)
	loop = len(path) - 1
	path = append(path, cycle...)
	return path, loop
}

// out returns v's successors.
func (g *lgraph[S]) out(v int32) []int32 { return g.targets[g.edgeStart[v]:g.edgeStart[v+1]] }

// reverse returns the graph with its edges turned round (targets only).
func (g *lgraph[S]) reverse() *lgraph[S] {
	n := len(g.states)
	r := &lgraph[S]{edgeStart: make([]int32, n+1), targets: make([]int32, len(g.targets))}
	for _, w := range g.targets {
		r.edgeStart[w+1]++
	}
	for v := 0; v < n; v++ {
		r.edgeStart[v+1] += r.edgeStart[v]
	}
	fill := append([]int32(nil), r.edgeStart[:n]...)
	for v := 0; v < n; v++ {
		for _, w := range g.out(int32(v)) {
			r.targets[fill[w]] = int32(v)
			fill[w]++
		}
	}
	return r
}

// fairComponents calls found for every fair SCC of the subgraph allowed
// selects (Emerson–Lei refinement).
func (g *lgraph[S]) fairComponents(allowed []bool, found func([]int32)) {
	n := len(g.states)
	mark := make([]int32, n) // the subset a node currently belongs to
	next := int32(1)
	for v := 0; v < n; v++ {
		if allowed[v] {
			mark[v] = next
		}
	}
	type task struct{ nodes []int32 }
	var all []int32
	for v := 0; v < n; v++ {
		if allowed[v] {
			all = append(all, int32(v))
		}
	}
	work := []task{{all}}
	keys := len(g.keyNames)
	enabledCount := make([]int32, keys)
	takenIn := make([]bool, keys)
	scratch := newSCCScratch(n)
	for len(work) > 0 {
		t := work[len(work)-1]
		work = work[:len(work)-1]
		comps := g.scc(t.nodes, mark, scratch)
		for _, comp := range comps {
			next++
			for _, v := range comp {
				mark[v] = next
			}
			for k := range enabledCount {
				enabledCount[k], takenIn[k] = 0, false
			}
			for _, v := range comp {
				for _, k := range g.enabled[g.enabledStart[v]:g.enabledStart[v+1]] {
					enabledCount[k]++
				}
				for e := g.edgeStart[v]; e < g.edgeStart[v+1]; e++ {
					if mark[g.targets[e]] == next {
						for _, k := range g.taken[g.takenStart[e]:g.takenStart[e+1]] {
							takenIn[k] = true
						}
					}
				}
			}
			ok := true
			var badStrong []int
			for k := 0; k < keys; k++ {
				if takenIn[k] || enabledCount[k] == 0 {
					continue
				}
				if !g.strong[k] {
					if int(enabledCount[k]) == len(comp) {
						ok = false // weak: enabled throughout, never taken
						break
					}
					continue
				}
				badStrong = append(badStrong, k)
			}
			if !ok {
				continue
			}
			if len(badStrong) == 0 {
				found(comp)
				continue
			}
			// Drop the states where an untaken strong instance is enabled.
			var rest []int32
			for _, v := range comp {
				drop := false
				for _, k := range g.enabled[g.enabledStart[v]:g.enabledStart[v+1]] {
					for _, b := range badStrong {
						if int(k) == b {
							drop = true
						}
					}
				}
				if drop {
					mark[v] = 0
				} else {
					rest = append(rest, v)
				}
			}
			if len(rest) > 0 {
				next++
				for _, v := range rest {
					mark[v] = next
				}
				work = append(work, task{rest})
			}
		}
	}
}

// sccScratch is the per-node bookkeeping of Tarjan's algorithm, allocated
// once for a graph and reset only for the nodes of each call.
type sccScratch struct {
	index, low []int32
	onStack    []bool
}

func newSCCScratch(n int) *sccScratch {
	return &sccScratch{index: make([]int32, n), low: make([]int32, n), onStack: make([]bool, n)}
}

// scc returns the strongly connected components of the subgraph of nodes
// (all with the same mark), by an iterative Tarjan.
func (g *lgraph[S]) scc(nodes []int32, mark []int32, x *sccScratch) [][]int32 {
	if len(nodes) == 0 {
		return nil
	}
	for _, v := range nodes {
		x.index[v], x.onStack[v] = -1, false
	}
	m := mark[nodes[0]]
	index, low, onStack := x.index, x.low, x.onStack
	var stack []int32
	var comps [][]int32
	counter := int32(0)
	type frame struct {
		v int32
		e int32
	}
	for _, root := range nodes {
		if index[root] >= 0 {
			continue
		}
		call := []frame{{root, g.edgeStart[root]}}
		index[root], low[root] = counter, counter
		counter++
		stack = append(stack, root)
		onStack[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			v := f.v
			if f.e < g.edgeStart[v+1] {
				w := g.targets[f.e]
				f.e++
				if mark[w] != m {
					continue
				}
				if index[w] < 0 {
					index[w], low[w] = counter, counter
					counter++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{w, g.edgeStart[w]})
				} else if onStack[w] && index[w] < low[v] {
					low[v] = index[w]
				}
				continue
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				u := call[len(call)-1].v
				if low[v] < low[u] {
					low[u] = low[v]
				}
			}
			if low[v] == index[v] {
				var comp []int32
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp = append(comp, w)
					if w == v {
						break
					}
				}
				sort.Slice(comp, func(i, j int) bool { return comp[i] < comp[j] })
				comps = append(comps, comp)
			}
		}
	}
	return comps
}

// shortestPath returns a shortest path from src to a node satisfying goal,
// moving only through nodes that allowed accepts.
func (g *lgraph[S]) shortestPath(src int32, goal, allowed func(int32) bool) []int32 {
	prev := map[int32]int32{src: -1}
	queue := []int32{src}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		if goal(v) {
			var path []int32
			for u := v; u >= 0; u = prev[u] {
				path = append(path, u)
			}
			for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
				path[i], path[j] = path[j], path[i]
			}
			return path
		}
		for _, w := range g.out(v) {
			if _, seen := prev[w]; !seen && allowed(w) {
				prev[w] = v
				queue = append(queue, w)
			}
		}
	}
	return nil
}

// fairCycle returns the nodes of a cycle through comp that starts at
// entry (excluded: the trace already ends there) and returns to it, and
// that takes every instance taken in comp and visits a state disabling
// each weak instance that comp does not take. An empty cycle means entry
// stutters forever.
func (g *lgraph[S]) fairCycle(entry int32, comp []int32) []int32 {
	in := map[int32]bool{}
	for _, v := range comp {
		in[v] = true
	}
	inComp := func(v int32) bool { return in[v] }
	keys := len(g.keyNames)
	takenBy := make([]int32, keys) // an edge index inside comp taking k, or -1
	for k := range takenBy {
		takenBy[k] = -1
	}
	enabledAll := make([]int, keys)
	for _, v := range comp {
		for _, k := range g.enabled[g.enabledStart[v]:g.enabledStart[v+1]] {
			enabledAll[k]++
		}
		for e := g.edgeStart[v]; e < g.edgeStart[v+1]; e++ {
			if in[g.targets[e]] {
				for _, k := range g.taken[g.takenStart[e]:g.takenStart[e+1]] {
					if takenBy[k] < 0 {
						takenBy[k] = e
					}
				}
			}
		}
	}
	var cycle []int32
	cur := entry
	walkTo := func(target int32) {
		p := g.shortestPath(cur, func(v int32) bool { return v == target }, inComp)
		cycle = append(cycle, p[1:]...)
		cur = target
	}
	for k := 0; k < keys; k++ {
		switch {
		case takenBy[k] >= 0:
			e := takenBy[k]
			src := int32(sort.Search(len(g.states), func(v int) bool { return g.edgeStart[v+1] > e }))
			walkTo(src)
			cycle = append(cycle, g.targets[e])
			cur = g.targets[e]
		case enabledAll[k] > 0 && !g.strong[k]:
			// Weak, not taken: visit a state where k is disabled.
			for _, v := range comp {
				if !g.enabledIn(v, int32(k)) {
					walkTo(v)
					break
				}
			}
		}
	}
	if cur != entry {
		walkTo(entry)
	}
	if len(cycle) > 0 {
		cycle = cycle[:len(cycle)-1] // the loop returns to entry, already on the trace
	}
	return cycle
}

func (g *lgraph[S]) enabledIn(v, k int32) bool {
	for _, x := range g.enabled[g.enabledStart[v]:g.enabledStart[v+1]] {
		if x == k {
			return true
		}
	}
	return false
}

// lassoTrace turns a node path into steps, naming each step's action.
func (c *checker[S]) lassoTrace(g *lgraph[S], path []int32) []Step[S] {
	trace := []Step[S]{{Action: "Init", Label: "Init", State: g.states[path[0]]}}
	for i := 1; i < len(path); i++ {
		u, v := path[i-1], path[i]
		action := "?"
		for e := g.edgeStart[u]; e < g.edgeStart[u+1]; e++ {
			if g.targets[e] == v {
				action = g.actions[e]
				break
			}
		}
		trace = append(trace, Step[S]{Action: action, Label: c.label(action, g.states[u], g.states[v]), State: g.states[v]})
	}
	return trace
}
