package modelcheck

import (
	"context"
	"sort"
)

// ActionCoverage is one action's line of a coverage report. Generated and
// Distinct are TLC's -coverage figures: the successors the action
// generated (every enabled instance, from every distinct state,
// self-loops included) and how many of them were states the search had
// not seen before (so they depend on the search order: an action whose
// every target is also reached by a shorter path finds none). Reached is
// the number of distinct states the action leads to other than the state
// it starts from: an action with Reached = 0 never changes the state, so
// its guard or its effect is dead in this model.
type ActionCoverage struct {
	Action    string `json:"action"`
	Generated int64  `json:"generated"`
	Distinct  int64  `json:"distinct"`
	Reached   int64  `json:"reached"`
}

// Coverage explores the reachable state space of m breadth first on one
// goroutine and returns, per action, the successors it generated and the
// new states it found, in the order the actions first appear. Actions
// that never fire do not appear; a caller that knows the model's actions
// (ActionNames) can list those as zero. maxStates bounds the run (0: no
// bound); it returns ctx.Err() if ctx ends first.
//
// It is a separate, plain search, kept apart from Check so that the
// checker's hot loop pays nothing for it; the seen set holds 64-bit
// fingerprints.
func Coverage[S any](ctx context.Context, m Model[S], maxStates int64) ([]ActionCoverage, error) {
	seen := map[uint64]struct{}{}
	var buf []byte
	var queue []S
	add := func(s S) bool {
		buf = m.Encode(buf[:0], s)
		fp := fingerprint(buf)
		if _, ok := seen[fp]; ok {
			return false
		}
		seen[fp] = struct{}{}
		queue = append(queue, s)
		return true
	}
	m.Init(func(s S) { add(s) })
	index := map[string]int{}
	var out []ActionCoverage
	var targets []map[uint64]struct{}
	for head := 0; head < len(queue); head++ {
		if head%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if maxStates > 0 && int64(len(seen)) > maxStates {
			break
		}
		from := fingerprint(m.Encode(buf[:0], queue[head]))
		m.Next(queue[head], func(action string, t S) {
			i, ok := index[action]
			if !ok {
				i = len(out)
				index[action] = i
				out = append(out, ActionCoverage{Action: action})
				targets = append(targets, map[uint64]struct{}{})
			}
			out[i].Generated++
			if add(t) {
				out[i].Distinct++
			}
			if to := fingerprint(buf); to != from {
				targets[i][to] = struct{}{}
			}
		})
		var zero S
		queue[head] = zero // let the garbage collector have it
	}
	for i := range out {
		out[i].Reached = int64(len(targets[i]))
	}
	return out, nil
}

// SortCoverage orders a coverage report by the given action order; actions
// not in order go last, by name; actions of order that never fired are
// added with zero counts.
func SortCoverage(cov []ActionCoverage, order []string) []ActionCoverage {
	pos := map[string]int{}
	for i, a := range order {
		pos[a] = i
	}
	have := map[string]bool{}
	for _, c := range cov {
		have[c.Action] = true
	}
	for _, a := range order {
		if !have[a] {
			cov = append(cov, ActionCoverage{Action: a})
		}
	}
	sort.SliceStable(cov, func(i, j int) bool {
		pi, oki := pos[cov[i].Action]
		pj, okj := pos[cov[j].Action]
		switch {
		case oki && okj:
			return pi < pj
		case oki != okj:
			return oki
		}
		return cov[i].Action < cov[j].Action
	})
	return cov
}
