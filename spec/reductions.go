package spec

import "slices"

// This file transcribes the definitions of tla/MCDrainRegistrationReduced.tla
// that a cfg may name under CONSTRAINT, ACTION_CONSTRAINT, VIEW and
// SYMMETRY; harness/drainmodel looks them up by name.

// MCConstraints are the state constraints of MCDrainRegistrationReduced.
var MCConstraints = map[string]func(s State) bool{
	// NetAtMostOne == Cardinality(net) <= 1
	"NetAtMostOne": func(s State) bool { return s.NetLen <= 1 },
}

// MCActionConstraints are the action constraints of
// MCDrainRegistrationReduced.
var MCActionConstraints = map[string]func(from, to State) bool{
	// NoCrashRestartStep == epoch' = epoch \/ drainedEpoch = epoch
	"NoCrashRestartStep": func(from, to State) bool { return to.Epoch == from.Epoch || from.DrainedEpoch == from.Epoch },
}

// MCViews are the views of MCDrainRegistrationReduced: each appends the
// encoding of s's view to dst.
var MCViews = map[string]func(m *Model, dst []byte, s State) []byte{
	// WithoutWork == <<epoch, version, liveness, ..., legacyEpoch, cache,
	// net>>: every variable but work.
	"WithoutWork": func(m *Model, dst []byte, s State) []byte {
		s.Work = 0
		return m.Encode(dst, s)
	},
}

// MCSymmetries are the symmetry sets of MCDrainRegistrationReduced, as
// the dispatchers whose permutations they hold (see SymmetryMask).
var MCSymmetries = map[string]func(c Config) []string{
	// OrdinarySymmetry == Permutations(Dispatchers \ TableTriggers)
	"OrdinarySymmetry": func(c Config) []string {
		var out []string
		for _, d := range c.Dispatchers {
			if !slices.Contains(c.TableTriggers, d) {
				out = append(out, d)
			}
		}
		return out
	},
}
