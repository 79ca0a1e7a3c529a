package modelcheck

import "sort"

// fairComponents calls found for every fair SCC of the subgraph allowed
// selects (Emerson–Lei refinement).
func (g *lgraph[S]) fairComponents(allowed []bool, found func([]int32)) {
	n := len(g.states)
	r := &refiner[S]{g: g, mark: make([]int32, n), next: 1,
		enabledCount: make([]int32, len(g.keyNames)), takenIn: make([]bool, len(g.keyNames))}
	var all []int32
	for v := 0; v < n; v++ {
		if allowed[v] {
			r.mark[v] = r.next
			all = append(all, int32(v))
		}
	}
	work := [][]int32{all}
	scratch := newSCCScratch(n)
	for len(work) > 0 {
		nodes := work[len(work)-1]
		work = work[:len(work)-1]
		for _, comp := range g.scc(nodes, r.mark, scratch) {
			r.relabel(comp)
			ok, badStrong := r.judge(comp)
			switch {
			case !ok:
			case len(badStrong) == 0:
				found(comp)
			default:
				if rest := r.dropStrong(comp, badStrong); len(rest) > 0 {
					r.relabel(rest)
					work = append(work, rest)
				}
			}
		}
	}
}

// refiner is the bookkeeping of fairComponents: the subset each node
// belongs to (mark, 0 for none), the last subset label, and per fairness
// instance the counts of the component being judged.
type refiner[S any] struct {
	g            *lgraph[S]
	mark         []int32
	next         int32
	enabledCount []int32 // states of the component where instance k is enabled
	takenIn      []bool  // some edge inside the component takes instance k
}

// relabel puts nodes in a subset of their own.
func (r *refiner[S]) relabel(nodes []int32) {
	r.next++
	for _, v := range nodes {
		r.mark[v] = r.next
	}
}

// judge tallies the fairness instances of comp (the subset labelled
// r.next) and reports whether it may hold a fair cycle: not when a weak
// instance is enabled in all of it and taken nowhere. badStrong lists the
// strong instances enabled somewhere and taken nowhere.
func (r *refiner[S]) judge(comp []int32) (ok bool, badStrong []int) {
	g := r.g
	for k := range r.enabledCount {
		r.enabledCount[k], r.takenIn[k] = 0, false
	}
	for _, v := range comp {
		for _, k := range g.enabled[g.enabledStart[v]:g.enabledStart[v+1]] {
			r.enabledCount[k]++
		}
		for e := g.edgeStart[v]; e < g.edgeStart[v+1]; e++ {
			if r.mark[g.targets[e]] == r.next {
				for _, k := range g.taken[g.takenStart[e]:g.takenStart[e+1]] {
					r.takenIn[k] = true
				}
			}
		}
	}
	for k := range r.enabledCount {
		if r.takenIn[k] || r.enabledCount[k] == 0 {
			continue
		}
		if !g.strong[k] {
			if int(r.enabledCount[k]) == len(comp) {
				return false, nil // weak: enabled throughout, never taken
			}
			continue
		}
		badStrong = append(badStrong, k)
	}
	return true, badStrong
}

// dropStrong removes from comp the states where an instance of badStrong
// is enabled, and returns the rest.
func (r *refiner[S]) dropStrong(comp []int32, badStrong []int) []int32 {
	g := r.g
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
			r.mark[v] = 0
		} else {
			rest = append(rest, v)
		}
	}
	return rest
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
