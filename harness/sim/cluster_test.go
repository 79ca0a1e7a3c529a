package sim_test

import (
	"errors"
	"testing"

	"github.com/drainproof/drainproof/harness/sim"
	"github.com/drainproof/drainproof/impl/coordinator"
	"github.com/drainproof/drainproof/impl/eventservice"
	"github.com/drainproof/drainproof/impl/node"
)

// deliverAll delivers every message on the bus, oldest first, including
// those the deliveries send, and fails the test on an error.
func deliverAll(t *testing.T, c *sim.Cluster) {
	t.Helper()
	for len(c.Bus()) > 0 {
		var err error
		switch c.Bus()[0].Kind {
		case node.KindCmd:
			err = c.NodeRecvCommand(0, false, true)
		case node.KindReport:
			err = c.LogCoordRecvReport(0, false)
		case node.KindHb:
			err = c.CoordRecvHeartbeat(0, false)
		case node.KindResp:
			err = c.CoordRecvResponse(0, false)
		case node.KindAns:
			err = c.CoordRecvAnswer(0, false)
		case node.KindQuery:
			err = c.LogCoordAnswer(0, false)
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
	for _, send := range []func() bool{c.CoordSendDraining, c.CoordSendStopping} {
		if !send() {
			t.Fatalf("no command; the coordinator's pending one: %v", c.Bus())
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
		c.CoordSendQuery()
		deliverAll(t, c)
	}
	if d, err := c.Coord.DrainNode(sim.Target, c.Now()); err != nil || !d.Complete {
		t.Fatalf("DrainNode = %+v, %v: the drain stalled after the live entry expired", d, err)
	}
}

// TestRegisterInFlight: a REGISTER in flight is delivered late, twice, or
// never (model v2's regs): a duplicate re-registers (replaces, counted
// once), one that arrives after T went STOPPING is refused however often
// it arrives, a lost one registers nothing, and a restart loses those in
// flight.
func TestRegisterInFlight(t *testing.T) {
	c, err := sim.NewCluster(sim.ClusterConfig{Transport: node.TransportHeartbeat, Dispatchers: 3, Clusters: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	recv := func(i int, keep bool) error {
		t.Helper()
		err := c.ServiceRecvRegister(i, keep, false)
		if err == nil && c.Busy() { // an ordinary dispatcher, held in RegisterTable
			err = c.BrokerRegisterTable()
		}
		return err
	}
	c.CollectorSendRegister(1) // d2, of cluster c2
	if err := recv(0, true); err != nil || !c.Registered(1) {
		t.Fatalf("REGISTER d2: %v, registered %v", err, c.Registered(1))
	}
	if err := recv(0, false); err != nil || c.Observe().Count != 1 || len(c.Registers()) != 0 {
		t.Fatalf("duplicate REGISTER d2: %v, count %d (want 1), in flight %v", err, c.Observe().Count, c.Registers())
	}
	c.CollectorSendRegister(0)
	if err := c.NetLoseRegister(0); err != nil || c.Registered(0) || len(c.Registers()) != 0 {
		t.Fatalf("lost REGISTER d1: %v, registered %v, in flight %v", err, c.Registered(0), c.Registers())
	}
	c.CollectorSendRegister(0) // in flight while T drains
	if _, err := c.Coord.DrainNode(sim.Target, 0); err != nil {
		t.Fatal(err)
	}
	for _, send := range []func() bool{c.CoordSendDraining, c.CoordSendStopping} {
		if !send() {
			t.Fatal("no command")
		}
		deliverAll(t, c)
		c.Coord.ReportProgress(sim.Target, coordinator.Progress{})
	}
	if l := c.Node().Liveness(); l != node.Stopping {
		t.Fatalf("liveness %s, want STOPPING", l)
	}
	for _, keep := range []bool{true, false} {
		if err := recv(0, keep); !errors.Is(err, eventservice.ErrAdmissionClosed) {
			t.Fatalf("REGISTER d1 after STOPPING (keep %v): %v, want ErrAdmissionClosed", keep, err)
		}
	}
	if c.Registered(0) || c.Observe().Count != 1 {
		t.Fatalf("a refused REGISTER changed the count: %d", c.Observe().Count)
	}
	c.CollectorSendRegister(2)
	if _, err := c.Restart(); err != nil {
		t.Fatal(err)
	}
	if len(c.Registers()) != 0 || c.ServiceRecvRegister(0, false, false) == nil {
		t.Fatalf("REGISTERs in flight survived the restart: %v", c.Registers())
	}
}
