package modelcheck

import (
	"context"
	"fmt"
	"slices"
	"sort"
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
	g := &lgraph[S]{}
	c.distinct.Store(0)
	ids := map[[2]uint64]int32{}
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
	add := func(s S, fp, hi uint64, parent int32) int32 {
		if id, ok := ids[[2]uint64{fp, hi}]; ok {
			return id
		}
		id := int32(len(g.states))
		ids[[2]uint64{fp, hi}] = id
		g.states = append(g.states, s)
		g.parent = append(g.parent, parent)
		return id
	}
	c.m.Init(func(s S) {
		if c.cons == nil || c.cons.Constraint(s) {
			var fp, hi uint64
			buf, fp, hi = c.key(buf, s)
			add(s, fp, hi, -1)
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
		if b := c.opts.MemoryBudget; b > 0 && g.bytes(len(ids))+c.set.mem.Load() > b {
			c.reason = fmt.Sprintf("memory budget of %s reached during the liveness check (state graph of %d states)", sizeText(b), len(g.states))
			return nil, nil
		}
		hi := min(int32(len(g.states)), v+graphWindow)
		exp = c.expandNodes(g.states[v:hi], exp)
		for k := range exp[:hi-v] {
			x := &exp[k]
			for _, e := range x.edges {
				g.targets = append(g.targets, add(e.to, e.fp, e.hi, v))
				g.actions = append(g.actions, e.action)
				for _, k := range e.taken {
					g.taken = append(g.taken, key(k, false, false))
				}
				g.takenStart = append(g.takenStart, int32(len(g.taken)))
			}
			g.edgeStart = append(g.edgeStart, int32(len(g.targets)))
			for _, en := range x.enabled {
				g.enabled = append(g.enabled, key(en.key, en.strong, true))
			}
			g.enabledStart = append(g.enabledStart, int32(len(g.enabled)))
			for j := range c.lives {
				g.p[j] = append(g.p[j], x.p[j])
				g.q[j] = append(g.q[j], x.q[j])
			}
			v++
		}
		c.distinct.Store(int64(len(g.states)))
		c.queue.Store(int64(len(g.states)) - int64(v))
	}
	return g, keyErr
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
		res.Trace, res.LoopLabel = c.lassoTrace(g, l)
		res.LoopStart = l.loop
		return nil
	}
	return nil
}

// lasso is a liveness counterexample in the graph: nodes[0] is an initial
// state, edges[i] leads from nodes[i] to nodes[i+1], and the last edge
// leads from the last node back to nodes[loop] (no edge: the last state
// stutters forever, and loop is its index).
type lasso struct {
	nodes, edges []int32
	loop         int
}

// maxEntries bounds how many loop entries findViolation tries.
const maxEntries = 256

// findViolation returns a shortest-stem lasso for P ~> Q, or nil.
//
// The stem is a shortest path from an initial state, through a state with
// P and not Q, then inside the states without Q, to a state of a fair
// component (a breadth-first search over (state, trigger passed) pairs).
// Among the entries into fair components found at increasing stem
// lengths, up to maxEntries, the one with the shortest stem plus cycle is
// kept. The cycle itself is built greedily (fairCycle), so it is fair but
// not always the shortest fair cycle.
func (g *lgraph[S]) findViolation(p, q []bool) *lasso {
	n := len(g.states)
	inB := make([]bool, n) // states without Q
	for v := 0; v < n; v++ {
		inB[v] = !q[v]
	}
	comp := make([]int32, n) // 1 + index of the fair component holding v, or 0
	var comps [][]int32
	g.fairComponents(inB, func(c []int32) {
		comps = append(comps, c)
		for _, v := range c {
			comp[v] = int32(len(comps))
		}
	})
	if len(comps) == 0 {
		return nil
	}
	// Breadth-first search over pairs: node 2v is v before the trigger,
	// 2v+1 is v after it (and so without Q since then).
	prev := make([]int32, 2*n) // predecessor pair + 1 (0: unvisited), -1 for a start
	via := make([]int32, 2*n)  // the edge that reached the pair
	var queue []int32
	visit := func(pair, from, edge int32) {
		if prev[pair] == 0 {
			prev[pair], via[pair] = from+1, edge
			queue = append(queue, pair)
		}
	}
	phase := func(v int32, before bool) int32 {
		if before && !(p[v] && inB[v]) {
			return 2 * v
		}
		return 2*v + 1
	}
	for v := int32(0); int(v) < n; v++ {
		if g.parent[v] < 0 {
			visit(phase(v, true), -2, -1)
		}
	}
	var best *lasso
	tried := 0
	for len(queue) > 0 && tried < maxEntries {
		x := queue[0]
		queue = queue[1:]
		v, after := x/2, x%2 == 1
		if after && comp[v] > 0 {
			stem := g.stem(x, prev, via)
			if best != nil && len(stem.nodes) >= len(best.nodes) {
				break // no longer stem can give a shorter lasso
			}
			tried++
			nodes, edges := g.fairCycle(v, comps[comp[v]-1])
			if best == nil || len(stem.nodes)+len(nodes) < len(best.nodes) {
				stem.nodes = append(stem.nodes, nodes...)
				stem.edges = append(stem.edges, edges...)
				best = stem
			}
		}
		for e := g.edgeStart[v]; e < g.edgeStart[v+1]; e++ {
			w := g.targets[e]
			if after {
				if inB[w] {
					visit(2*w+1, x, e)
				}
			} else {
				visit(phase(w, true), x, e)
			}
		}
	}
	return best
}

// stem follows the search's predecessors back from pair x.
func (g *lgraph[S]) stem(x int32, prev, via []int32) *lasso {
	var nodes, edges []int32
	for {
		nodes = append(nodes, x/2)
		if prev[x] == -1 {
			break
		}
		edges = append(edges, via[x])
		x = prev[x] - 1
	}
	slices.Reverse(nodes)
	slices.Reverse(edges)
	return &lasso{nodes: nodes, edges: edges, loop: len(nodes) - 1}
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

// fairCycle returns a fair cycle through comp from entry: the nodes after
// entry (entry itself excluded: the trace already ends there) and the
// edges, the last of which returns to entry. Empty results mean entry
// stutters forever (no instance is enabled there).
//
// It is greedy: starting with the empty walk at entry, while the walk
// closed by a shortest path back to entry is unfair (a strong instance
// enabled somewhere on it and never taken, or a weak one enabled all
// along and never taken), it extends the walk by a shortest path to the
// nearest edge taking the first such instance (or, for a weak one, to a
// state where it is disabled). Each extension settles one instance for
// good, so there are at most as many as instances; comp being fair, the
// edge or state always exists.
func (g *lgraph[S]) fairCycle(entry int32, comp []int32) (nodes, edges []int32) {
	in := make(map[int32]bool, len(comp))
	for _, v := range comp {
		in[v] = true
	}
	cur := entry
	for {
		backNodes, backEdges := g.pathIn(cur, in, func(v int32) bool { return v == entry }, nil)
		closedNodes := append(append([]int32{entry}, nodes...), backNodes...)
		closedEdges := append(append([]int32(nil), edges...), backEdges...)
		k, weak := g.unfair(closedNodes, closedEdges)
		if k < 0 {
			nodes = append(nodes, backNodes...)
			if len(nodes) > 0 {
				nodes = nodes[:len(nodes)-1] // entry again, where the loop closes
			}
			return nodes, closedEdges
		}
		var goalState func(int32) bool
		if weak {
			goalState = func(v int32) bool { return !g.enabledIn(v, k) }
		}
		pn, pe := g.pathIn(cur, in, goalState, func(e int32) bool { return g.takes(e, k) })
		if pn == nil && pe == nil {
			panic("modelcheck: a fair component without a fair cycle")
		}
		nodes, edges = append(nodes, pn...), append(edges, pe...)
		if len(pn) > 0 {
			cur = pn[len(pn)-1]
		}
	}
}

// unfair returns an instance that makes the closed walk unfair, and
// whether it is weak, or -1. A walk without edges is entry stuttering.
func (g *lgraph[S]) unfair(nodes, edges []int32) (int32, bool) {
	takenIn := map[int32]bool{}
	for _, e := range edges {
		for _, k := range g.taken[g.takenStart[e]:g.takenStart[e+1]] {
			takenIn[k] = true
		}
	}
	count := map[int32]int{}
	seen := map[int32]bool{}
	for _, v := range nodes {
		if seen[v] {
			continue
		}
		seen[v] = true
		for _, k := range g.enabled[g.enabledStart[v]:g.enabledStart[v+1]] {
			count[k]++
		}
	}
	bad, badWeak := int32(-1), false
	for k, c := range count {
		if takenIn[k] || !g.strong[k] && c < len(seen) {
			continue
		}
		if bad < 0 || k < bad {
			bad, badWeak = k, !g.strong[k]
		}
	}
	return bad, badWeak
}

// takes reports whether edge e takes instance k.
func (g *lgraph[S]) takes(e, k int32) bool {
	return slices.Contains(g.taken[g.takenStart[e]:g.takenStart[e+1]], k)
}

// pathIn returns a shortest path from src inside in that ends at a state
// goalState accepts (src itself included) or with an edge goalEdge
// accepts, as the nodes after src and the edges; nil, nil if none. With
// goalState accepting src the path is empty but not nil.
func (g *lgraph[S]) pathIn(src int32, in map[int32]bool, goalState func(int32) bool, goalEdge func(int32) bool) (nodes, edges []int32) {
	type back struct{ from, edge int32 }
	prev := map[int32]back{src: {-1, -1}}
	walk := func(v int32, last int32) ([]int32, []int32) {
		ns, es := []int32{}, []int32{}
		if last >= 0 {
			ns, es = append(ns, g.targets[last]), append(es, last)
		}
		for u := v; prev[u].from >= 0; u = prev[u].from {
			ns, es = append(ns, u), append(es, prev[u].edge)
		}
		slices.Reverse(ns)
		slices.Reverse(es)
		return ns, es
	}
	queue := []int32{src}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		if goalState != nil && goalState(v) && (v != src || goalEdge == nil) {
			return walk(v, -1)
		}
		for e := g.edgeStart[v]; e < g.edgeStart[v+1]; e++ {
			w := g.targets[e]
			if !in[w] {
				continue
			}
			if goalEdge != nil && goalEdge(e) {
				return walk(v, e)
			}
			if _, seen := prev[w]; !seen {
				prev[w] = back{v, e}
				queue = append(queue, w)
			}
		}
	}
	return nil, nil
}

// enabledIn reports whether instance k is enabled in node v.
func (g *lgraph[S]) enabledIn(v, k int32) bool {
	return slices.Contains(g.enabled[g.enabledStart[v]:g.enabledStart[v+1]], k)
}

// lassoTrace turns a lasso into steps, naming each step's action, and
// returns the label of the step that closes the loop ("" for stuttering).
func (c *checker[S]) lassoTrace(g *lgraph[S], l *lasso) ([]Step[S], string) {
	trace := []Step[S]{{Action: "Init", Label: "Init", State: g.states[l.nodes[0]]}}
	for i := 1; i < len(l.nodes); i++ {
		e := l.edges[i-1]
		u, v := l.nodes[i-1], l.nodes[i]
		trace = append(trace, Step[S]{Action: g.actions[e], Label: c.label(g.actions[e], g.states[u], g.states[v]), State: g.states[v]})
	}
	if len(l.edges) < len(l.nodes) {
		return trace, ""
	}
	e := l.edges[len(l.edges)-1]
	return trace, c.label(g.actions[e], g.states[l.nodes[len(l.nodes)-1]], g.states[l.nodes[l.loop]])
}
