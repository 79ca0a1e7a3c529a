package tracecheck

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/spec"
)

// A value of an enumeration that is none of its names (one past the last,
// or negative) is spelt as its number, not as a name.
func TestAnEnumValuePastItsNamesIsSpeltAsANumber(t *testing.T) {
	names := []string{"ALIVE", "DRAINING"}
	require.Equal(t, "DRAINING", renderValue(kEnum, names, 1, nil))
	require.Equal(t, 2, renderValue(kEnum, names, 2, nil))
	require.Equal(t, -1, renderValue(kEnum, names, -1, nil))
}

// The actions a rejection lists as enabled are exactly those the
// generator has a step of (environment steps aside), in every state of
// random walks of models with more dispatchers than brokers and more
// brokers than dispatchers: an action of a broker b is tried for every
// broker, one of a dispatcher d for every dispatcher.
func TestEnabledActionsAreTheGeneratorsSteps(t *testing.T) {
	for _, shape := range []struct{ ds, bs, tt []string }{
		{[]string{"d1", "d2"}, []string{"b1"}, []string{"d2"}},
		{[]string{"d1"}, []string{"b1", "b2"}, []string{"d1"}},
		{[]string{"d1", "d2", "d3"}, []string{"b1", "b2"}, []string{"d3"}},
	} {
		cfg := TraceConfig(spec.DefaultConfig())
		cfg.Dispatchers, cfg.Brokers, cfg.TableTriggers = shape.ds, shape.bs, shape.tt
		m, err := spec.New(cfg)
		require.NoError(t, err)
		c, err := NewChecker(m, Options{})
		require.NoError(t, err)
		acts, err := bindActions(m)
		require.NoError(t, err)
		for seed := uint64(1); seed <= 4; seed++ {
			rng := rand.New(rand.NewPCG(seed, 7))
			s := m.InitState()
			for step := 0; step < 300; step++ {
				var want []string
				var next []spec.State
				for i := range acts {
					a := &acts[i]
					enabledSteps(m, a, &s, func(u spec.State, _ map[string]any) {
						if !a.env && !slices.Contains(want, a.name) {
							want = append(want, a.name)
						}
						next = append(next, u)
					})
				}
				require.Equal(t, want, c.enabledActions(&s), "%v/%v, seed %d, step %d", shape.ds, shape.bs, seed, step)
				if len(next) == 0 {
					break
				}
				s = next[rng.IntN(len(next))]
			}
		}
	}
}

// msgIDOf returns the id of message msg in m's universe.
func msgIDOf(t *testing.T, m *spec.Model, msg spec.Msg) uint16 {
	t.Helper()
	for id := uint16(0); id < netPad; id++ {
		got, ok := func() (got spec.Msg, ok bool) {
			defer func() { ok = recover() == nil }()
			return m.Msg(id), true
		}()
		if !ok {
			break
		}
		if got == msg {
			return id
		}
	}
	t.Fatalf("no message %+v", msg)
	return 0
}

// T's running process counts as stopping when a STOPPING command of its
// epoch is in flight to it; one of an older epoch (sent to a process
// before it) or a command of another liveness does not make it stopping.
func TestAStoppingCommandOfTheRunningEpochIsStopping(t *testing.T) {
	m, err := spec.New(TraceConfig(spec.DefaultConfig()))
	require.NoError(t, err)
	c, err := NewChecker(m, Options{})
	require.NoError(t, err)
	s := m.InitState()
	require.NotEqual(t, spec.Stopping, s.Liveness)
	s.Epoch = 2
	for _, tc := range []struct {
		cmd  spec.Msg
		want bool
	}{
		{spec.Cmd(2, spec.Stopping), true},
		{spec.Cmd(1, spec.Stopping), false},
		{spec.Cmd(2, spec.Draining), false},
	} {
		u := s
		u.Net[0], u.NetLen = msgIDOf(t, m, tc.cmd), 1
		require.Equal(t, tc.want, c.stopping(&u), "%+v in flight", tc.cmd)
	}
	require.False(t, c.stopping(&s), "nothing in flight")
}
