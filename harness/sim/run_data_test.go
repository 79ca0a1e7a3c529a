package sim_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/sim"
)

// TestRunDeliversEveryEvent is the end-to-end data property: over seeds,
// both transports and both stores, the changefeed receives every
// committed event, once (re-deliveries after a crash aside) and in
// commit order.
func TestRunDeliversEveryEvent(t *testing.T) {
	for _, st := range []sim.StoreKind{sim.StoreMemory, sim.StorePebble} {
		n := seeds(t)
		if st == sim.StorePebble {
			n = max(1, n/6)
		}
		for _, tr := range transports {
			var total sim.Result
			for seed := 1; seed <= n; seed++ {
				r, err := sim.Run(context.Background(), sim.Config{Seed: uint64(seed), Steps: 1000, Transport: tr, Store: st})
				require.NoError(t, err)
				if r.Lost+r.Delivery.Duplicated+r.OutOfOrder != 0 {
					t.Errorf("%s %s seed %d: %+v", st, tr, seed, r.Delivery)
				}
				total.Add(r)
			}
			require.NotZero(t, total.Committed)
			require.GreaterOrEqual(t, total.Received, total.Committed)
			t.Logf("%s %s: %d seeds, %d events committed, %d received, %d lost, %d redelivered after crashes",
				st, tr, n, total.Committed, total.Received, total.Lost, total.Redelivered)
		}
	}
}
