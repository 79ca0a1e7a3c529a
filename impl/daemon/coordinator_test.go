package daemon

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/trace"
	"github.com/drainproof/drainproof/impl/transport"
	"github.com/drainproof/drainproof/impl/transport/pb"
)

// lockedBuf is a bytes.Buffer safe for a writer and the test.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// counter returns the value of the counter metric name in m.
func counter(t *testing.T, m *Metrics, name string) float64 {
	t.Helper()
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}

// TestTracedRolesNeedTheirTraceNode: a traced coordinator or
// LogCoordinator without the node whose drain it traces is refused, and
// so is a TraceRestart without a trace; with both it starts.
func TestTracedRolesNeedTheirTraceNode(t *testing.T) {
	tracer := func() *trace.Writer {
		w, err := trace.NewWriter(new(lockedBuf), trace.Header{Model: map[string]any{}, Process: "p"})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	for _, tc := range []struct {
		name    string
		tr      *trace.Writer
		n       node.ID
		restart bool
		ok      bool
	}{
		{"traced, no TraceNode", tracer(), "", false, false},
		{"TraceRestart untraced", nil, "n1", true, false},
		{"traced", tracer(), "n1", false, true},
		{"traced restart", tracer(), "n1", true, true},
	} {
		co, err := StartCoordinator(CoordinatorConfig{Listener: listen(t), Transport: node.TransportHeartbeat, Logger: quiet,
			Tracer: tc.tr, TraceNode: tc.n, TraceRestart: tc.restart})
		if (err == nil) != tc.ok {
			t.Errorf("coordinator %s: %v, want started %v", tc.name, err, tc.ok)
		}
		if err == nil {
			co.Close()
		}
		lc, err := StartLogCoord(LogCoordConfig{Listener: listen(t), Logger: quiet, Tracer: tc.tr, TraceNode: tc.n, TraceRestart: tc.restart})
		if (err == nil) != tc.ok {
			t.Errorf("logcoord %s: %v, want started %v", tc.name, err, tc.ok)
		}
		if err == nil {
			lc.Close()
		}
	}
}

// TestANewProcessEndsItsPredecessorsDrain: a join repeated by the same
// process (its epoch) keeps the drain session of which it is the
// target; a join of a larger epoch (a new process: the old one left,
// whether or not its Leave arrived) ends it, and the new process's
// drain is a new session.
func TestANewProcessEndsItsPredecessorsDrain(t *testing.T) {
	m := NewMetrics()
	c, err := StartCoordinator(CoordinatorConfig{Listener: listen(t), Transport: node.TransportHeartbeat,
		Period: time.Hour, ResendEvery: time.Hour, MemberTTL: time.Hour, Logger: quiet, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	join := func(id string, epoch uint64) {
		t.Helper()
		if _, err := c.Join(ctx, &pb.JoinRequest{Node: id, Epoch: epoch, Version: int32(node.VersionBrokerDrain), Addr: "127.0.0.1:1"}); err != nil {
			t.Fatalf("join of %s at %d: %v", id, epoch, err)
		}
		c.mu.Lock() // as the periodic task's bootstrap would
		c.members[node.ID(id)].booted = true
		c.co.ObserveVersion(node.ID(id), epoch, node.VersionBrokerDrain)
		c.mu.Unlock()
	}
	drain := func(want float64) {
		t.Helper()
		if d, err := c.DrainNode(ctx, &pb.DrainNodeRequest{Node: "n1"}); err != nil || d.GetWaiting() {
			t.Fatalf("drain of n1: %v %v", d, err)
		}
		if tg, ok := c.co.Target(); !ok || tg != "n1" {
			t.Fatalf("drain target %q (%v), want n1", tg, ok)
		}
		if got := counter(t, m, "drainproof_drains_started_total"); got != want {
			t.Fatalf("%v drains started, want %v", got, want)
		}
	}
	join("n1", 5)
	join("n2", 3)
	drain(1)
	join("n1", 5)
	if tg, ok := c.co.Target(); !ok || tg != "n1" {
		t.Fatalf("after n1's join repeated at epoch 5: drain target %q (%v), want n1 still", tg, ok)
	}
	drain(1)
	join("n1", 6)
	if tg, ok := c.co.Target(); ok {
		t.Fatalf("after n1's join at epoch 6: drain target %q, want none (the session ended)", tg)
	}
	drain(2)
}

// TestALegacyNodeGetsTheLegacyAnswer: a node that announces the legacy
// version (0) in its bootstrap is known as legacy, and its drain gets the
// legacy hard-restart answer at once.
func TestALegacyNodeGetsTheLegacyAnswer(t *testing.T) {
	l := listen(t)
	co, err := StartCoordinator(CoordinatorConfig{Listener: l, Transport: node.TransportHeartbeat, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer co.Close()
	nd, err := StartNode(NodeConfig{ID: "n1", Listener: listen(t), Coordinator: l.Addr().String(), DataDir: t.TempDir(),
		Version: node.VersionLegacy, Transport: node.TransportHeartbeat, HeartbeatEvery: 50 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer nd.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := nd.Drain(ctx, 20*time.Millisecond)
	if err != nil || !r.Legacy || r.Complete {
		t.Fatalf("drain of a legacy node: %+v %v, want the legacy answer", r, err)
	}
	if v := co.co.NodeView("n1"); !v.VersionKnown || v.Version != node.VersionLegacy {
		t.Fatalf("the coordinator's view of n1: %+v, want version 0 known", v)
	}
}

// TestASlowLogCoordinatorIsWaitedFor: the coordinator waits for a count
// query's answer up to four periods, so a LogCoordinator that answers in
// a period and a half (a loaded one) still completes the drain.
func TestASlowLogCoordinatorIsWaitedFor(t *testing.T) {
	const period = 100 * time.Millisecond
	slow := grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if info.FullMethod == pb.LogCoordinator_Query_FullMethodName {
			time.Sleep(period * 3 / 2)
		}
		return h(ctx, req)
	})
	ll := listen(t)
	lc, err := StartLogCoord(LogCoordConfig{Listener: ll, TTL: 2 * time.Second, Logger: quiet, ServerOptions: []grpc.ServerOption{slow}})
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	l := listen(t)
	co, err := StartCoordinator(CoordinatorConfig{Listener: l, Transport: node.TransportLogCoord, LogCoord: ll.Addr().String(),
		Period: period, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer co.Close()
	nd, err := StartNode(NodeConfig{ID: "n1", Listener: listen(t), Coordinator: l.Addr().String(), LogCoord: ll.Addr().String(),
		DataDir: t.TempDir(), Version: node.VersionBrokerDrain, Transport: node.TransportLogCoord,
		HeartbeatEvery: 50 * time.Millisecond, ReportEvery: 50 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer nd.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	r, err := nd.Drain(ctx, 20*time.Millisecond)
	if err != nil || !r.Complete || r.DrainedEpoch != nd.Epoch() {
		t.Fatalf("drain with a LogCoordinator answering in %v: %+v %v, want complete", period*3/2, r, err)
	}
}

// TestTheLogCoordinatorTTLDefaultsToASecond: with no TTL, a cached
// report is answered at once and is unknown again a second later.
func TestTheLogCoordinatorTTLDefaultsToASecond(t *testing.T) {
	l := listen(t)
	lc, err := StartLogCoord(LogCoordConfig{Listener: l, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	conn, err := transport.Dial(l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cl := pb.NewLogCoordinatorClient(conn)
	ctx := context.Background()
	if _, err := cl.Report(ctx, &pb.CountReport{Node: "n1", Epoch: 1, Count: 0, AdmissionClosed: true}); err != nil {
		t.Fatal(err)
	}
	if a, err := cl.Query(ctx, &pb.CountQuery{Target: "n1"}); err != nil || !a.GetKnown() {
		t.Fatalf("a fresh report: %v %v, want known", a, err)
	}
	time.Sleep(1100 * time.Millisecond)
	if a, err := cl.Query(ctx, &pb.CountQuery{Target: "n1"}); err != nil || a.GetKnown() {
		t.Fatalf("a report 1.1s old: %v %v, want unknown (expired)", a, err)
	}
}

// TestADrainIsCountedOnce: a drain that completes counts one drain
// started, one completed and one latency sample, however often the
// upgrade client polls it afterwards.
func TestADrainIsCountedOnce(t *testing.T) {
	c := startCluster(t, node.TransportHeartbeat, 2)
	n1 := c.nodes[0]
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if r, err := n1.Drain(ctx, 20*time.Millisecond); err != nil || !r.Complete {
		t.Fatalf("drain of n1: %+v %v", r, err)
	}
	for range 3 {
		if d, err := c.co.DrainNode(ctx, &pb.DrainNodeRequest{Node: "n1"}); err != nil || !d.GetComplete() {
			t.Fatalf("a poll after the drain: %v %v, want complete", d, err)
		}
	}
	m := c.co.cfg.Metrics
	started, completed := counter(t, m, "drainproof_drains_started_total"), counter(t, m, "drainproof_drains_completed_total")
	var samples uint64
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "drainproof_drain_seconds" {
			samples = mf.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	if started != 1 || completed != 1 || samples != 1 {
		t.Fatalf("drains started %v, completed %v, latency samples %d; want 1, 1, 1", started, completed, samples)
	}
}

// TestRolesLogToTheirLogger: the coordinator and the LogCoordinator log
// to the logger they are given (their start, a node's join).
func TestRolesLogToTheirLogger(t *testing.T) {
	buf := new(lockedBuf)
	logger := slog.New(slog.NewTextHandler(buf, nil))
	lc, err := StartLogCoord(LogCoordConfig{Listener: listen(t), Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	co, err := StartCoordinator(CoordinatorConfig{Listener: listen(t), Transport: node.TransportHeartbeat, Logger: logger,
		Period: time.Hour, MemberTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer co.Close()
	if _, err := co.Join(context.Background(), &pb.JoinRequest{Node: "n1", Epoch: 1, Version: int32(node.VersionBrokerDrain), Addr: "127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	for _, msg := range []string{"logcoord started", "coordinator started", "node joined"} {
		if !logged(buf, msg) {
			t.Errorf("%q not logged to the given logger:\n%s", msg, buf)
		}
	}
}

// TestNodeIDsUpToMaxIDLenBytes: a node ID of exactly MaxIDLen bytes
// joins, heartbeats, is drained and leaves; one byte more is refused
// InvalidArgument by each.
func TestNodeIDsUpToMaxIDLenBytes(t *testing.T) {
	c := idleCoordinator(t, time.Hour)
	ctx := context.Background()
	calls := func(id string) []error {
		_, jerr := c.Join(ctx, &pb.JoinRequest{Node: id, Epoch: 1, Version: int32(node.VersionBrokerDrain), Addr: "127.0.0.1:1"})
		_, herr := c.Heartbeat(ctx, &pb.NodeHeartbeat{Node: id, Epoch: 1, Liveness: pb.Liveness_ALIVE, HasCount: true})
		_, derr := c.DrainNode(ctx, &pb.DrainNodeRequest{Node: id})
		_, lerr := c.Leave(ctx, &pb.LeaveRequest{Node: id, Epoch: 1})
		return []error{jerr, herr, derr, lerr}
	}
	id := strings.Repeat("n", transport.MaxIDLen)
	for i, err := range calls(id) {
		if err != nil {
			t.Errorf("call %d of a %d-byte node ID: %v", i, len(id), err)
		}
	}
	for i, err := range calls(id + "n") {
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("call %d of a %d-byte node ID: %v, want InvalidArgument", i, len(id)+1, err)
		}
	}
}

// TestANodeRestartedElsewhereIsDialledThere: a new process of a node
// that joins from another address is the member at that address (its
// commands go there), and one that joins again from its address keeps
// it.
func TestANodeRestartedElsewhereIsDialledThere(t *testing.T) {
	c := idleCoordinator(t, time.Hour)
	ctx := context.Background()
	for _, j := range []struct {
		epoch uint64
		addr  string
	}{{5, "127.0.0.1:1"}, {5, "127.0.0.1:1"}, {6, "127.0.0.1:2"}, {7, "127.0.0.1:2"}} {
		if _, err := c.Join(ctx, &pb.JoinRequest{Node: "n1", Epoch: j.epoch, Version: int32(node.VersionBrokerDrain), Addr: j.addr}); err != nil {
			t.Fatal(err)
		}
		ms, err := c.Members(ctx, &pb.MembersRequest{})
		if err != nil || len(ms.GetMembers()) != 1 || ms.GetMembers()[0].GetAddr() != j.addr || ms.GetMembers()[0].GetEpoch() != j.epoch {
			t.Fatalf("after n1's join at %d from %s: members %v (%v)", j.epoch, j.addr, ms.GetMembers(), err)
		}
		c.mu.Lock()
		target := c.members["n1"].conn.Target()
		c.mu.Unlock()
		if target != j.addr {
			t.Fatalf("after n1's join at %d from %s: its connection dials %s", j.epoch, j.addr, target)
		}
	}
}

// TestMembersAreSortedByNode: Members lists every member once, sorted by
// node ID, whatever the order of the joins.
func TestMembersAreSortedByNode(t *testing.T) {
	c := idleCoordinator(t, time.Hour)
	ctx := context.Background()
	ids := []string{"n5", "n2", "n8", "n1", "n7", "n3", "n6", "n4"}
	for _, id := range ids {
		if _, err := c.Join(ctx, &pb.JoinRequest{Node: id, Epoch: 1, Version: int32(node.VersionBrokerDrain), Addr: "127.0.0.1:1"}); err != nil {
			t.Fatal(err)
		}
	}
	want := slices.Sorted(slices.Values(ids))
	for range 10 { // the members are a map: its order changes from call to call
		ms, err := c.Members(ctx, &pb.MembersRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range ms.GetMembers() {
			got = append(got, m.GetNode())
		}
		if !slices.Equal(got, want) {
			t.Fatalf("Members: %v, want %v", got, want)
		}
	}
}

// TestASilentMemberExpiresPastMemberTTL: the periodic task removes a
// member silent for more than MemberTTL, and only such a member: one
// silent for exactly MemberTTL stays, and a heartbeat of an older
// process (epoch) does not count as the member's.
func TestASilentMemberExpiresPastMemberTTL(t *testing.T) {
	c := idleCoordinator(t, time.Second)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	c.clk = clock{start: t0, wall: func() time.Time { return now }}
	ctx := context.Background()
	for _, j := range []struct {
		id    string
		epoch uint64
	}{{"n1", 5}, {"n2", 3}, {"n3", 4}} {
		if _, err := c.Join(ctx, &pb.JoinRequest{Node: j.id, Epoch: j.epoch, Version: int32(node.VersionBrokerDrain), Addr: "127.0.0.1:1"}); err != nil {
			t.Fatal(err)
		}
	}
	now = t0.Add(time.Second)
	for _, hb := range []*pb.NodeHeartbeat{
		{Node: "n2", Epoch: 3, Liveness: pb.Liveness_ALIVE, HasCount: true},
		{Node: "n3", Epoch: 3, Liveness: pb.Liveness_ALIVE, HasCount: true}, // n3's previous process
	} {
		if _, err := c.Heartbeat(ctx, hb); err != nil {
			t.Fatal(err)
		}
	}
	members := func() []string {
		c.mu.Lock()
		defer c.mu.Unlock()
		var ids []string
		for id := range c.members {
			ids = append(ids, string(id))
		}
		slices.Sort(ids)
		return ids
	}
	c.expire()
	if got := members(); !slices.Equal(got, []string{"n1", "n2", "n3"}) {
		t.Fatalf("members silent for at most MemberTTL: %v left, want n1, n2, n3", got)
	}
	now = t0.Add(time.Second + time.Nanosecond)
	c.expire()
	if got := members(); !slices.Equal(got, []string{"n2"}) {
		t.Fatalf("n1 and n3 silent for MemberTTL and 1ns, n2 for 1ns: %v left, want n2", got)
	}
	if v := c.co.NodeView("n1"); v.Member {
		t.Fatalf("the drain controller still counts the expired n1: %+v", v)
	}
}

// TestACommandsResponseIsApplied: the coordinator applies the response
// to its liveness command (C4): a node that sends no heartbeat is seen
// DRAINING once it answered the command.
func TestACommandsResponseIsApplied(t *testing.T) {
	nd, err := node.New(node.Config{ID: "n1", Epoch: 5, Version: node.VersionBrokerDrain, Transport: node.TransportHeartbeat})
	if err != nil {
		t.Fatal(err)
	}
	nl := listen(t)
	srv := grpc.NewServer()
	pb.RegisterNodeServer(srv, &transport.NodeServer{Node: nd})
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(nl)
	}()
	defer func() { srv.Stop(); <-served }()
	c, err := StartCoordinator(CoordinatorConfig{Listener: listen(t), Transport: node.TransportHeartbeat,
		Period: 20 * time.Millisecond, ResendEvery: 50 * time.Millisecond, MemberTTL: time.Hour, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Join(ctx, &pb.JoinRequest{Node: "n1", Epoch: 5, Version: int32(node.VersionBrokerDrain), Addr: nl.Addr().String()}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "n1's drain started (its bootstrap answered)", func() bool {
		if _, err := c.DrainNode(ctx, &pb.DrainNodeRequest{Node: "n1"}); err != nil {
			t.Fatal(err)
		}
		_, ok := c.co.Target()
		return ok
	})
	waitFor(t, 5*time.Second, "n1 seen DRAINING from its response alone", func() bool {
		return c.co.NodeView("n1").Liveness >= node.Draining
	})
	if nd.Liveness() < node.Draining {
		t.Fatalf("n1 is %v, want the command applied", nd.Liveness())
	}
}

// idleCoordinator starts a heartbeat coordinator whose periodic task and
// resends wait an hour (so only the test's calls move it), with the given
// MemberTTL; it is closed when the test ends.
func idleCoordinator(t *testing.T, memberTTL time.Duration) *Coordinator {
	t.Helper()
	c, err := StartCoordinator(CoordinatorConfig{Listener: listen(t), Transport: node.TransportHeartbeat,
		Period: time.Hour, ResendEvery: time.Hour, MemberTTL: memberTTL, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}
