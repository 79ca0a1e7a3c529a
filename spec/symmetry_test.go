package spec_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/drainproof/drainproof/spec"
	"github.com/stretchr/testify/require"
)

// symmetryModel is MCDrainRegistrationSymmetryFull.cfg: d1 and d2
// ordinary, d3 a table trigger (the other constants DefaultConfig's).
func symmetryModel(t *testing.T) *spec.Model {
	t.Helper()
	c := spec.DefaultConfig()
	c.Dispatchers, c.TableTriggers, c.MaxMsgs = []string{"d1", "d2", "d3"}, []string{"d3"}, 1
	m, err := spec.New(c)
	require.NoError(t, err)
	return m
}

func reachable(m *spec.Model) []spec.State {
	seen := map[spec.State]bool{}
	var out []spec.State
	m.Init(func(s spec.State) { seen[s] = true; out = append(out, s) })
	for i := 0; i < len(out); i++ {
		m.Next(out[i], func(_ string, t spec.State) {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		})
	}
	return out
}

// renamed is Vars(s) with dispatcher names swapped by the permutation
// (d1 <-> d2): every "(d :> v @@ ...)" function has its arguments renamed
// and put back in order; any other variable is unchanged.
func renamed(vars [][2]string, swap map[string]string) [][2]string {
	out := make([][2]string, len(vars))
	for i, v := range vars {
		out[i] = v
		val := v[1]
		if strings.HasPrefix(val, "{[disp |-> ") {
			// A set of records naming dispatchers (regs).
			elems := strings.Split(strings.TrimSuffix(strings.TrimPrefix(val, "{["), "]}"), "], [")
			for j, e := range elems {
				for from, to := range swap {
					if strings.HasPrefix(e, "disp |-> "+from+",") {
						elems[j] = "disp |-> " + to + "," + strings.TrimPrefix(e, "disp |-> "+from+",")
						break
					}
				}
			}
			slices.Sort(elems)
			out[i][1] = "{[" + strings.Join(elems, "], [") + "]}"
			continue
		}
		if !strings.HasPrefix(val, "(") || !strings.Contains(val, " :> ") {
			continue
		}
		parts := strings.Split(strings.TrimSuffix(strings.TrimPrefix(val, "("), ")"), " @@ ")
		for j, p := range parts {
			name, rest, _ := strings.Cut(p, " :> ")
			if to, ok := swap[name]; ok {
				name = to
			}
			parts[j] = name + " :> " + rest
		}
		slices.Sort(parts)
		out[i][1] = "(" + strings.Join(parts, " @@ ") + ")"
	}
	return out
}

// Permute renames every part of a state that names a dispatcher, and
// nothing else: checked against the TLA+ variables as Vars prints them, so
// a dispatcher-indexed field that Permute (and so Canonical) misses fails
// here. And the swap of two ordinary dispatchers is a symmetry of Next:
// the successors of the swapped state are the swapped successors.
func TestSymmetryPermutesEveryDispatcherField(t *testing.T) {
	m := symmetryModel(t)
	swap := map[string]string{"d1": "d2", "d2": "d1"}
	perm := []int{1, 0, 2}
	mask, err := m.SymmetryMask([]string{"d1", "d2"})
	require.NoError(t, err)
	states := reachable(m)
	require.Equal(t, 187750, len(states)) // TLC: MCDrainRegistrationSymmetryFull.cfg
	orbits := map[spec.State]bool{}
	for n, s := range states {
		ps := m.Permute(s, perm)
		c := m.Canonical(s, mask)
		if c != m.Canonical(ps, mask) {
			t.Fatalf("state %d: the swapped state has another representative", n)
		}
		if c != s && c != ps {
			t.Fatalf("state %d: the representative is no permutation of the state", n)
		}
		orbits[c] = true
		if n%5 != 0 {
			continue // variables and successors of every fifth state: the test stays short
		}
		require.Equal(t, renamed(m.Vars(s), swap), m.Vars(ps))
		var succ, psucc []spec.State
		m.Next(s, func(_ string, t spec.State) { succ = append(succ, m.Canonical(m.Permute(t, perm), mask)) })
		m.Next(ps, func(_ string, t spec.State) { psucc = append(psucc, m.Canonical(t, mask)) })
		key := func(a, b spec.State) int { return strings.Compare(string(m.Encode(nil, a)), string(m.Encode(nil, b))) }
		slices.SortFunc(succ, key)
		slices.SortFunc(psucc, key)
		require.Equal(t, succ, psucc)
	}
	require.Equal(t, 104709, len(orbits)) // TLC with SYMMETRY OrdinarySymmetry
	_, err = m.SymmetryMask([]string{"d1", "d3"})
	require.ErrorIs(t, err, spec.ErrConstant)
	_, err = m.SymmetryMask([]string{"d9"})
	require.ErrorIs(t, err, spec.ErrConstant)
}
