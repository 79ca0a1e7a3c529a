package daemon

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/transport"
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
// (the rejoin is given five), and logs it.
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
	buf := new(lockedBuf)
	n1, err := StartNode(NodeConfig{ID: "n1", Listener: listen(t), Coordinator: l.Addr().String(), DataDir: t.TempDir(),
		Version: node.VersionBrokerDrain, Transport: node.TransportHeartbeat, HeartbeatEvery: every,
		Logger: slog.New(slog.NewTextHandler(buf, nil))})
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
	waitFor(t, 5*time.Second, "\"rejoined the coordinator\" logged", func() bool { return logged(buf, "rejoined the coordinator") })
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

// TestANodeWithDiskFaultsFailsItsWrites: a node whose every write batch
// fails (DiskFaults 1) answers a write Unavailable and keeps no event of
// it; without faults the same write is taken.
func TestANodeWithDiskFaultsFailsItsWrites(t *testing.T) {
	l := listen(t)
	co, err := StartCoordinator(CoordinatorConfig{Listener: l, Transport: node.TransportHeartbeat, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer co.Close()
	for _, p := range []float64{1, 0} {
		nd, err := StartNode(NodeConfig{ID: "n1", Listener: listen(t), Coordinator: l.Addr().String(), DataDir: t.TempDir(),
			Version: node.VersionBrokerDrain, Transport: node.TransportHeartbeat, DiskFaults: p, DiskSeed: 7, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		conn, err := transport.Dial(nd.cfg.Advertise)
		if err != nil {
			t.Fatal(err)
		}
		_, werr := pb.NewEventServiceClient(conn).WriteEvents(context.Background(),
			&pb.WriteEventsRequest{Table: 1, Events: []*pb.Event{{CommitTs: 5, Key: []byte("k"), Value: []byte("v")}}})
		_ = conn.Close()
		if cerr := nd.Close(); cerr != nil {
			t.Fatal(cerr)
		}
		if want := map[float64]codes.Code{1: codes.Unavailable, 0: codes.OK}[p]; status.Code(werr) != want {
			t.Errorf("a write with DiskFaults %v: %v, want %v", p, werr, want)
		}
	}
}

// TestADrainThatTimesOutSaysWhy: a drain whose context ends before the
// coordinator's answer returns the context's error with what the last
// poll said: the dispatchers still remaining when the coordinator
// answered, its error when it did not.
func TestADrainThatTimesOutSaysWhy(t *testing.T) {
	c := startCluster(t, node.TransportHeartbeat, 2)
	n1 := c.nodes[0]
	// A dispatcher on n1 holds its drain.
	conn, err := transport.Dial(n1.cfg.Advertise)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if r, err := pb.NewEventServiceClient(conn).Dispatch(context.Background(), &pb.DispatcherRequest{Action: pb.Action_REGISTER,
		Cluster: string(Cluster), Changefeed: "cf", Dispatcher: "d1", Table: 7, StartTs: 1}); err != nil || r.GetOutcome() != pb.Outcome_OK {
		t.Fatalf("REGISTER: %v %v", r, err)
	}
	// One poll, then the deadline passes while the drain waits for the
	// next.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = n1.Drain(ctx, time.Minute)
	if want := "context deadline exceeded (last poll: 1 remaining)"; !errors.Is(err, context.DeadlineExceeded) || err.Error() != want {
		t.Fatalf("a drain held by a dispatcher, past its deadline: %v, want %q", err, want)
	}
	c.co.Close()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	_, err = n1.Drain(ctx2, time.Minute)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "(last poll: rpc error: ") {
		t.Fatalf("a drain whose coordinator is gone, past its deadline: %v, want DeadlineExceeded with the last poll's error", err)
	}
}

// TestTheSchemaDelayIsBounded: with SchemaDelay d, a RegisterTable waits
// at most d, and at most d/10 seven times in eight: about d/10 on
// average. The waits are drawn, not timed, so a loaded machine cannot
// move them; one register is timed against its context.
func TestTheSchemaDelayIsBounded(t *testing.T) {
	const d = 40 * time.Millisecond
	s := newSchemaStore(d)
	const n = 4000
	var total time.Duration
	short := 0
	for range n {
		w := s.wait()
		if w < 0 || w > d {
			t.Fatalf("a wait of %v, want 0 to %v", w, d)
		}
		if w <= d/10 {
			short++
		}
		total += w
	}
	// The mean is 7/8·d/20 + 1/8·d/2 = 0.106·d, the standard deviation of
	// a mean of 4000 draws 0.003·d; 7/8 + 1/80 of the draws are at most d/10.
	if mean := total / n; mean < d*8/100 || mean > d*14/100 {
		t.Errorf("the mean wait is %v, want about %v", mean, d*106/1000)
	}
	if share := float64(short) / n; share < 0.85 || share > 0.92 {
		t.Errorf("%.3f of the waits are at most d/10, want about 0.89", share)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.RegisterTable(ctx, 1, 1); err != nil {
		t.Fatalf("register with a minute to go: %v", err)
	}
}

// TestANodeRetriesItsJoinWithBackoff: a node whose coordinator refuses
// its joins for three seconds tries again soon (three attempts in the
// first 280ms: the backoff starts at 50ms, where the retry package's
// default of 200ms would put the third attempt past 300ms), never waits
// much more than half a second between attempts (its cap: the default
// cap of 4s would wait 1.6s or more before the eighth attempt), and joins
// once the coordinator takes it. The bounds leave room for a loaded
// machine's slow round trips.
func TestANodeRetriesItsJoinWithBackoff(t *testing.T) {
	var mu sync.Mutex
	var attempts []time.Time
	var refuseUntil time.Time
	refuse := grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if info.FullMethod == pb.Coordinator_Join_FullMethodName {
			mu.Lock()
			now := time.Now()
			attempts = append(attempts, now)
			refused := now.Before(refuseUntil)
			mu.Unlock()
			if refused {
				return nil, status.Error(codes.Unavailable, "not yet")
			}
		}
		return h(ctx, req)
	})
	l := listen(t)
	co, err := StartCoordinator(CoordinatorConfig{Listener: l, Transport: node.TransportHeartbeat, Logger: quiet,
		ServerOptions: []grpc.ServerOption{refuse}})
	if err != nil {
		t.Fatal(err)
	}
	defer co.Close()
	mu.Lock()
	refuseUntil = time.Now().Add(3 * time.Second)
	mu.Unlock()
	nd, err := StartNode(NodeConfig{ID: "n1", Listener: listen(t), Coordinator: l.Addr().String(), DataDir: t.TempDir(),
		Version: node.VersionBrokerDrain, Transport: node.TransportHeartbeat, Logger: quiet})
	if err != nil {
		t.Fatalf("StartNode, its coordinator refusing joins for 3s: %v", err)
	}
	defer nd.Close()
	mu.Lock()
	defer mu.Unlock()
	early, longest := 0, time.Duration(0)
	for i, at := range attempts {
		if at.Sub(attempts[0]) <= 280*time.Millisecond {
			early++
		}
		if i > 0 {
			longest = max(longest, at.Sub(attempts[i-1]))
		}
	}
	t.Logf("%d join attempts, %d in the first 280ms, at most %v apart", len(attempts), early, longest)
	if early < 3 || longest > 1200*time.Millisecond {
		t.Fatalf("%d join attempts, %d in the first 280ms, at most %v apart; want 3 early and about 500ms apart at most", len(attempts), early, longest)
	}
}

// TestANodeHeartbeatsEveryHeartbeatEvery: a node sends its heartbeat
// every HeartbeatEvery: about 20 in two seconds of 100ms.
func TestANodeHeartbeatsEveryHeartbeatEvery(t *testing.T) {
	var beats atomic.Int64
	count := grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if info.FullMethod == pb.Coordinator_Heartbeat_FullMethodName {
			beats.Add(1)
		}
		return h(ctx, req)
	})
	l := listen(t)
	co, err := StartCoordinator(CoordinatorConfig{Listener: l, Transport: node.TransportHeartbeat, Logger: quiet,
		ServerOptions: []grpc.ServerOption{count}})
	if err != nil {
		t.Fatal(err)
	}
	defer co.Close()
	nd, err := StartNode(NodeConfig{ID: "n1", Listener: listen(t), Coordinator: l.Addr().String(), DataDir: t.TempDir(),
		Version: node.VersionBrokerDrain, Transport: node.TransportHeartbeat, HeartbeatEvery: 100 * time.Millisecond,
		ReportEvery: 100 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer nd.Close()
	before := beats.Load()
	time.Sleep(2 * time.Second)
	n := beats.Load() - before
	t.Logf("%d heartbeats in 2s", n)
	if n < 14 || n > 25 {
		t.Fatalf("%d heartbeats in 2s, every 100ms: want about 20", n)
	}
}

// TestTheDispatchersGaugeIsTheBrokersCount: a node's
// drainproof_dispatchers{broker="c1"} follows its broker's count: 1 for
// its maintainer's dispatcher, 2 once a collector's registers.
func TestTheDispatchersGaugeIsTheBrokersCount(t *testing.T) {
	c := startCluster(t, node.TransportHeartbeat, 1)
	n1 := c.nodes[0]
	gauge := func() float64 {
		mfs, err := n1.cfg.Metrics.Registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				if mf.GetName() == "drainproof_dispatchers" && len(m.GetLabel()) == 1 && m.GetLabel()[0].GetValue() == string(Cluster) {
					return m.GetGauge().GetValue()
				}
			}
		}
		return -1
	}
	waitFor(t, 5*time.Second, "the gauge at 1", func() bool { return gauge() == 1 })
	conn, err := transport.Dial(n1.cfg.Advertise)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if r, err := pb.NewEventServiceClient(conn).Dispatch(context.Background(), &pb.DispatcherRequest{Action: pb.Action_REGISTER,
		Cluster: string(Cluster), Changefeed: "cf", Dispatcher: "d1", Table: 7, StartTs: 1}); err != nil || r.GetOutcome() != pb.Outcome_OK {
		t.Fatalf("REGISTER: %v %v", r, err)
	}
	waitFor(t, 5*time.Second, "the gauge at 2", func() bool { return gauge() == 2 })
}
