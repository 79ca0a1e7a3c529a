package daemon

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/transport/pb"
)

// logged reports whether the text log in buf has a line of message msg.
func logged(buf *lockedBuf, msg string) bool {
	return strings.Contains(buf.String(), "msg=\""+msg+"\"")
}

// waitFor polls cond every 10ms until it holds, or fails t after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestANodeTakesTheDefaultPeriods: a node configured without periods
// heartbeats every 200ms, reports every 100ms and gives its first join
// 5s, and runs with them.
func TestANodeTakesTheDefaultPeriods(t *testing.T) {
	c := startCluster(t, node.TransportLogCoord, 0)
	nd, err := StartNode(NodeConfig{ID: "n1", Listener: listen(t), Coordinator: c.co.cfg.Listener.Addr().String(),
		LogCoord: c.co.cfg.LogCoord, DataDir: t.TempDir(), Version: node.VersionBrokerDrain, Transport: node.TransportLogCoord, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer nd.Close()
	if nd.cfg.HeartbeatEvery != 200*time.Millisecond || nd.cfg.ReportEvery != 100*time.Millisecond || nd.cfg.JoinTimeout != 5*time.Second {
		t.Fatalf("periods: heartbeat %v, report %v, join %v; want 200ms, 100ms, 5s", nd.cfg.HeartbeatEvery, nd.cfg.ReportEvery, nd.cfg.JoinTimeout)
	}
	c.co.mu.Lock()
	seen := c.co.members["n1"].lastSeen
	c.co.mu.Unlock()
	waitFor(t, 5*time.Second, "a heartbeat of n1 after its join", func() bool {
		c.co.mu.Lock()
		defer c.co.mu.Unlock()
		return c.co.members["n1"].lastSeen.After(seen)
	})
}

// TestARemovedNodeRejoins: a live node the coordinator no longer counts
// as a member (a Leave it did not send, a coordinator that restarted or
// expired it) is answered NotFound at its next heartbeat and joins again,
// even when the coordinator takes two heartbeat periods to answer a join
// (the rejoin is given five).
func TestARemovedNodeRejoins(t *testing.T) {
	const every = 50 * time.Millisecond
	slowJoin := grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if info.FullMethod == pb.Coordinator_Join_FullMethodName {
			time.Sleep(2 * every)
		}
		return h(ctx, req)
	})
	l := listen(t)
	co, err := StartCoordinator(CoordinatorConfig{Listener: l, Transport: node.TransportHeartbeat, Logger: quiet,
		ServerOptions: []grpc.ServerOption{slowJoin}})
	if err != nil {
		t.Fatal(err)
	}
	defer co.Close()
	n1, err := StartNode(NodeConfig{ID: "n1", Listener: listen(t), Coordinator: l.Addr().String(), DataDir: t.TempDir(),
		Version: node.VersionBrokerDrain, Transport: node.TransportHeartbeat, HeartbeatEvery: every, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer n1.Close()
	if _, err := co.Leave(context.Background(), &pb.LeaveRequest{Node: "n1", Epoch: n1.Epoch()}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "n1 a member again", func() bool {
		co.mu.Lock()
		defer co.mu.Unlock()
		m := co.members["n1"]
		return m != nil && m.epoch == n1.Epoch()
	})
}

// TestLostHeartbeatsAndReportsAreLogged: while its peers answer, a node
// logs no lost heartbeat nor report; once the LogCoordinator is gone it
// logs its lost reports, once the coordinator is gone its lost
// heartbeats (at debug level).
func TestLostHeartbeatsAndReportsAreLogged(t *testing.T) {
	ll, l := listen(t), listen(t)
	lc, err := StartLogCoord(LogCoordConfig{Listener: ll, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	var lcOnce, coOnce sync.Once
	defer lcOnce.Do(lc.Close)
	co, err := StartCoordinator(CoordinatorConfig{Listener: l, Transport: node.TransportLogCoord, LogCoord: ll.Addr().String(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer coOnce.Do(co.Close)
	buf := new(lockedBuf)
	nd, err := StartNode(NodeConfig{ID: "n1", Listener: listen(t), Coordinator: l.Addr().String(), LogCoord: ll.Addr().String(),
		DataDir: t.TempDir(), Version: node.VersionBrokerDrain, Transport: node.TransportLogCoord,
		HeartbeatEvery: 20 * time.Millisecond, ReportEvery: 20 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	defer nd.Close()
	time.Sleep(300 * time.Millisecond) // heartbeats and reports that arrive
	for _, msg := range []string{"report lost", "heartbeat lost"} {
		if logged(buf, msg) {
			t.Fatalf("%q logged while the peers answer:\n%s", msg, buf)
		}
	}
	lcOnce.Do(lc.Close)
	waitFor(t, 5*time.Second, "\"report lost\" logged, the LogCoordinator gone", func() bool { return logged(buf, "report lost") })
	coOnce.Do(co.Close)
	waitFor(t, 5*time.Second, "\"heartbeat lost\" logged, the coordinator gone", func() bool { return logged(buf, "heartbeat lost") })
}

// TestTheSchemaStoreCountsReferences: RegisterTable takes a reference
// (after a delay of at most SchemaDelay, however small), an unregister
// gives one back and never takes a count below zero, and a register
// whose context ends during the delay fails with the context's error
// and takes none.
func TestTheSchemaStoreCountsReferences(t *testing.T) {
	ctx := context.Background()
	s := newSchemaStore(time.Nanosecond)
	refs := func(table store.TableID) int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.refs[table]
	}
	for range 20 {
		if err := s.RegisterTable(ctx, 1, 1); err != nil {
			t.Fatalf("RegisterTable with a delay of 1ns: %v", err)
		}
	}
	s.UnregisterTable(1)
	if n := refs(1); n != 19 {
		t.Fatalf("table 1: %d references after 20 registers and 1 unregister, want 19", n)
	}
	s.UnregisterTable(2)
	if n := refs(2); n != 0 {
		t.Fatalf("table 2, never registered: %d references after an unregister, want 0", n)
	}
	if err := s.RegisterTable(ctx, 2, 1); err != nil || refs(2) != 1 {
		t.Fatalf("table 2: RegisterTable %v, %d references, want 1", err, refs(2))
	}
	slow := newSchemaStore(time.Hour)
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := slow.RegisterTable(cctx, 3, 1); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 10*time.Second {
		t.Fatalf("RegisterTable past its deadline: %v after %v, want DeadlineExceeded at the deadline", err, time.Since(start))
	}
	if n := slow.refs[3]; n != 0 {
		t.Fatalf("table 3: %d references after a failed register, want 0", n)
	}
}

// TestDiskFaultsFailWritesWithTheirProbability: the injector fails only
// a write batch's Set and Commit, each when its draw falls below p: a
// draw of exactly p does not, p = 1 fails every write and a tiny p
// almost none, from a seeded, repeatable sequence.
func TestDiskFaultsFailWritesWithTheirProbability(t *testing.T) {
	const seed = 42
	first := rand.New(rand.NewPCG(seed, 0xd15c)).Float64()
	if err := diskFaults(first, seed)(store.FaultBatchSet); err != nil {
		t.Fatalf("a draw of exactly p = %v: %v, want no fault", first, err)
	}
	count := func(p float64) (faults int) {
		f := diskFaults(p, seed)
		for i := range 1000 {
			if err := f([]store.Fault{store.FaultBatchSet, store.FaultBatchCommit}[i%2]); err != nil {
				if !errors.Is(err, errDisk) {
					t.Fatalf("fault %v, want errDisk", err)
				}
				faults++
			}
		}
		return faults
	}
	if n := count(1); n != 1000 {
		t.Errorf("p = 1: %d of 1000 writes failed, want all", n)
	}
	if n := count(1e-9); n != 0 {
		t.Errorf("p = 1e-9: %d of 1000 writes failed, want none", n)
	}
	if n := count(0.25); n < 150 || n > 350 {
		t.Errorf("p = 0.25: %d of 1000 writes failed, want about 250", n)
	}
	f := diskFaults(1, seed)
	for _, fault := range []store.Fault{store.FaultIterOpen, store.FaultIterNext} {
		if err := f(fault); err != nil {
			t.Errorf("fault point %v with p = 1: %v, want none (reads never fail)", fault, err)
		}
	}
}
