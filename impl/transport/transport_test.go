package transport

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/drainproof/drainproof/impl/eventservice"
	"github.com/drainproof/drainproof/impl/logcoord"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/store/storetest"
	"github.com/drainproof/drainproof/impl/transport/pb"
)

// rig is an event service and a node behind a real gRPC server on
// loopback, and a client connection to it.
type rig struct {
	svc  *eventservice.Service
	ss   *storetest.MemSchemaStore
	data *store.MemEventStore
	node *node.Node
	live *node.LivenessStore
	es   pb.EventServiceClient
	ns   pb.NodeClient
	lc   pb.LogCoordinatorClient
	addr string // the server's address
	// cache is the LogCoordinator's.
	cache *logcoord.Cache
	// stores is data with refusal switches: the event store the service
	// registers dispatchers with.
	stores *storetest.EventStore
}

func newRig(t testing.TB) *rig { return newRigWith(t) }

// newRigWith is newRig with server options (interceptors).
func newRigWith(t testing.TB, opts ...grpc.ServerOption) *rig {
	t.Helper()
	r := &rig{ss: storetest.NewMemSchemaStore(), data: store.NewMemEventStore(), live: new(node.LivenessStore)}
	r.stores = storetest.Wrap(r.data)
	var err error
	r.svc, err = eventservice.New(eventservice.Config{
		NewStores: func(eventservice.ClusterID) (store.EventStore, store.SchemaStore) { return r.stores, r.ss },
		Stopping:  func() bool { return r.live.Load() == node.Stopping },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	wait := r.svc.Start(ctx)
	r.node, err = node.New(node.Config{ID: "n1", Epoch: 3, Version: node.VersionBrokerDrain, Transport: node.TransportLogCoord,
		Service: r.svc, Liveness: r.live})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(opts...)
	pb.RegisterEventServiceServer(srv, &EventServer{Svc: r.svc, Data: r.data, Node: r.node})
	pb.RegisterNodeServer(srv, &NodeServer{Node: r.node})
	r.cache = logcoord.New(logcoord.Config{TTL: 1000})
	pb.RegisterLogCoordinatorServer(srv, &LogCoordServer{Cache: r.cache, Now: func() int64 { return 1 }})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	r.addr = lis.Addr().String()
	conn, err := Dial(r.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		srv.Stop()
		<-done
		cancel()
		_ = wait()
		_ = r.data.Close()
	})
	r.es, r.ns, r.lc = pb.NewEventServiceClient(conn), pb.NewNodeClient(conn), pb.NewLogCoordinatorClient(conn)
	return r
}

func regPB(id string, table int64) *pb.DispatcherRequest {
	return &pb.DispatcherRequest{Action: pb.Action_REGISTER, Cluster: "c1", Changefeed: "cf", Dispatcher: id, Table: table, StartTs: 1}
}

// TestCancelledRegisterOverGRPC: a REGISTER whose RegisterTable blocks
// and whose client deadline passes returns promptly with
// DeadlineExceeded, leaves the count as before, and the next
// dispatcher's REGISTER goes through at once.
func TestCancelledRegisterOverGRPC(t *testing.T) {
	r := newRig(t)
	hold := r.ss.BlockRegisterTable()
	released := false
	defer func() {
		if !released {
			hold.Release()
		}
	}()
	// A deadline long enough for the request to reach the store even on
	// a slow machine (the race detector): the test waits until it is
	// held there, so that the server, not the network, decides.
	const deadline = 2 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := r.es.Dispatch(ctx, regPB("d1", 1))
		done <- err
	}()
	select {
	case <-hold.Entered():
	case err := <-done:
		t.Fatalf("Dispatch returned %v before reaching the store", err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(deadline + 2*time.Second):
		hold.Release()
		released = true
		t.Fatalf("a REGISTER blocked in its store call has not returned %v after its deadline", 2*time.Second)
	}
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("Dispatch = %v, want DeadlineExceeded", err)
	}
	if el := time.Since(start); el > deadline+time.Second {
		t.Fatalf("the cancelled REGISTER returned after %v (deadline %v)", el, deadline)
	}
	// The server's side releases the store call when the deadline
	// passes (not when the hold is released): the count must settle at
	// 0 (d1 rolled back) while the store still blocks.
	settle := time.Now().Add(2 * time.Second)
	for {
		if n, _ := r.svc.Sample(); n == 0 {
			break
		}
		if time.Now().After(settle) {
			n, _ := r.svc.Sample()
			t.Fatalf("count = %d after the cancelled REGISTER, want 0", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The loop is free: another dispatcher's request goes through while
	// the store still holds RegisterTable calls (a table trigger calls
	// no store).
	ctx2, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	resp, err := r.es.Dispatch(ctx2, &pb.DispatcherRequest{Action: pb.Action_REGISTER, Cluster: "c1", Changefeed: "cf",
		Dispatcher: "t1", TableTrigger: true})
	if err != nil || resp.GetOutcome() != pb.Outcome_OK {
		t.Fatalf("the next REGISTER: %v %v (stalled behind the cancelled one?)", resp, err)
	}
	r.ss.Unblock()
	hold.Release()
	released = true
	if n, _ := r.svc.Sample(); n != 1 {
		t.Fatalf("count = %d, want 1 (t1)", n)
	}
}

// TestHostileMessages: every handler answers a malformed message with
// InvalidArgument and changes nothing.
func TestHostileMessages(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	long := string(make([]byte, MaxIDLen+1))
	for name, call := range map[string]func() error{
		"no action": func() error {
			_, err := r.es.Dispatch(ctx, &pb.DispatcherRequest{Cluster: "c1", Dispatcher: "d"})
			return err
		},
		"no dispatcher":   func() error { _, err := r.es.Dispatch(ctx, regPB("", 1)); return err },
		"long dispatcher": func() error { _, err := r.es.Dispatch(ctx, regPB(long, 1)); return err },
		"negative table":  func() error { _, err := r.es.Dispatch(ctx, regPB("d", -1)); return err },
		"table 0":         func() error { _, err := r.es.Dispatch(ctx, regPB("d", 0)); return err },
		"reset epoch 0": func() error {
			_, err := r.es.Dispatch(ctx, &pb.DispatcherRequest{Action: pb.Action_RESET, Cluster: "c1", Dispatcher: "d"})
			return err
		},
		"empty write": func() error { _, err := r.es.WriteEvents(ctx, &pb.WriteEventsRequest{Table: 1}); return err },
		"write table 0": func() error {
			_, err := r.es.WriteEvents(ctx, &pb.WriteEventsRequest{Events: []*pb.Event{{CommitTs: 1}}})
			return err
		},
		"write ts 0": func() error {
			_, err := r.es.WriteEvents(ctx, &pb.WriteEventsRequest{Table: 1, Events: []*pb.Event{{}}})
			return err
		},
		"liveness other": func() error {
			_, err := r.ns.SetLiveness(ctx, &pb.SetLivenessRequest{Node: "n2", Epoch: 3, Target: pb.Liveness_DRAINING})
			return err
		},
		"liveness bad": func() error {
			_, err := r.ns.SetLiveness(ctx, &pb.SetLivenessRequest{Node: "n1", Epoch: 3, Target: 9})
			return err
		},
		"report epoch 0":   func() error { _, err := r.lc.Report(ctx, &pb.CountReport{Node: "n1", Count: 0}); return err },
		"report negative":  func() error { _, err := r.lc.Report(ctx, &pb.CountReport{Node: "n1", Epoch: 1, Count: -1}); return err },
		"query no target":  func() error { _, err := r.lc.Query(ctx, &pb.CountQuery{}); return err },
		"heartbeat no cid": func() error { _, err := r.es.DispatcherHeartbeat(ctx, &pb.DispatcherHeartbeatRequest{}); return err },
	} {
		if code := status.Code(call()); code != codes.InvalidArgument {
			t.Errorf("%s: code %v, want InvalidArgument", name, code)
		}
	}
	if n, _ := r.svc.Sample(); n != 0 {
		t.Errorf("count = %d after hostile messages, want 0", n)
	}
	if l := r.node.Liveness(); l != node.Alive {
		t.Errorf("liveness %v after hostile commands, want ALIVE", l)
	}
	if a, _ := r.lc.Query(ctx, &pb.CountQuery{Target: "n1"}); a.GetKnown() {
		t.Errorf("a refused report was cached: %v", a)
	}
}

// TestProtocolOverGRPC walks one registration and one drain step over
// the wire: REGISTER, a stale-epoch command (no change, the node's epoch
// answered: N1), DRAINING, STOPPING (admission closes: a remote probe
// gets NOT_REUSABLE, a local REGISTER ADMISSION_CLOSED), REMOVE, the
// data path, and the LogCoordinator's report and answer.
func TestProtocolOverGRPC(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	if resp, err := r.es.Dispatch(ctx, regPB("d1", 1)); err != nil || resp.GetOutcome() != pb.Outcome_OK || resp.GetNodeEpoch() != 3 {
		t.Fatalf("REGISTER: %v %v", resp, err)
	}
	if _, err := r.es.WriteEvents(ctx, &pb.WriteEventsRequest{Table: 1, Events: []*pb.Event{{CommitTs: 5, Key: []byte("k"), Value: []byte("v")}}}); err != nil {
		t.Fatal(err)
	}
	ev, err := r.es.ReadEvents(ctx, &pb.ReadEventsRequest{Cluster: "c1", Dispatcher: "d1"})
	if err != nil || len(ev.GetEvents()) != 1 || ev.GetEvents()[0].GetCommitTs() != 5 {
		t.Fatalf("ReadEvents: %v %v", ev, err)
	}
	if _, err := r.es.ReadEvents(ctx, &pb.ReadEventsRequest{Cluster: "c1", Dispatcher: "nobody"}); status.Code(err) != codes.NotFound {
		t.Fatalf("ReadEvents of an unregistered dispatcher: %v, want NotFound", err)
	}
	resp, err := r.ns.SetLiveness(ctx, &pb.SetLivenessRequest{Node: "n1", Epoch: 2, Target: pb.Liveness_DRAINING})
	if err != nil || resp.GetEpoch() != 3 || resp.GetLiveness() != pb.Liveness_ALIVE {
		t.Fatalf("stale command: %v %v, want no change and epoch 3", resp, err)
	}
	for _, l := range []pb.Liveness{pb.Liveness_DRAINING, pb.Liveness_STOPPING} {
		if resp, err := r.ns.SetLiveness(ctx, &pb.SetLivenessRequest{Node: "n1", Epoch: 3, Target: l}); err != nil || resp.GetLiveness() != l {
			t.Fatalf("%v: %v %v", l, resp, err)
		}
	}
	probe := regPB("d2", 2)
	probe.OnlyReuse = true
	if resp, err := r.es.Dispatch(ctx, probe); err != nil || resp.GetOutcome() != pb.Outcome_ADMISSION_CLOSED {
		t.Fatalf("probe after STOPPING: %v %v, want ADMISSION_CLOSED", resp, err)
	}
	st, err := r.es.Status(ctx, &pb.StatusRequest{})
	if err != nil || !st.GetAdmissionClosed() || st.GetCount() != 1 || st.GetLiveness() != pb.Liveness_STOPPING {
		t.Fatalf("Status: %v %v", st, err)
	}
	if _, err := r.lc.Report(ctx, &pb.CountReport{Node: "n1", Epoch: 3, Count: st.GetCount(), AdmissionClosed: true}); err != nil {
		t.Fatal(err)
	}
	if resp, err := r.es.Dispatch(ctx, &pb.DispatcherRequest{Action: pb.Action_REMOVE, Cluster: "c1", Dispatcher: "d1"}); err != nil || resp.GetOutcome() != pb.Outcome_OK {
		t.Fatalf("REMOVE: %v %v", resp, err)
	}
	if _, err := r.lc.Report(ctx, &pb.CountReport{Node: "n1", Epoch: 3, Count: 0, AdmissionClosed: true}); err != nil {
		t.Fatal(err)
	}
	a, err := r.lc.Query(ctx, &pb.CountQuery{Target: "n1"})
	if err != nil || !a.GetKnown() || a.GetCount() != 0 || a.GetEpoch() != 3 {
		t.Fatalf("Query: %v %v", a, err)
	}
	if got := AnswerFromPB(a); !got.Known || got.Count != 0 {
		t.Fatalf("AnswerFromPB = %+v", got)
	}
}
