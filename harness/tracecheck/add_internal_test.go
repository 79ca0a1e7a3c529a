package tracecheck

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/spec"
)

// TestAddDeduplicates: the candidate set keeps one state per fingerprint,
// below smallSet (compared as values) and past it (by fingerprint),
// including a repeat that is the first add past smallSet.
func TestAddDeduplicates(t *testing.T) {
	m, err := spec.New(TraceConfig(spec.DefaultConfig()))
	require.NoError(t, err)
	c, err := NewChecker(m, Options{})
	require.NoError(t, err)
	var states []spec.State
	for e := int8(1); e <= 3*smallSet; e++ {
		s := m.InitState()
		s.Epoch = e
		states = append(states, s)
	}
	for round := 0; round < 3; round++ {
		for _, s := range states {
			c.add(s)
		}
	}
	require.Len(t, c.next, len(states))
	for i, s := range states {
		require.Equal(t, s, c.next[i])
	}

	// A new step (as Checker.step starts one): smallSet states, then a
	// repeat of the first, the first add that goes by fingerprint.
	c.next = c.next[:0]
	clear(c.seen)
	for _, s := range states[:smallSet] {
		c.add(s)
	}
	c.add(states[0])
	require.Len(t, c.next, smallSet)
}
