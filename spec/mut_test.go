package spec_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/spec"
)

// Every program counter prints its TLA+ name, the first (idle) too, and a
// value outside the enumeration prints its number.
func TestPcNames(t *testing.T) {
	names := []string{"idle", "gated", "regated", "replacing", "admitted", "subscribed",
		"registered", "failed", "unsubscribe", "rollback", "removing", "raced"}
	for i, n := range names {
		require.Equal(t, n, spec.Pc(i).String())
	}
	require.Equal(t, spec.PcIdle, spec.Pc(0))
	require.Equal(t, "Pc(-1)", spec.Pc(-1).String())
	require.Equal(t, fmt.Sprintf("Pc(%d)", len(names)), spec.Pc(len(names)).String())
}

// Permute moves each dispatcher's registrations in flight with it and
// leaves nothing behind: with dispatchers d1 and d2 swapped, d1's REGISTER
// to one broker and d2's to another trade places.
func TestPermuteMovesRegistrations(t *testing.T) {
	c := spec.DefaultConfig()
	c.Dispatchers, c.TableTriggers, c.Brokers = []string{"d1", "d2", "d3"}, []string{"d3"}, []string{"b1", "b2"}
	m, err := spec.New(c)
	require.NoError(t, err)
	row := func(d, b int) uint32 { return 1 << (d*spec.MaxBrokers + b) }
	s := m.InitState()
	s.Regs = row(0, 0) | row(1, 1) | row(2, 0)
	ps := m.Permute(s, []int{1, 0, 2})
	require.Equal(t, row(0, 1)|row(1, 0)|row(2, 0), ps.Regs)
	require.Equal(t, s, m.Permute(ps, []int{1, 0, 2}), "a swap twice is the identity")
}

// With as many brokers as a Config may name, a dispatcher's last broker is
// followed in the registrations by the next dispatcher's first: losing
// one REGISTER in flight is one step, named for its own dispatcher and
// broker, never for a broker past the last.
func TestLoseRegisterWithEveryBroker(t *testing.T) {
	c := spec.DefaultConfig()
	c.Brokers = nil
	for b := 1; b <= spec.MaxBrokers; b++ {
		c.Brokers = append(c.Brokers, fmt.Sprintf("b%d", b))
	}
	m, err := spec.New(c)
	require.NoError(t, err)
	for d := range c.Dispatchers {
		for b := range c.Brokers {
			s := m.InitState()
			s.Regs = 1 << (d*spec.MaxBrokers + b)
			var lost []string
			m.Next(s, func(a string, u spec.State) {
				if a == "NetLoseRegister" {
					require.Zero(t, u.Regs)
					lost = append(lost, m.Describe(a, s, u))
				}
			})
			require.Equal(t, []string{fmt.Sprintf("NetLoseRegister(%s, %s)", c.Dispatchers[d], c.Brokers[b])}, lost)
		}
	}
}

// A broker's admission that the gate bit refuses (the count unchanged and
// the dispatcher neither admitted nor replacing) is described as refused;
// an admission is not.
func TestRefusedAdmissionDescribed(t *testing.T) {
	m, err := spec.New(spec.DefaultConfig())
	require.NoError(t, err)
	ds := m.Config().Dispatchers
	seen := map[spec.State]bool{}
	queue := []spec.State{m.InitState()}
	refused, admitted := 0, 0
	for n := 0; n < len(queue) && n < 50000; n++ {
		s := queue[n]
		m.Next(s, func(a string, u spec.State) {
			if !seen[u] {
				seen[u] = true
				queue = append(queue, u)
			}
			if a != "BrokerAdmit" {
				return
			}
			label := m.Describe(a, s, u)
			d := -1
			for i, name := range ds {
				if strings.HasPrefix(label, "BrokerAdmit("+name+")") {
					d = i
				}
			}
			require.GreaterOrEqual(t, d, 0, label)
			isRefused := u.Count == s.Count && u.Pc[d] != spec.PcAdmitted && u.Pc[d] != spec.PcReplacing
			require.Equal(t, isRefused, strings.HasSuffix(label, "refused by the gate bit"), label)
			if isRefused {
				refused++
			} else {
				admitted++
			}
		})
	}
	require.Positive(t, refused, "no refused admission met")
	require.Positive(t, admitted, "no admission met")
}

// A model with as many dispatchers as a Config may name is searched like
// any other: its first states and their steps are computed, and each is
// type-correct with accurate counts (no test of a dispatcher, in a step
// or an invariant, reads past the last).
func TestEveryDispatcherAllowed(t *testing.T) {
	c := spec.DefaultConfig()
	c.Dispatchers, c.TableTriggers, c.MaxMsgs = nil, nil, 1
	for d := 1; d <= spec.MaxDispatchers; d++ {
		c.Dispatchers = append(c.Dispatchers, fmt.Sprintf("d%d", d))
	}
	m, err := spec.New(c)
	require.NoError(t, err)
	seen := map[spec.State]bool{}
	queue := []spec.State{m.InitState()}
	for n := 0; n < len(queue) && n < 3000; n++ {
		m.Next(queue[n], func(_ string, u spec.State) {
			if !seen[u] {
				seen[u] = true
				queue = append(queue, u)
			}
		})
	}
	require.Greater(t, len(queue), 3000)
	for _, s := range queue {
		require.True(t, m.TypeOK(&s), "%+v", s)
		require.True(t, m.CountAccuracy(&s), "%+v", s)
		for i, name := range m.Invariants() {
			require.True(t, m.Holds(i, s), "%s: %+v", name, s)
		}
	}
}

// NoCrashRestartStep, the action constraint of the reduced model, admits
// a step that keeps the epoch, and one that starts a new epoch only from
// a drained one.
func TestNoCrashRestartStep(t *testing.T) {
	step := spec.MCActionConstraints["NoCrashRestartStep"]
	for _, tc := range []struct {
		epoch, drained, next int8
		want                 bool
	}{
		{1, spec.None, 1, true},
		{1, 1, 1, true},
		{1, 1, 2, true},
		{1, spec.None, 2, false},
		{2, 1, 3, false},
	} {
		from := spec.State{Epoch: tc.epoch, DrainedEpoch: tc.drained}
		to := from
		to.Epoch = tc.next
		require.Equal(t, tc.want, step(from, to), "epoch %d, drained epoch %d, to epoch %d", tc.epoch, tc.drained, tc.next)
	}
}

// A received message is described with the message; a node's receipt of a
// command also with the response it sends, and no other receipt is.
func TestReceiptsDescribed(t *testing.T) {
	m, err := spec.New(spec.DefaultConfig())
	require.NoError(t, err)
	recv := map[string]bool{"NodeRecvCommand": true, "CoordRecvHeartbeat": true, "CoordRecvResponse": true,
		"CoordRecvAnswer": true, "LogCoordRecvReport": true}
	seen := map[spec.State]bool{}
	queue := []spec.State{m.InitState()}
	met := map[string]int{}
	for n := 0; n < len(queue) && n < 20000; n++ {
		s := queue[n]
		m.Next(s, func(a string, u spec.State) {
			if !seen[u] {
				seen[u] = true
				queue = append(queue, u)
			}
			if !recv[a] {
				return
			}
			label := m.Describe(a, s, u)
			require.True(t, strings.HasPrefix(label, a+"  "), label)
			require.Equal(t, a == "NodeRecvCommand", strings.Contains(label, " -> "), label)
			met[a]++
		})
	}
	require.Positive(t, met["NodeRecvCommand"], "no command received")
	require.Positive(t, met["CoordRecvHeartbeat"]+met["CoordRecvResponse"], "no other receipt")
}
