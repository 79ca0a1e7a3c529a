package sim_test

import (
	"testing"

	"github.com/drainproof/drainproof/impl/coordinator"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/sim"
)

// deliverAll delivers every message on the bus, oldest first, including
// those the deliveries send, and fails the test on an error.
func deliverAll(t *testing.T, c *sim.Cluster) {
	t.Helper()
	for len(c.Bus()) > 0 {
		var err error
		switch c.Bus()[0].Kind {
		case sim.KindCmd:
			err = c.NodeRecvCommand(0, false, true)
		case sim.KindReport:
			err = c.LogCoordRecvReport(0, false)
		default:
			err = c.CoordRecv(0, false)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestLiveExpiryNeedsReReport is model v2's live TTL expiry from the
// code's side: T is STOPPING with nothing registered, its report (0,
// closed) reached the LogCoordinator, and the entry of the live process
// expires before the coordinator asks. The drain completes only because
// the service reports again though its report did not change (caught:
// NoReReport, which stalls here for ever).
func TestLiveExpiryNeedsReReport(t *testing.T) {
	const ttl = 5
	c, err := sim.NewCluster(sim.ClusterConfig{Transport: node.TransportLogCoord, Dispatchers: 2, Clusters: 2, CacheTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Coord.DrainNode(sim.Target, 0); err != nil {
		t.Fatal(err)
	}
	for _, l := range []node.Liveness{node.Draining, node.Stopping} {
		if cmd, ok := c.CoordSendCommand(); !ok || cmd.Target != l {
			t.Fatalf("command = %+v %v, want %s", cmd, ok, l)
		}
		deliverAll(t, c)
		c.Coord.ReportProgress(sim.Target, coordinator.Progress{})
	}
	c.ServiceSendReport()
	deliverAll(t, c)
	if r, ok := c.LogCoord.Entry(sim.Target); !ok || r.Count != 0 || !r.AdmissionClosed {
		t.Fatalf("cache entry = %+v %v, want (0, closed)", r, ok)
	}
	c.Advance(ttl + 1)
	if n := c.LogCoord.Expire(c.Now()); n != 1 {
		t.Fatalf("the live entry did not expire (%d expired)", n)
	}
	for range 10 { // the periodic task: report, query, answer
		c.Advance(1)
		c.ServiceSendReport()
		deliverAll(t, c)
		c.LogCoordAnswer(false)
		deliverAll(t, c)
	}
	if d, err := c.Coord.DrainNode(sim.Target, c.Now()); err != nil || !d.Complete {
		t.Fatalf("DrainNode = %+v, %v: the drain stalled after the live entry expired", d, err)
	}
}
