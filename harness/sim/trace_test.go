package sim_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/sim"
	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/trace"
)

// tracedRun runs cfg with a trace and returns the trace's bytes.
func tracedRun(t *testing.T, cfg sim.Config) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw, err := trace.NewWriter(&buf, sim.TraceHeader(cfg))
	require.NoError(t, err)
	cfg.Tracer = tw
	_, err = sim.Run(context.Background(), cfg)
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	return buf.Bytes()
}

// TestModelScopeTracesAccepted: the traces of model-scope runs, both
// transports, are accepted by the model.
func TestModelScopeTracesAccepted(t *testing.T) {
	for _, tr := range []node.Transport{node.TransportHeartbeat, node.TransportLogCoord} {
		for seed := uint64(1); seed <= 20; seed++ {
			cfg := sim.Config{Seed: seed, Steps: 1500, Transport: tr, ModelScope: true}
			data := tracedRun(t, cfg)
			res, err := tracecheck.CheckBytes(data, "sim", nil, tracecheck.Options{})
			require.NoError(t, err)
			require.Equal(t, tracecheck.OK, res.Verdict, "%s seed %d: line %d %s\n%s\n%+v", tr, seed, res.Line, res.Reason, res.Text, res.Candidates)
			require.Greater(t, res.Lines, 500)
		}
	}
}
