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
// zoo switched on, the per-process traces of some model-scope run, and
// of some full run (validated through the refinement mapping of
// docs/trace.md, "Every run"), merged, are rejected, at a line of the
// process the bug lives in (the distributed trace validation column of
// the bug matrix, for the bugs it catches in the first seeds).
func TestMergedTracesRejectBugs(t *testing.T) {
	for _, tc := range []struct {
		bug, proc string
		tr        node.Transport
		fullOnly  bool // model-scope runs catch it only in later seeds
	}{
		{"CountAfterPublish", "T.", node.TransportHeartbeat, false},
		{"NoAdmissionGate", "T.", node.TransportHeartbeat, false},
		{"DoubleIncrement", "T.", node.TransportHeartbeat, false},
		{"ClosedBeforeBrokers", "T.", node.TransportHeartbeat, false},
		{"SampleBeforeClose", "T.", node.TransportHeartbeat, false},
		{"SkipDraining", "coord", node.TransportHeartbeat, false},
		{"NodeAcceptsSkip", "T.", node.TransportHeartbeat, false},
		{"AcceptStaleEpoch", "coord", node.TransportHeartbeat, false},
		{"IgnoreBrokerCount", "coord", node.TransportHeartbeat, false},
		{"TrustLivenessResponse", "coord", node.TransportHeartbeat, false},
		{"UnknownErasesCount", "coord", node.TransportLogCoord, true},
		{"LegacyOnUnknown", "coord", node.TransportHeartbeat, false},
	} {
		for _, full := range []bool{false, true} {
			if tc.fullOnly && !full {
				continue
			}
			scope := map[bool]string{false: "model", true: "full"}[full]
			t.Run(tc.bug+"/"+scope, func(t *testing.T) {
				require.NoError(t, bugs.Enable(tc.bug))
				defer bugs.Reset()
				for seed := uint64(1); seed <= 20; seed++ {
					dir, _ := procRun(t, sim.Config{Seed: seed, Steps: 2000, Transport: tc.tr, ModelScope: !full})
					res := checkRun(t, dir)
					if res.Verdict == tracecheck.Rejected {
						require.Contains(t, res.Process, tc.proc, res.Reason)
						require.NotEmpty(t, res.Candidates, "a model rejection, with the candidate states")
						return
					}
					require.Equal(t, tracecheck.OK, res.Verdict, res.Reason)
				}
				t.Fatalf("%s, %s scope: no seed of 20 rejected", tc.bug, scope)
			})
		}
	}
}
