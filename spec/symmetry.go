package spec

import (
	"fmt"
	"slices"
)

// This file is the symmetry of DrainRegistration.tla: TLC's SYMMETRY
// Permutations(S) for a set S of dispatchers (tla/MCDrainRegistrationReduced.tla
// defines OrdinarySymmetry == Permutations(Dispatchers \ TableTriggers)).
// The module treats dispatchers alike except for TableTriggers, so any
// permutation of ordinary dispatchers among themselves, or of table
// triggers among themselves, maps behaviours to behaviours.
//
// The part of a State that names dispatchers is, per dispatcher d, pc[d],
// brk[d], d's bit in subscribed, schemaRef and removed, and d's REGISTERs
// in flight (d's row of regs); nothing else (counts, the coordinator, the
// network) names one. A field added to State that is indexed by
// dispatcher must be added to dispatcherKey and withDispatcherKey;
// TestSymmetryPermutesEveryDispatcherField fails until it is.

// SymmetryMask returns the bitmask of the dispatchers named, checking that
// they are dispatchers of the model and all of one kind (all table
// triggers or none): a permutation that swaps a table trigger with an
// ordinary dispatcher is no symmetry of the module.
func (m *Model) SymmetryMask(names []string) (uint8, error) {
	var mask uint8
	for _, n := range names {
		d := slices.Index(m.cfg.Dispatchers, n)
		if d < 0 {
			return 0, fmt.Errorf("%w: symmetry set names %q, which is not a dispatcher", ErrConstant, n)
		}
		mask |= 1 << d
	}
	if mask&m.tt != 0 && mask&^m.tt != 0 {
		return 0, fmt.Errorf("%w: symmetry set mixes table triggers and ordinary dispatchers, which the model treats differently", ErrConstant)
	}
	return mask, nil
}

// dispatcherKey packs what s says about dispatcher d: its pc, its bits in
// subscribed, schemaRef and removed, its broker and its REGISTERs in
// flight, ordered by pc first.
func dispatcherKey(s *State, d int) uint32 {
	regs := s.Regs >> (d * MaxBrokers) & (1<<MaxBrokers - 1)
	return uint32(s.Pc[d])<<24 | uint32(b2u(bit(s.Subscribed, d)))<<20 | uint32(b2u(bit(s.SchemaRef, d)))<<21 |
		uint32(b2u(bit(s.Removed, d)))<<22 | uint32(uint8(s.Brk[d]+1))<<8 | regs
}

// withDispatcherKey sets what s says about dispatcher d to key k.
func withDispatcherKey(s *State, d int, k uint32) {
	s.Pc[d] = Pc(k >> 24)
	s.Subscribed = setBit(s.Subscribed, d, k&(1<<20) != 0)
	s.SchemaRef = setBit(s.SchemaRef, d, k&(1<<21) != 0)
	s.Removed = setBit(s.Removed, d, k&(1<<22) != 0)
	s.Brk[d] = int8(uint8(k>>8)) - 1
	row := uint32(1<<MaxBrokers-1) << (d * MaxBrokers)
	s.Regs = s.Regs&^row | (k&(1<<MaxBrokers-1))<<(d*MaxBrokers)
}

// Canonical returns the representative of s's orbit under every
// permutation of the dispatchers in mask (see SymmetryMask): the
// dispatchers' parts sorted, so the representative is one state of the
// orbit, the same for all, found in O(n log n) rather than n! states.
func (m *Model) Canonical(s State, mask uint8) State {
	var pos [MaxDispatchers]int
	var keys [MaxDispatchers]uint32
	n := 0
	for d := 0; d < m.nd; d++ {
		if bit(mask, d) {
			pos[n], keys[n] = d, dispatcherKey(&s, d)
			n++
		}
	}
	slices.Sort(keys[:n])
	for i := 0; i < n; i++ {
		withDispatcherKey(&s, pos[i], keys[i])
	}
	return s
}

// Permute returns s with dispatcher d renamed perm[d] (perm is a
// permutation of 0..n-1 over the sorted Config().Dispatchers).
func (m *Model) Permute(s State, perm []int) State {
	out := s
	for d := 0; d < m.nd; d++ {
		withDispatcherKey(&out, perm[d], dispatcherKey(&s, d))
	}
	return out
}
