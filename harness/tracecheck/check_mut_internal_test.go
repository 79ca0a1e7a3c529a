package tracecheck

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/spec"
)

// On a full network (MaxMsgsLimit messages in flight, no free slot holding
// the empty message), a message not in flight is found absent and its
// loss changes nothing: the searches stop at the last message in flight.
func TestFullNetworkSearch(t *testing.T) {
	cfg := TraceConfig(spec.DefaultConfig())
	cfg.MaxMsgs = spec.MaxMsgsLimit
	m, err := spec.New(cfg)
	require.NoError(t, err)
	c, err := NewChecker(m, Options{})
	require.NoError(t, err)
	s := m.InitState()
	s.NetLen = spec.MaxMsgsLimit
	for i := range s.Net {
		s.Net[i] = 2 // one message, eight copies in flight
	}
	require.True(t, netHas(&s, 2))
	require.False(t, netHas(&s, 4), "a message not in flight")
	absent := m.Msg(4)
	require.NotEqual(t, m.Msg(2), absent)
	require.Equal(t, s, c.loseMsg(s, absent), "losing a message not in flight")
}
