package node_test

import (
	"fmt"
	"testing"

	"go.uber.org/goleak"

	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/trace"
	"github.com/drainproof/drainproof/tla/names"
)

// TestMain switches on the bug named by DRAINPROOF_BUG (build tag bugs)
// and checks for leaked goroutines.
func TestMain(m *testing.M) {
	bugs.SetupTest("node")
	goleak.VerifyTestMain(m)
}

// TestLivenessAdvance is D1 (pkg/liveness tests: monotonic, no skipping,
// invalid values rejected).
func TestLivenessAdvance(t *testing.T) {
	cases := []struct {
		from, to node.Liveness
		ok       bool
	}{
		{node.Alive, node.Draining, true},
		{node.Draining, node.Stopping, true},
		{node.Alive, node.Stopping, false}, // skip
		{node.Draining, node.Alive, false}, // rollback
		{node.Stopping, node.Draining, false},
		{node.Stopping, node.Stopping, false},
		{node.Alive, node.Liveness(7), false},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%v->%v", tc.from, tc.to), func(t *testing.T) {
			var s node.LivenessStore
			for l := node.Alive; l < tc.from; l++ {
				s.Advance(l + 1)
			}
			if got := s.Advance(tc.to); got != tc.ok {
				t.Fatalf("Advance = %v, want %v", got, tc.ok)
			}
			want := tc.from
			if tc.ok {
				want = tc.to
			}
			if s.Load() != want {
				t.Fatalf("liveness = %v, want %v", s.Load(), want)
			}
		})
	}
}

type fakeService struct {
	count    int64
	closed   bool
	stopping func() bool
}

func (f *fakeService) Sample() (int64, bool) {
	if f.stopping() {
		f.closed = true
	}
	return f.count, f.closed
}

// TestRecvCommand is N1 / D2 (SetNodeLivenessRejectEpochMismatch,
// SetNodeLivenessApplyTransition) and Variant H's heartbeat (E1 before the
// sample; the response never carries a count).
func TestRecvCommand(t *testing.T) {
	live := new(node.LivenessStore)
	svc := &fakeService{count: 2, stopping: func() bool { return live.Load() == node.Stopping }}
	n, err := node.New(node.Config{ID: "T", Epoch: 7, Version: node.VersionBrokerDrain, Service: svc, Liveness: live})
	if err != nil {
		t.Fatal(err)
	}
	r, changed := n.RecvCommand(node.Command{To: "T", Epoch: 6, Target: node.Draining})
	if r != (node.Response{From: "T", Epoch: 7, Liveness: node.Alive}) || changed {
		t.Fatalf("other epoch: %+v %v; want ALIVE at the node's own epoch, no change", r, changed)
	}
	r, changed = n.RecvCommand(node.Command{To: "T", Epoch: 7, Target: node.Stopping})
	if r.Liveness != node.Alive || changed {
		t.Fatalf("skip applied: %+v", r)
	}
	r, changed = n.RecvCommand(node.Command{To: "T", Epoch: 7, Target: node.Draining})
	if hb := n.Heartbeat(3); r.Liveness != node.Draining || !changed || hb.Liveness != node.Draining || hb.AdmissionClosed {
		t.Fatalf("DRAINING: %+v %+v", r, hb)
	}
	r, changed = n.RecvCommand(node.Command{To: "T", Epoch: 7, Target: node.Stopping})
	if svc.closed {
		t.Fatal("the command closed admission before the heartbeat's sample")
	}
	if hb := n.Heartbeat(4); r.Liveness != node.Stopping || !changed || !hb.HasCount || hb.Count != 2 || !hb.AdmissionClosed {
		t.Fatalf("STOPPING: %+v %+v; want a forced heartbeat with count 2, admission closed", r, hb)
	}
	if _, changed := n.RecvCommand(node.Command{To: "T", Epoch: 7, Target: node.Stopping}); changed {
		t.Fatal("a duplicate command reported a change")
	}
}

// TestHeartbeatThrottle is N2.
func TestHeartbeatThrottle(t *testing.T) {
	n, _ := node.New(node.Config{ID: "T", Epoch: 1, HeartbeatInterval: 5, Transport: node.TransportLogCoord})
	if hb, ok := n.Tick(0); !ok || hb.HasCount {
		t.Fatalf("first tick: %+v %v; want a heartbeat without a count (logcoord)", hb, ok)
	}
	if _, ok := n.Tick(4); ok {
		t.Fatal("heartbeat inside the interval")
	}
	if _, ok := n.Tick(5); !ok {
		t.Fatal("no heartbeat after the interval")
	}
	n.Heartbeat(6) // a forced one moves the throttle
	if _, ok := n.Tick(10); ok {
		t.Fatal("forced heartbeat did not move the throttle")
	}
	if r := n.Report(); r.Epoch != 1 || r.From != "T" {
		t.Fatalf("report %+v", r)
	}
}

// TestValidLivenessIsTheThreeSteps: a node's liveness is ALIVE, DRAINING
// or STOPPING; NoLiveness (a message without one) and anything outside
// the ladder are not, whatever their spelling.
func TestValidLivenessIsTheThreeSteps(t *testing.T) {
	for l, want := range map[node.Liveness]string{node.Alive: "ALIVE", node.Draining: "DRAINING", node.Stopping: "STOPPING"} {
		if !l.Valid() || l.String() != want {
			t.Errorf("%d: Valid %v, String %q; want valid, %q", int32(l), l.Valid(), l.String(), want)
		}
	}
	for l, want := range map[node.Liveness]string{node.NoLiveness: "NONE", 3: "Liveness(3)", -2: "Liveness(-2)"} {
		if l.Valid() || l.String() != want {
			t.Errorf("%d: Valid %v, String %q; want invalid, %q", int32(l), l.Valid(), l.String(), want)
		}
	}
}

// TestZeroHeartbeatIntervalIsOneTick: an interval of 0 is the default,
// one tick: a heartbeat every tick, never two in one tick.
func TestZeroHeartbeatIntervalIsOneTick(t *testing.T) {
	n, err := node.New(node.Config{ID: "T", Epoch: 1})
	if err != nil {
		t.Fatal(err)
	}
	for now := int64(0); now < 3; now++ {
		if _, ok := n.Tick(now); !ok {
			t.Fatalf("tick %d: no heartbeat", now)
		}
		if _, ok := n.Tick(now); ok {
			t.Fatalf("tick %d: a second heartbeat in the same tick", now)
		}
	}
}

// TestStoppingIsTheLastStep: the event service's Stopping callback is
// true once the node is STOPPING, and not before.
func TestStoppingIsTheLastStep(t *testing.T) {
	n, _ := node.New(node.Config{ID: "T", Epoch: 1})
	for _, l := range []node.Liveness{node.Draining, node.Stopping} {
		if n.Stopping() {
			t.Fatalf("Stopping() while %v", n.Liveness())
		}
		n.RecvCommand(node.Command{To: "T", Epoch: 1, Target: l})
	}
	if !n.Stopping() {
		t.Fatalf("Stopping() false while %v", n.Liveness())
	}
}

// TestReportIsTracedAsTheServiceSendingIt: a report is the event
// service's (TLA+ ServiceSendReport), traced with the report as the
// message sent and the node's epoch; a node without an event service has
// no broker to report for, and traces nothing.
func TestReportIsTracedAsTheServiceSendingIt(t *testing.T) {
	var lines trace.Lines
	svc := &fakeService{count: 3, stopping: func() bool { return true }}
	n, _ := node.New(node.Config{ID: "T", Epoch: 4, Transport: node.TransportLogCoord, Service: svc, Tracer: &lines})
	if r := n.Report(); r != (node.Report{From: "T", Epoch: 4, Count: 3, AdmissionClosed: true, Seq: 1}) {
		t.Fatalf("Report = %+v", r)
	}
	got := lines.All()
	if len(got) != 1 || got[0].Action != names.ServiceSendReport || *got[0].M != (trace.Msg{Kind: "report", Epoch: 4, Liveness: "NONE", Count: 3, Closed: true}) ||
		got[0].Vars[0] != trace.Int("epoch", 4) {
		t.Fatalf("lines = %+v, want one ServiceSendReport of the report at epoch 4", got)
	}
	var none trace.Lines
	bare, _ := node.New(node.Config{ID: "T", Epoch: 4, Transport: node.TransportLogCoord, Tracer: &none})
	if r := bare.Report(); r != (node.Report{From: "T", Epoch: 4, Seq: 1}) || len(none.All()) != 0 {
		t.Fatalf("without a service: report %+v, lines %+v; want a zero report, no line", r, none.All())
	}
}
