//go:build bugs

package sim_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/sim"
	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/impl/node"
)

// TestMergedTracesRejectBugs (go test -tags bugs): with a bug of the
// zoo switched on, the per-process traces of some model-scope run,
// merged, are rejected, at a line of the process the bug lives in (the
// distributed trace validation column of the bug matrix, for the bugs it
// catches in the first seeds).
func TestMergedTracesRejectBugs(t *testing.T) {
	for _, tc := range []struct {
		bug, proc string
		tr        node.Transport
	}{
		{"CountAfterPublish", "T.", node.TransportHeartbeat},
		{"NoAdmissionGate", "T.", node.TransportHeartbeat},
		{"DoubleIncrement", "T.", node.TransportHeartbeat},
		{"ClosedBeforeBrokers", "T.", node.TransportHeartbeat},
		{"SampleBeforeClose", "T.", node.TransportHeartbeat},
		{"SkipDraining", "coord", node.TransportHeartbeat},
		{"NodeAcceptsSkip", "T.", node.TransportHeartbeat},
		{"AcceptStaleEpoch", "coord", node.TransportHeartbeat},
		{"IgnoreBrokerCount", "coord", node.TransportHeartbeat},
	} {
		t.Run(tc.bug, func(t *testing.T) {
			require.NoError(t, bugs.Enable(tc.bug))
			defer bugs.Reset()
			for seed := uint64(1); seed <= 20; seed++ {
				dir, _ := procRun(t, sim.Config{Seed: seed, Steps: 2000, Transport: tc.tr, ModelScope: true})
				res := checkRun(t, dir)
				if res.Verdict == tracecheck.Rejected {
					require.Contains(t, res.Process, tc.proc, res.Reason)
					require.NotEmpty(t, res.Candidates, "a model rejection, with the candidate states")
					return
				}
				require.Equal(t, tracecheck.OK, res.Verdict, res.Reason)
			}
			t.Fatalf("%s: no seed of 20 rejected", tc.bug)
		})
	}
}
