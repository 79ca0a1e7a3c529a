package modelcheck

import "slices"

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
func (c *checker[S]) lassoTrace(g *lgraph[S], l *lasso) (trace []Step[S], loopLabel, loopAction string) {
	trace = []Step[S]{{Action: "Init", Label: "Init", State: g.states[l.nodes[0]]}}
	for i := 1; i < len(l.nodes); i++ {
		e := l.edges[i-1]
		u, v := l.nodes[i-1], l.nodes[i]
		trace = append(trace, Step[S]{Action: g.actions[e], Label: c.label(g.actions[e], g.states[u], g.states[v]), State: g.states[v]})
	}
	if len(l.edges) < len(l.nodes) {
		return trace, "", ""
	}
	e := l.edges[len(l.edges)-1]
	return trace, c.label(g.actions[e], g.states[l.nodes[len(l.nodes)-1]], g.states[l.nodes[l.loop]]), g.actions[e]
}
