package coordinator_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/drainproof/drainproof/impl/coordinator"
	"github.com/drainproof/drainproof/impl/logcoord"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/trace"
)

const T node.ID = "T"

// fixture is a coordinator that knows T (epoch 42) and a peer, both of the
// current version, with a session on T.
func fixture(t *testing.T, tr node.Transport) *coordinator.Coordinator {
	t.Helper()
	c, err := coordinator.New(coordinator.Config{Transport: tr, ResendInterval: 10, QueryInterval: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []node.ID{T, "P"} {
		c.AddNode(id, 42, 0)
		c.ObserveVersion(id, 42, node.VersionBrokerDrain)
	}
	if d, err := c.DrainNode(T, 0); err != nil || d.Remaining != 1 || d.Complete {
		t.Fatalf("first DrainNode = %+v, %v; want remaining 1", d, err)
	}
	return c
}

func resp(e uint64, l node.Liveness) node.Response {
	return node.Response{From: T, Epoch: e, Liveness: l}
}

func hb(e uint64, l node.Liveness, count int64, closed bool) node.Heartbeat {
	return node.Heartbeat{From: T, Epoch: e, Liveness: l, HasCount: true, Count: count, AdmissionClosed: closed}
}

func ans(e uint64, count int64, closed bool) logcoord.Answer {
	return logcoord.Answer{Target: T, Known: true, Epoch: e, Count: count, AdmissionClosed: closed}
}

// toStopping drives the session to STOPPING observed with no maintainer
// work, learnt from responses only (no count).
func toStopping(c *coordinator.Coordinator, e uint64) {
	c.ObserveResponse(resp(e, node.Draining), 1)
	c.ReportProgress(T, coordinator.Progress{})
	c.ObserveResponse(resp(e, node.Stopping), 2)
}

func remaining(t *testing.T, c *coordinator.Coordinator) coordinator.Decision {
	t.Helper()
	d, err := c.Evaluate(T, 3)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestCompletionRule covers C5, C7, C8 and D5/D8 for both transports:
// each case applies observations to a session in STOPPING (learnt from
// responses) and checks remaining work and completion.
func TestCompletionRule(t *testing.T) {
	type step func(c *coordinator.Coordinator)
	cases := []struct {
		name      string
		tr        node.Transport
		steps     []step
		remaining int64
		complete  bool
	}{
		// F2 / D5 (upstream DrainNodeUsesDefaultLogServiceDispatcherCount,
		// reversed): a STOPPING response alone never completes.
		{"F2 response alone", node.TransportHeartbeat, nil, 1, false},
		{"F2 response alone, logcoord", node.TransportLogCoord, nil, 1, false},
		// C5 Variant H (WaitsForReportedLogServiceDispatchers): 2 then 0.
		{"H count 2", node.TransportHeartbeat, []step{func(c *coordinator.Coordinator) { c.ObserveHeartbeat(hb(42, node.Stopping, 2, true), 3) }}, 2, false},
		{"H count 2 then 0", node.TransportHeartbeat, []step{
			func(c *coordinator.Coordinator) { c.ObserveHeartbeat(hb(42, node.Stopping, 2, true), 3) },
			func(c *coordinator.Coordinator) { c.ObserveHeartbeat(hb(42, node.Stopping, 0, true), 3) }}, 0, true},
		// D8: a zero sampled with admission open, or on a DRAINING heartbeat, is unusable.
		{"H zero with admission open", node.TransportHeartbeat, []step{func(c *coordinator.Coordinator) { c.ObserveHeartbeat(hb(42, node.Stopping, 0, false), 3) }}, 1, false},
		{"H zero on DRAINING heartbeat", node.TransportHeartbeat, []step{func(c *coordinator.Coordinator) { c.ObserveHeartbeat(hb(42, node.Draining, 0, true), 3) }}, 1, false},
		// Monotone within an epoch: a delayed higher count after 0 is ignored (F8).
		{"H zero is terminal", node.TransportHeartbeat, []step{
			func(c *coordinator.Coordinator) { c.ObserveHeartbeat(hb(42, node.Stopping, 0, true), 3) },
			func(c *coordinator.Coordinator) { c.ObserveHeartbeat(hb(42, node.Stopping, 3, true), 3) }}, 0, true},
		// F3 / D2 (TracksStoppingLogServiceDispatcherCountByEpoch): a stale
		// epoch's zero never counts.
		{"F3 stale heartbeat zero", node.TransportHeartbeat, []step{func(c *coordinator.Coordinator) { c.ObserveHeartbeat(hb(41, node.Stopping, 0, true), 3) }}, 1, false},
		// C5 Variant L (DrainNodeWaitsForEventBrokerDispatchers,
		// DrainNodeQueriesLogCoordinator): 3, unknown keeps 3, 0 completes,
		// late 3 and unknown keep 0.
		{"L count 3", node.TransportLogCoord, []step{func(c *coordinator.Coordinator) { c.ObserveAnswer(ans(42, 3, true), 3) }}, 3, false},
		{"F7 unknown keeps 3", node.TransportLogCoord, []step{
			func(c *coordinator.Coordinator) { c.ObserveAnswer(ans(42, 3, true), 3) },
			func(c *coordinator.Coordinator) { c.ObserveAnswer(logcoord.Unknown(T), 3) }}, 3, false},
		{"F7 unknown never completes", node.TransportLogCoord, []step{
			func(c *coordinator.Coordinator) { c.ObserveAnswer(logcoord.Unknown(T), 3) }}, 1, false},
		{"L 3 then 0, F8 late 3 and unknown", node.TransportLogCoord, []step{
			func(c *coordinator.Coordinator) { c.ObserveAnswer(ans(42, 3, true), 3) },
			func(c *coordinator.Coordinator) { c.ObserveAnswer(ans(42, 0, true), 3) },
			func(c *coordinator.Coordinator) { c.ObserveAnswer(ans(42, 3, true), 3) },
			func(c *coordinator.Coordinator) { c.ObserveAnswer(logcoord.Unknown(T), 3) }}, 0, true},
		// RejectsUnusableBrokerReports: admission open, another node, stale epoch.
		{"L admission open", node.TransportLogCoord, []step{func(c *coordinator.Coordinator) { c.ObserveAnswer(ans(42, 0, false), 3) }}, 1, false},
		{"L other node", node.TransportLogCoord, []step{func(c *coordinator.Coordinator) {
			a := ans(42, 0, true)
			a.Target = "P"
			c.ObserveAnswer(a, 3)
		}}, 1, false},
		{"L stale epoch", node.TransportLogCoord, []step{func(c *coordinator.Coordinator) { c.ObserveAnswer(ans(41, 0, true), 3) }}, 1, false},
		// A heartbeat's count is not a count in the LogCoordinator transport.
		{"L ignores heartbeat count", node.TransportLogCoord, []step{func(c *coordinator.Coordinator) { c.ObserveHeartbeat(hb(42, node.Stopping, 0, true), 3) }}, 1, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := fixture(t, tc.tr)
			toStopping(c, 42)
			for _, s := range tc.steps {
				s(c)
			}
			d := remaining(t, c)
			if d.Remaining != tc.remaining || d.Complete != tc.complete {
				t.Fatalf("decision = %+v, want remaining %d complete %v", d, tc.remaining, tc.complete)
			}
		})
	}
}

// TestBrokerCountBlocksCompletion is F1 (DispatcherCountBlocksCompletion):
// maintainer work 0 and STOPPING, but the broker still serves 2: remaining
// is max(terms) + count, and no completion until the zero.
func TestBrokerCountBlocksCompletion(t *testing.T) {
	c := fixture(t, node.TransportHeartbeat)
	c.ObserveResponse(resp(42, node.Draining), 1)
	c.ReportProgress(T, coordinator.Progress{Dispatchers: 3, InflightMoves: 1})
	if d := remaining(t, c); d.Remaining != 3 {
		t.Fatalf("remaining = %d, want max(3, 1) = 3", d.Remaining)
	}
	c.ReportProgress(T, coordinator.Progress{})
	c.ObserveHeartbeat(hb(42, node.Stopping, 2, true), 2)
	if d, _ := c.DrainNode(T, 3); d.Complete || d.Remaining != 2 {
		t.Fatalf("decision = %+v, want remaining 2", d)
	}
	c.ObserveHeartbeat(hb(42, node.Stopping, 0, true), 4)
	if d, _ := c.DrainNode(T, 5); !d.Complete || d.DrainedEpoch != 42 || d.Remaining != 0 {
		t.Fatalf("decision = %+v, want complete for epoch 42", d)
	}
	if o := c.NodeView(T); o.DrainedEpoch != 42 {
		t.Fatalf("drained epoch = %d", o.DrainedEpoch)
	}
}

// TestNewEpochResetsObservations is C4 / D2 / F3
// (ResetObservedStateForNewEpoch, TracksStopping…ByEpoch 42 → 43 → stale 42).
func TestNewEpochResetsObservations(t *testing.T) {
	c := fixture(t, node.TransportHeartbeat)
	c.ObserveResponse(resp(42, node.Draining), 1)
	c.ReportProgress(T, coordinator.Progress{})
	c.ObserveHeartbeat(hb(42, node.Stopping, 2, true), 2)
	c.ObserveHeartbeat(hb(43, node.Alive, 0, false), 3) // T restarted
	o := c.NodeView(T)
	if o.Epoch != 43 || o.Liveness != node.Alive || o.CountObserved || o.Work != 0 {
		t.Fatalf("after the new epoch: %+v; want epoch 43 ALIVE, no count, work kept at 0", o)
	}
	if _, ok := c.Target(); !ok {
		t.Fatal("the drain request must survive a new epoch")
	}
	c.ObserveHeartbeat(hb(42, node.Stopping, 0, true), 4) // delayed, old process
	if o := c.NodeView(T); o.Epoch != 43 || o.Liveness != node.Alive || o.CountObserved {
		t.Fatalf("a stale heartbeat changed the observation: %+v", o)
	}
	if cmd, ok := c.NextCommand(5); ok {
		t.Fatalf("next command = %+v before the new process's version is known, want none", cmd)
	}
	c.ObserveVersion(T, 43, node.VersionBrokerDrain) // its bootstrap
	if cmd, ok := c.NextCommand(5); !ok || cmd.Epoch != 43 || cmd.Target != node.Draining {
		t.Fatalf("next command = %+v %v, want DRAINING at epoch 43", cmd, ok)
	}
	// Within an epoch liveness never goes back.
	c.ObserveResponse(resp(43, node.Draining), 6)
	c.ObserveHeartbeat(hb(43, node.Alive, 0, false), 7)
	if o := c.NodeView(T); o.Liveness != node.Draining {
		t.Fatalf("liveness went back to %v", o.Liveness)
	}
}

// TestCommands is C3 / F9 (ResendAndPromoteToStopping,
// SkipStoppingForNewEpochWithoutDraining).
func TestCommands(t *testing.T) {
	c := fixture(t, node.TransportHeartbeat)
	cmd, ok := c.NextCommand(0)
	if !ok || cmd != (node.Command{To: T, Epoch: 42, Target: node.Draining}) {
		t.Fatalf("first command = %+v %v", cmd, ok)
	}
	if _, ok := c.NextCommand(5); ok {
		t.Fatal("DRAINING resent inside the resend interval")
	}
	if cmd, ok := c.NextCommand(10); !ok || cmd.Target != node.Draining {
		t.Fatal("DRAINING not resent after the interval")
	}
	c.ObserveResponse(resp(42, node.Draining), 11)
	if _, ok := c.NextCommand(30); ok {
		t.Fatal("STOPPING sent while the maintainers still report work")
	}
	c.ReportProgress(T, coordinator.Progress{})
	if cmd, ok := c.NextCommand(31); !ok || cmd != (node.Command{To: T, Epoch: 42, Target: node.Stopping}) {
		t.Fatalf("command = %+v %v, want STOPPING at 42", cmd, ok)
	}
	// T restarts before the next resend: the new epoch gets DRAINING, never STOPPING.
	c.ObserveHeartbeat(hb(43, node.Alive, 0, false), 32)
	c.ObserveVersion(T, 43, node.VersionBrokerDrain)
	if cmd, ok := c.NextCommand(33); !ok || cmd.Epoch != 43 || cmd.Target != node.Draining {
		t.Fatalf("command after restart = %+v %v, want DRAINING at 43", cmd, ok)
	}
}

// TestQueries is C6 (EventBrokerDispatcherCount: no query before STOPPING,
// queries repeat until a zero, then stop).
func TestQueries(t *testing.T) {
	c := fixture(t, node.TransportLogCoord)
	c.ObserveResponse(resp(42, node.Draining), 1)
	if _, ok := c.NextQuery(1); ok {
		t.Fatal("query before STOPPING")
	}
	c.ReportProgress(T, coordinator.Progress{})
	c.ObserveResponse(resp(42, node.Stopping), 2)
	if id, ok := c.NextQuery(2); !ok || id != T {
		t.Fatal("no query after STOPPING")
	}
	if _, ok := c.NextQuery(3); ok {
		t.Fatal("query inside the query interval")
	}
	c.ObserveAnswer(ans(42, 2, true), 4)
	if _, ok := c.NextQuery(8); !ok {
		t.Fatal("queries must continue while the count is 2")
	}
	c.ObserveAnswer(ans(42, 0, true), 9)
	if _, ok := c.NextQuery(20); ok {
		t.Fatal("query after a terminal zero")
	}
}

// TestMixedVersions is docs/protocol.md §9 (LegacyTargetFallsBackToHardRestart,
// WaitsForTargetCapabilityObservation, WaitsForPeerCapabilityObservation,
// FallsBackWhenAlivePeerIsLegacy, IgnoresLateUnknownPeerAfterSessionStart).
func TestMixedVersions(t *testing.T) {
	cases := []struct {
		name    string
		setup   func(c *coordinator.Coordinator)
		want    coordinator.Decision
		session bool
	}{
		{"target version unknown", func(c *coordinator.Coordinator) { c.ObserveVersion("P", 1, node.VersionBrokerDrain) },
			coordinator.Decision{Remaining: 1, Waiting: true}, false},
		{"peer version unknown", func(c *coordinator.Coordinator) { c.ObserveVersion(T, 1, node.VersionBrokerDrain) },
			coordinator.Decision{Remaining: 1, Waiting: true}, false},
		// LegacyOnUnknown: an unknown version is not legacy, even while
		// another node is known to be legacy; the answer waits.
		{"target unknown, peer legacy", func(c *coordinator.Coordinator) { c.ObserveVersion("P", 1, node.VersionLegacy) },
			coordinator.Decision{Remaining: 1, Waiting: true}, false},
		{"legacy target", func(c *coordinator.Coordinator) {
			c.ObserveVersion(T, 1, node.VersionLegacy)
			c.ObserveVersion("P", 1, node.VersionBrokerDrain)
		}, coordinator.Decision{Legacy: true, LegacyEpoch: 1}, false},
		{"legacy peer", func(c *coordinator.Coordinator) {
			c.ObserveVersion(T, 1, node.VersionBrokerDrain)
			c.ObserveVersion("P", 1, node.VersionDrain)
		}, coordinator.Decision{Legacy: true, LegacyEpoch: 1}, false},
		{"all current", func(c *coordinator.Coordinator) {
			c.ObserveVersion(T, 1, node.VersionBrokerDrain)
			c.ObserveVersion("P", 1, node.VersionBrokerDrain)
		}, coordinator.Decision{Remaining: 1}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := coordinator.New(coordinator.Config{})
			c.AddNode(T, 1, 0)
			c.AddNode("P", 1, 0)
			tc.setup(c)
			d, err := c.DrainNode(T, 0)
			if err != nil || d != tc.want {
				t.Fatalf("DrainNode = %+v, %v; want %+v", d, err, tc.want)
			}
			if _, ok := c.Target(); ok != tc.session {
				t.Fatalf("session = %v, want %v", ok, tc.session)
			}
			if tc.session {
				c.AddNode("Q", 1, 0) // a late peer of unknown version does not stop the session
				if d, _ := c.DrainNode(T, 1); d.Waiting || d.Legacy {
					t.Fatalf("late unknown peer changed the decision: %+v", d)
				}
			}
		})
	}
}

// TestRemoveNode is C9 (RemoveNodeClearsState,
// ReturnsZeroAfterCompletedTargetIsRemoved,
// ReturnsCaptureNotExistWhenIncompleteTargetIsRemoved,
// DrainCompletedTombstoneIsClearedWhenTargetRejoins) and D3.
func TestRemoveNode(t *testing.T) {
	c := fixture(t, node.TransportHeartbeat)
	if d, _ := c.DrainNode("P", 0); !d.Waiting {
		t.Fatalf("a second target must wait: %+v", d)
	}
	c.RemoveNode(T)
	if _, err := c.DrainNode(T, 1); !errors.Is(err, coordinator.ErrNodeNotExist) {
		t.Fatalf("incomplete removed target: err = %v", err)
	}
	c.AddNode(T, 50, 2)
	c.ObserveVersion(T, 50, node.VersionBrokerDrain)
	c.DrainNode(T, 2)
	toStopping(c, 50)
	c.ObserveHeartbeat(hb(50, node.Stopping, 0, true), 3)
	if d, _ := c.DrainNode(T, 3); !d.Complete {
		t.Fatalf("not complete: %+v", d)
	}
	c.RemoveNode(T)
	if d, err := c.DrainNode(T, 4); err != nil || !d.Complete {
		t.Fatalf("completed removed target: %+v %v", d, err)
	}
	c.AddNode(T, 51, 5) // rejoins: the tombstone goes, a new drain starts
	c.ObserveVersion(T, 51, node.VersionBrokerDrain)
	if d, _ := c.DrainNode(T, 5); d.Complete || d.Remaining != 1 {
		t.Fatalf("rejoined target: %+v, want a new session", d)
	}
}

// TestUnknownState: a target silent for UnknownAfter ticks neither goes
// STOPPING nor completes (C3, C8).
func TestUnknownState(t *testing.T) {
	c, _ := coordinator.New(coordinator.Config{UnknownAfter: 10})
	c.AddNode(T, 1, 0)
	c.ObserveVersion(T, 1, node.VersionBrokerDrain)
	c.DrainNode(T, 0)
	c.ObserveResponse(node.Response{From: T, Epoch: 1, Liveness: node.Draining}, 1)
	c.ReportProgress(T, coordinator.Progress{})
	if _, ok := c.NextCommand(20); ok {
		t.Fatal("STOPPING sent to an Unknown node")
	}
	c.ObserveHeartbeat(node.Heartbeat{From: T, Epoch: 1, Liveness: node.Stopping, HasCount: true, AdmissionClosed: true}, 21)
	if d, _ := c.Evaluate(T, 40); d.Complete {
		t.Fatal("an Unknown node completed")
	}
	if d, _ := c.Evaluate(T, 22); !d.Complete {
		t.Fatal("a fresh STOPPING zero did not complete")
	}
}

// TestStoppingOnlyAfterDrainingWithoutWork is C3 as model v2's
// CoordSendStopping guards it (caught: SkipDraining): over every resend,
// the coordinator sends STOPPING only once it observed DRAINING of the
// epoch tracked and the maintainers report no work; before, DRAINING or
// nothing.
func TestStoppingOnlyAfterDrainingWithoutWork(t *testing.T) {
	c := fixture(t, node.TransportHeartbeat)
	now := int64(0)
	commands := func(until int64) []node.Liveness {
		var out []node.Liveness
		for ; now < until; now++ {
			if cmd, ok := c.NextCommand(now); ok {
				out = append(out, cmd.Target)
			}
		}
		return out
	}
	if got := commands(40); len(got) == 0 || slices.Contains(got, node.Stopping) {
		t.Fatalf("commands while ALIVE = %v, want DRAINING only", got)
	}
	c.ObserveResponse(resp(42, node.Draining), now)
	c.ReportProgress(T, coordinator.Progress{Dispatchers: 2})
	if got := commands(80); len(got) != 0 {
		t.Fatalf("commands while DRAINING with work = %v, want none", got)
	}
	c.ReportProgress(T, coordinator.Progress{})
	if got := commands(81); !slices.Equal(got, []node.Liveness{node.Stopping}) {
		t.Fatalf("commands once the work is 0 = %v, want STOPPING", got)
	}
}

// TestVersionBelongsToTheProcess: T ran the legacy version; it restarts
// (a rolling upgrade) and its new process runs the drain protocol. Until
// the new process's bootstrap is observed, its version is unknown: the
// coordinator waits, and must not give the legacy hard-restart answer to
// a process that can be drained (TLA+ Observe resets coordVersion on a
// newer epoch; VersionSafety). A bootstrap of an older epoch is dropped.
func TestVersionBelongsToTheProcess(t *testing.T) {
	c, _ := coordinator.New(coordinator.Config{})
	c.AddNode(T, 1, 0)
	c.ObserveVersion(T, 1, node.VersionLegacy)
	c.ObserveHeartbeat(hb(2, node.Alive, 0, false), 1) // T restarted: epoch 2
	d, err := c.DrainNode(T, 2)
	if err != nil || d.Legacy || !d.Waiting {
		t.Fatalf("after a restart of a legacy process: %+v %v, want waiting (version unknown)", d, err)
	}
	c.ObserveVersion(T, 1, node.VersionLegacy) // a late bootstrap of the old process
	if d, _ := c.DrainNode(T, 3); d.Legacy {
		t.Fatalf("an older epoch's bootstrap made the new process legacy: %+v", d)
	}
	c.ObserveVersion(T, 2, node.VersionBrokerDrain)
	if d, _ := c.DrainNode(T, 4); d.Legacy || d.Waiting || d.Complete {
		t.Fatalf("new process of a known new version: %+v, want a drain session", d)
	}
	// A bootstrap of an epoch the coordinator has not seen yet is dropped:
	// it learns epochs from the process's messages, and the membership
	// announces the version again.
	c2, _ := coordinator.New(coordinator.Config{})
	c2.AddNode(T, 1, 0)
	c2.ObserveVersion(T, 3, node.VersionBrokerDrain)
	if got := c2.NodeView(T); got.Epoch != 1 || got.VersionKnown {
		t.Fatalf("Observe = %+v, want epoch 1, version unknown", got)
	}
	c2.ObserveHeartbeat(hb(3, node.Alive, 0, false), 1)
	c2.ObserveVersion(T, 3, node.VersionBrokerDrain)
	if got := c2.NodeView(T); got.Epoch != 3 || !got.VersionKnown || got.Version != node.VersionBrokerDrain {
		t.Fatalf("Observe = %+v, want epoch 3 with its version", got)
	}
}

// TestTargetRestartsMidSession: the session's target restarts; until the
// new process's bootstrap is observed the drain waits and is not given
// the legacy answer (VersionSafety; caught: LegacyOnUnknown), no command
// is sent to it; a new process known to be legacy gets the legacy answer
// for its epoch (TLA+ CoordLegacyRestart), which ends the session's
// commands.
func TestTargetRestartsMidSession(t *testing.T) {
	c, _ := coordinator.New(coordinator.Config{})
	c.AddNode(T, 1, 0)
	c.ObserveVersion(T, 1, node.VersionBrokerDrain)
	if d, err := c.DrainNode(T, 0); err != nil || d.Legacy {
		t.Fatalf("DrainNode = %+v, %v; want a session", d, err)
	}
	c.ObserveHeartbeat(hb(2, node.Alive, 0, false), 1) // T restarted: epoch 2, version unknown
	if d, _ := c.DrainNode(T, 2); d.Legacy || d.Complete {
		t.Fatalf("DrainNode while the new process's version is unknown = %+v, want to wait", d)
	}
	if cmd, ok := c.NextCommand(2); ok {
		t.Fatalf("command %+v to a process of unknown version", cmd)
	}
	c.ObserveVersion(T, 2, node.VersionLegacy)
	if d, _ := c.DrainNode(T, 3); !d.Legacy || d.LegacyEpoch != 2 {
		t.Fatalf("DrainNode for a legacy target = %+v, want the legacy answer for epoch 2", d)
	}
	if cmd, ok := c.NextCommand(4); ok {
		t.Fatalf("command %+v after the legacy answer", cmd)
	}
	if d, _ := c.Evaluate(T, 5); !d.Legacy || d.LegacyEpoch != 2 {
		t.Fatalf("Evaluate after the legacy answer = %+v", d)
	}
}

// TestCompletedTombstoneIsTheTargets: after a completed target leaves,
// DrainNode keeps answering 0 for it (C9) while other nodes join; once
// the target rejoins the tombstone is gone, so a later removal of its
// new process, not drained, answers ErrNodeNotExist and not a stale 0.
func TestCompletedTombstoneIsTheTargets(t *testing.T) {
	c := fixture(t, node.TransportHeartbeat)
	toStopping(c, 42)
	c.ObserveHeartbeat(hb(42, node.Stopping, 0, true), 3)
	if d, _ := c.DrainNode(T, 3); !d.Complete {
		t.Fatalf("not complete: %+v", d)
	}
	c.RemoveNode(T)
	c.AddNode("Q", 1, 4) // a peer joins
	if d, err := c.DrainNode(T, 4); err != nil || !d.Complete {
		t.Fatalf("completed removed target after a peer joined: %+v %v; want complete", d, err)
	}
	c.AddNode(T, 43, 5) // the target rejoins, restarted
	c.RemoveNode(T)     // and leaves again, not drained
	if _, err := c.DrainNode(T, 6); !errors.Is(err, coordinator.ErrNodeNotExist) {
		t.Fatalf("removed target that rejoined after its drain: err = %v, want ErrNodeNotExist", err)
	}
}

// TestUnknownAfterExactlyTheLimit: a target last heard from UnknownAfter
// ticks ago is still known, so it is sent STOPPING and its zero
// completes; one tick later it is Unknown, and neither happens (C3, C8).
func TestUnknownAfterExactlyTheLimit(t *testing.T) {
	c, _ := coordinator.New(coordinator.Config{UnknownAfter: 10})
	c.AddNode(T, 1, 0)
	c.ObserveVersion(T, 1, node.VersionBrokerDrain)
	c.DrainNode(T, 0)
	c.ObserveResponse(node.Response{From: T, Epoch: 1, Liveness: node.Draining}, 5)
	c.ReportProgress(T, coordinator.Progress{})
	if _, ok := c.PendingCommand(16); ok {
		t.Fatal("STOPPING pending for a target silent for 11 ticks (Unknown)")
	}
	if cmd, ok := c.PendingCommand(15); !ok || cmd.Target != node.Stopping {
		t.Fatalf("pending command at 10 ticks of silence = %+v %v, want STOPPING", cmd, ok)
	}
	c.ObserveHeartbeat(node.Heartbeat{From: T, Epoch: 1, Liveness: node.Stopping, HasCount: true, AdmissionClosed: true}, 20)
	if d, _ := c.Evaluate(T, 31); d.Complete {
		t.Fatal("completed after 11 ticks of silence (Unknown)")
	}
	if d, _ := c.Evaluate(T, 30); !d.Complete {
		t.Fatalf("not complete after 10 ticks of silence: %+v", d)
	}
}

// TestQueryResentAtTheInterval: while no zero is accepted the query is
// sent again once QueryInterval ticks have passed since the last, not
// before (C6).
func TestQueryResentAtTheInterval(t *testing.T) {
	c := fixture(t, node.TransportLogCoord) // QueryInterval 5
	toStopping(c, 42)
	if _, ok := c.NextQuery(10); !ok {
		t.Fatal("no first query")
	}
	if _, ok := c.NextQuery(14); ok {
		t.Fatal("query resent after 4 ticks")
	}
	if _, ok := c.NextQuery(15); !ok {
		t.Fatal("query not resent after 5 ticks")
	}
}

// traced renders the lines a tracer received, one JSON line each.
func traced(lines *trace.Lines) []string {
	var out []string
	for _, l := range lines.All() {
		out = append(out, string(trace.AppendLine(nil, &l)))
	}
	return out
}

// TestTraceIsTheModelsView: with a Tracer, the coordinator writes one
// line per model action about the traced node (docs/trace.md) and none
// about another node, each with its view of the traced node after the
// action: epoch, liveness, the accepted count (-1 before one), the work,
// the drained epoch (-1 before completion). A command is named by the
// action that sends it; the version is learnt once per epoch.
func TestTraceIsTheModelsView(t *testing.T) {
	var lines trace.Lines
	c, _ := coordinator.New(coordinator.Config{Tracer: &lines, TraceNode: T})
	for _, id := range []node.ID{T, "P"} {
		c.AddNode(id, 42, 0)
		c.ObserveVersion(id, 42, node.VersionBrokerDrain)
	}
	c.ObserveVersion(T, 42, node.VersionBrokerDrain) // again: learnt already
	c.DrainNode(T, 0)
	c.NextCommand(0)
	c.ObserveResponse(resp(42, node.Draining), 1)
	c.ObserveResponse(node.Response{From: "P", Epoch: 42, Liveness: node.Draining}, 1)
	c.ReportProgress(T, coordinator.Progress{})
	c.NextCommand(1)
	c.ObserveHeartbeat(hb(42, node.Stopping, 0, true), 2)
	c.DrainNode(T, 2)
	view := func(l string, count, work, drained int) string {
		return fmt.Sprintf(`"vars":{"coordEpoch":42,"coordLiveness":"%s","coordCount":%d,"work":%d,"drainedEpoch":%d}}`, l, count, work, drained)
	}
	want := []string{
		`{"action":"CoordLearnVersion","vars":{"coordEpoch":42,"coordVersion":"new"}}`,
		`{"action":"CoordSendDraining","params":{"m":{"kind":"cmd","epoch":42,"liveness":"DRAINING","count":-1,"closed":false}},` + view("ALIVE", -1, 1, -1),
		`{"action":"CoordRecvResponse","params":{"m":{"kind":"resp","epoch":42,"liveness":"DRAINING","count":-1,"closed":false}},` + view("DRAINING", -1, 1, -1),
		`{"action":"MaintainerReportProgress",` + view("DRAINING", -1, 0, -1),
		`{"action":"CoordSendStopping","params":{"m":{"kind":"cmd","epoch":42,"liveness":"STOPPING","count":-1,"closed":false}},` + view("DRAINING", -1, 0, -1),
		`{"action":"CoordRecvHeartbeat","params":{"m":{"kind":"hb","epoch":42,"liveness":"STOPPING","count":0,"closed":true}},` + view("STOPPING", 0, 0, -1),
		`{"action":"CoordCompleteDrain",` + view("STOPPING", 0, 0, 42),
	}
	if got := traced(&lines); !slices.Equal(got, want) {
		t.Fatalf("trace:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestTraceOfARestartedCoordinator: a coordinator that succeeds a killed
// one (TraceRestart) writes nothing about T until T joins it: T's join is
// its first line, CoordRejoin at T's epoch with Init's view and session
// (ALIVE, no count, no session, no decision). It learns T's version again
// from the bootstrap, hears T DRAINING, starts a session at the client's
// poll, hears the maintainers' work done and only then sends STOPPING.
// The first coordinator's first join is Init's and writes no line.
func TestTraceOfARestartedCoordinator(t *testing.T) {
	var lines trace.Lines
	c, _ := coordinator.New(coordinator.Config{Tracer: &lines, TraceNode: T})
	c.TraceRestart()
	c.ObserveHeartbeat(node.Heartbeat{From: T, Epoch: 3, Liveness: node.Draining}, 0) // not a member: dropped
	if _, err := c.DrainNode(T, 0); !errors.Is(err, coordinator.ErrNodeNotExist) {
		t.Fatalf("DrainNode of a node that has not joined: %v, want ErrNodeNotExist", err)
	}
	c.AddNode(T, 3, 1)
	c.ObserveJoin(T, 3, 1)
	c.ObserveVersion(T, 3, node.VersionBrokerDrain)
	c.ObserveHeartbeat(node.Heartbeat{From: T, Epoch: 3, Liveness: node.Draining}, 2)
	if d, _ := c.DrainNode(T, 2); d.Complete || d.Remaining == 0 {
		t.Fatalf("the new session's first poll: %+v, want work remaining", d)
	}
	c.ReportProgress(T, coordinator.Progress{})
	c.NextCommand(2)
	view := func(l string, work int) string {
		return fmt.Sprintf(`"vars":{"coordEpoch":3,"coordLiveness":"%s","coordCount":-1,"work":%d,"drainedEpoch":-1}}`, l, work)
	}
	want := []string{
		`{"action":"CoordRejoin",` + view("ALIVE", -1),
		`{"action":"CoordLearnVersion","vars":{"coordEpoch":3,"coordVersion":"new"}}`,
		`{"action":"CoordRecvHeartbeat","params":{"m":{"kind":"hb","epoch":3,"liveness":"DRAINING","count":-1,"closed":false}},` + view("DRAINING", -1),
		`{"action":"MaintainerReportProgress",` + view("DRAINING", 0),
		`{"action":"CoordSendStopping","params":{"m":{"kind":"cmd","epoch":3,"liveness":"STOPPING","count":-1,"closed":false}},` + view("DRAINING", 0),
	}
	if got := traced(&lines); !slices.Equal(got, want) {
		t.Fatalf("trace:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var first trace.Lines
	c, _ = coordinator.New(coordinator.Config{Tracer: &first, TraceNode: T})
	c.AddNode(T, 3, 1)
	if got := traced(&first); len(got) != 0 {
		t.Fatalf("the first coordinator's first join traced %q, want nothing (Init)", got)
	}
}

// TestTraceOfTheLegacyAnswer: the target restarts as a legacy process;
// the coordinator traces the heartbeat of the new epoch, learns the new
// process's version as legacy, and its legacy answer names that epoch.
func TestTraceOfTheLegacyAnswer(t *testing.T) {
	var lines trace.Lines
	c, _ := coordinator.New(coordinator.Config{Tracer: &lines, TraceNode: T})
	c.AddNode(T, 1, 0)
	c.ObserveVersion(T, 1, node.VersionBrokerDrain)
	c.DrainNode(T, 0)
	c.ObserveHeartbeat(node.Heartbeat{From: T, Epoch: 2, Liveness: node.Alive}, 1)
	c.ObserveVersion(T, 2, node.VersionDrain)
	c.DrainNode(T, 2)
	c.DrainNode(T, 3) // the recorded answer: not traced again
	want := []string{
		`{"action":"CoordLearnVersion","vars":{"coordEpoch":1,"coordVersion":"new"}}`,
		`{"action":"CoordRecvHeartbeat","params":{"m":{"kind":"hb","epoch":2,"liveness":"ALIVE","count":-1,"closed":false}},` +
			`"vars":{"coordEpoch":2,"coordLiveness":"ALIVE","coordCount":-1,"work":1,"drainedEpoch":-1}}`,
		`{"action":"CoordLearnVersion","vars":{"coordEpoch":2,"coordVersion":"legacy"}}`,
		`{"action":"CoordLegacyRestart","vars":{"coordEpoch":2,"legacyEpoch":2}}`,
	}
	if got := traced(&lines); !slices.Equal(got, want) {
		t.Fatalf("trace:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCommandResentFromItsLastSend: a command is resent ResendInterval
// ticks after it was last sent, not after the first send; a command of
// another liveness goes at once.
func TestCommandResentFromItsLastSend(t *testing.T) {
	c := fixture(t, node.TransportHeartbeat) // ResendInterval 10
	var sent []int64
	for now := int64(3); now <= 25; now++ {
		if _, ok := c.NextCommand(now); ok {
			sent = append(sent, now)
		}
	}
	if want := []int64{3, 13, 23}; !slices.Equal(sent, want) {
		t.Fatalf("DRAINING sent at %v, want %v", sent, want)
	}
	c.ObserveResponse(resp(42, node.Draining), 26)
	c.ReportProgress(T, coordinator.Progress{})
	if cmd, ok := c.NextCommand(26); !ok || cmd.Target != node.Stopping {
		t.Fatalf("command once DRAINING is observed = %+v %v, want STOPPING at once", cmd, ok)
	}
}

// TestStutterStepsWriteNoLine: a join of the epoch already known (ALIVE,
// no count) and a maintainer report that leaves the work unchanged change
// no variable the trace observes, and write no line; a join of a newer
// epoch, or a report that changes the work, does.
func TestStutterStepsWriteNoLine(t *testing.T) {
	var lines trace.Lines
	c, _ := coordinator.New(coordinator.Config{Tracer: &lines, TraceNode: T})
	c.AddNode(T, 42, 0)
	c.ObserveJoin(T, 42, 0) // the join after AddNode: a stutter
	c.ObserveVersion(T, 42, node.VersionBrokerDrain)
	c.DrainNode(T, 0)
	c.ReportProgress(T, coordinator.Progress{Maintainers: 2})
	c.ReportProgress(T, coordinator.Progress{Maintainers: 2}) // unchanged: a stutter
	c.ReportProgress(T, coordinator.Progress{})
	c.ReportProgress(T, coordinator.Progress{}) // unchanged again
	c.ObserveJoin(T, 43, 1)                     // a newer epoch: it changes the view
	var got []string
	for _, l := range lines.All() {
		got = append(got, l.Action.String())
	}
	want := []string{"CoordLearnVersion", "MaintainerReportProgress", "MaintainerReportProgress", "CoordRecvHeartbeat"}
	if !slices.Equal(got, want) {
		t.Fatalf("lines %v, want %v", got, want)
	}
}

// TestTraceOfARejoinAtTheSameEpoch: a member removed for silence and
// taken back at the same epoch (the daemon's MemberTTL, then the node's
// join again) is the mapping's CoordRejoin, which forgets the version
// (the model's coordVersion goes back to unknown). The coordinator
// forgets it too and waits for the bootstrap again; that bootstrap is a
// CoordLearnVersion and must be traced, though the epoch is one the
// version was learnt for before, or the next CoordSendDraining is a step
// the model's coordinator (version unknown) cannot take.
func TestTraceOfARejoinAtTheSameEpoch(t *testing.T) {
	var lines trace.Lines
	c, _ := coordinator.New(coordinator.Config{Tracer: &lines, TraceNode: T})
	c.AddNode(T, 42, 0)
	c.ObserveVersion(T, 42, node.VersionBrokerDrain)
	c.DrainNode(T, 0)
	c.NextCommand(0)
	c.RemoveNode(T) // silent for the member TTL
	c.AddNode(T, 42, 5)
	c.ObserveJoin(T, 42, 5) // a stutter: no line
	if _, ok := c.NextCommand(5); ok {
		t.Fatal("a command before the rejoined process's version is known")
	}
	c.ObserveVersion(T, 42, node.VersionBrokerDrain)
	c.DrainNode(T, 5)
	c.NextCommand(5)
	var got []string
	for _, l := range lines.All() {
		got = append(got, l.Action.String())
	}
	want := []string{"CoordLearnVersion", "CoordSendDraining", "CoordRejoin", "CoordLearnVersion", "CoordSendDraining"}
	if !slices.Equal(got, want) {
		t.Fatalf("lines %v, want %v", got, want)
	}
}

// TestTraceOfTheQuery: a query NextQuery returns is traced as
// CoordSendQuery, sending the model's query (it names T only), with the
// coordinator's view; a query it holds back is not traced.
func TestTraceOfTheQuery(t *testing.T) {
	var lines trace.Lines
	c, _ := coordinator.New(coordinator.Config{Transport: node.TransportLogCoord, QueryInterval: 5, Tracer: &lines, TraceNode: T})
	c.AddNode(T, 1, 0)
	c.ObserveVersion(T, 1, node.VersionBrokerDrain)
	c.DrainNode(T, 0)
	c.ReportProgress(T, coordinator.Progress{})
	c.ObserveResponse(node.Response{From: T, Epoch: 1, Liveness: node.Stopping}, 1)
	before := len(lines.All())
	if _, ok := c.NextQuery(2); !ok {
		t.Fatal("no query after STOPPING")
	}
	if _, ok := c.NextQuery(3); ok {
		t.Fatal("query inside the query interval")
	}
	want := []string{
		`{"action":"CoordSendQuery","params":{"m":{"kind":"query","epoch":-1,"liveness":"NONE","count":-1,"closed":false}},` +
			`"vars":{"coordEpoch":1,"coordLiveness":"STOPPING","coordCount":-1,"work":0,"drainedEpoch":-1}}`,
	}
	if got := traced(&lines)[before:]; !slices.Equal(got, want) {
		t.Fatalf("trace:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
