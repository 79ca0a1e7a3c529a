package twophase

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// MaxRMs is the largest number of resource managers a packed state holds.
const MaxRMs = 15

// Resource-manager states (rmState[rm]), two bits each.
const (
	working = iota
	prepared
	committed
	aborted
)

// TM states (tmState).
const (
	tmInit = iota
	tmCommitted
	tmAborted
)

var rmNames = [...]string{"working", "prepared", "committed", "aborted"}
var tmNames = [...]string{"init", "committed", "aborted"}

// State is one state of TwoPhase, packed: rmState in bits [0,2N), tmState
// in [2N,2N+2), tmPrepared in [2N+2,3N+2), the Prepared messages in
// [3N+2,4N+2), then the Commit and the Abort message.
type State uint64

// Model is TwoPhase with N resource managers r1..rN.
type Model struct {
	n   int
	bug bool
	// labels[a][rm] is the precomputed name of action a for rm, so that
	// Next never formats a string.
	labels [5][]string
}

// New returns TwoPhase with n resource managers; bug plants the early
// commit defect.
func New(n int, bug bool) (*Model, error) {
	if n < 1 || n > MaxRMs {
		return nil, fmt.Errorf("twophase: %d resource managers: want 1 to %d", n, MaxRMs)
	}
	m := &Model{n: n, bug: bug}
	for a, name := range []string{"TMRcvPrepared", "RMPrepare", "RMChooseToAbort", "RMRcvCommitMsg", "RMRcvAbortMsg"} {
		for rm := 0; rm < n; rm++ {
			m.labels[a] = append(m.labels[a], fmt.Sprintf("%s(r%d)", name, rm+1))
		}
	}
	return m, nil
}

func (m *Model) rm(s State, i int) int         { return int(s>>(2*i)) & 3 }
func (m *Model) tm(s State) int                { return int(s>>(2*m.n)) & 3 }
func (m *Model) preparedBit(i int) State       { return 1 << (2*m.n + 2 + i) }
func (m *Model) msgPrepared(i int) State       { return 1 << (3*m.n + 2 + i) }
func (m *Model) msgCommit() State              { return 1 << (4*m.n + 2) }
func (m *Model) msgAbort() State               { return 1 << (4*m.n + 3) }
func (m *Model) setRM(s State, i, v int) State { return s&^(3<<(2*i)) | State(v)<<(2*i) }
func (m *Model) setTM(s State, v int) State {
	return s&^(3<<(2*m.n)) | State(v)<<(2*m.n)
}
func (m *Model) allPrepared() State { return (1<<m.n - 1) << (2*m.n + 2) }

// Init emits TPInit: every RM working, the TM in init, nothing prepared,
// no message.
func (m *Model) Init(emit func(State)) { emit(0) }

// Next emits the successors of TPNext in its disjunct order: TMCommit,
// TMAbort, then for each rm TMRcvPrepared, RMPrepare, RMChooseToAbort,
// RMRcvCommitMsg and RMRcvAbortMsg.
func (m *Model) Next(s State, emit func(string, State)) {
	tm := m.tm(s)
	// TMCommit: the TM commits once every RM has prepared (with the bug,
	// once any has).
	ready := s&m.allPrepared() == m.allPrepared()
	if m.bug {
		ready = s&m.allPrepared() != 0
	}
	if tm == tmInit && ready {
		emit("TMCommit", m.setTM(s, tmCommitted)|m.msgCommit())
	}
	// TMAbort: the TM spontaneously aborts.
	if tm == tmInit {
		emit("TMAbort", m.setTM(s, tmAborted)|m.msgAbort())
	}
	for i := 0; i < m.n; i++ {
		// TMRcvPrepared(rm): the TM receives rm's Prepared message.
		if tm == tmInit && s&m.msgPrepared(i) != 0 {
			emit(m.labels[0][i], s|m.preparedBit(i))
		}
		r := m.rm(s, i)
		// RMPrepare(rm): rm prepares and says so.
		if r == working {
			emit(m.labels[1][i], m.setRM(s, i, prepared)|m.msgPrepared(i))
		}
		// RMChooseToAbort(rm): rm spontaneously aborts.
		if r == working {
			emit(m.labels[2][i], m.setRM(s, i, aborted))
		}
		// RMRcvCommitMsg(rm): rm is told to commit.
		if s&m.msgCommit() != 0 {
			emit(m.labels[3][i], m.setRM(s, i, committed))
		}
		// RMRcvAbortMsg(rm): rm is told to abort.
		if s&m.msgAbort() != 0 {
			emit(m.labels[4][i], m.setRM(s, i, aborted))
		}
	}
}

// PlainState declares State (one packed word) plain for the checker,
// which then fingerprints its bytes directly (modelcheck.Plain).
func (m *Model) PlainState() {}

// Encode appends the packed state.
func (m *Model) Encode(dst []byte, s State) []byte {
	return binary.LittleEndian.AppendUint64(dst, uint64(s))
}

// Invariants lists TPTypeOK and TCConsistent (from TCommit.tla).
func (m *Model) Invariants() []string { return []string{"TPTypeOK", "TCConsistent"} }

// Holds evaluates invariant i.
func (m *Model) Holds(i int, s State) bool {
	switch i {
	case 0: // TPTypeOK: a packed state can only break it with tmState = 3.
		return m.tm(s) <= tmAborted
	case 1: // TCConsistent: no RM committed while another aborted.
		var seen [4]bool
		for j := 0; j < m.n; j++ {
			seen[m.rm(s, j)] = true
		}
		return !(seen[committed] && seen[aborted])
	}
	return false
}

// Vars shows the state as TwoPhase's variables, each value as TLC prints
// it (checker check --dump writes them as TLC's -dump does).
func (m *Model) Vars(s State) [][2]string {
	var rms, prep, msgs []string
	for i := 0; i < m.n; i++ {
		rms = append(rms, fmt.Sprintf("r%d :> %q", i+1, rmNames[m.rm(s, i)]))
		if s&m.preparedBit(i) != 0 {
			prep = append(prep, fmt.Sprintf("r%d", i+1))
		}
		if s&m.msgPrepared(i) != 0 {
			msgs = append(msgs, fmt.Sprintf("[type |-> \"Prepared\", rm |-> r%d]", i+1))
		}
	}
	if s&m.msgCommit() != 0 {
		msgs = append(msgs, `[type |-> "Commit"]`)
	}
	if s&m.msgAbort() != 0 {
		msgs = append(msgs, `[type |-> "Abort"]`)
	}
	return [][2]string{
		{"rmState", "(" + strings.Join(rms, " @@ ") + ")"}, // a function of the model values r1, …, as TLC prints it
		{"tmState", fmt.Sprintf("%q", tmNames[m.tm(s)%3])},
		{"tmPrepared", "{" + strings.Join(prep, ", ") + "}"},
		{"msgs", "{" + strings.Join(msgs, ", ") + "}"},
	}
}

// Canonical returns the representative of s under every permutation of
// the resource managers (TLC's SYMMETRY Permutations(RM), tla/twophase/
// MCTwoPhase.tla): an RM is its state, whether the TM has its Prepared
// and whether its Prepared message is in flight, four bits; the
// representative holds the same RMs sorted by those bits. Sorting gives
// one state per orbit in O(N log N), instead of N! permuted states.
func (m *Model) Canonical(s State) State {
	var rms [MaxRMs]uint8
	for i := 0; i < m.n; i++ {
		rms[i] = m.rmBits(s, i)
	}
	// Insertion sort: N is at most 15.
	for i := 1; i < m.n; i++ {
		for j := i; j > 0 && rms[j] < rms[j-1]; j-- {
			rms[j], rms[j-1] = rms[j-1], rms[j]
		}
	}
	out := s &^ m.rmMask()
	for i := 0; i < m.n; i++ {
		out = m.withRMBits(out, i, rms[i])
	}
	return out
}

// rmBits packs rm i's part of s: its state, then the TM's Prepared bit,
// then its Prepared message.
func (m *Model) rmBits(s State, i int) uint8 {
	b := uint8(m.rm(s, i))
	if s&m.preparedBit(i) != 0 {
		b |= 4
	}
	if s&m.msgPrepared(i) != 0 {
		b |= 8
	}
	return b
}

// withRMBits sets rm i's part of s, which must be clear, to b.
func (m *Model) withRMBits(s State, i int, b uint8) State {
	s |= State(b&3) << (2 * i)
	if b&4 != 0 {
		s |= m.preparedBit(i)
	}
	if b&8 != 0 {
		s |= m.msgPrepared(i)
	}
	return s
}

// Permute returns s with resource manager i renamed perm[i].
func (m *Model) Permute(s State, perm []int) State {
	out := s &^ m.rmMask()
	for i := 0; i < m.n; i++ {
		out = m.withRMBits(out, perm[i], m.rmBits(s, i))
	}
	return out
}

// rmMask covers every resource manager's bits in a state.
func (m *Model) rmMask() State {
	return State(1)<<(2*m.n) - 1 | m.allPrepared() | (State(1)<<m.n-1)<<(3*m.n+2)
}
