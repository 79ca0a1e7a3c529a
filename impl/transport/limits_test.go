package transport

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/drainproof/drainproof/impl/eventservice"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/transport/pb"
)

// TestAnIDOfMaxIDLenBytesIsTaken: an ID of exactly MaxIDLen bytes is
// accepted (the dispatcher registers), one byte more is refused.
func TestAnIDOfMaxIDLenBytesIsTaken(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	id := strings.Repeat("d", MaxIDLen)
	if resp, err := r.es.Dispatch(ctx, regPB(id, 1)); err != nil || resp.GetOutcome() != pb.Outcome_OK {
		t.Fatalf("REGISTER of a %d-byte dispatcher ID: %v %v, want OK", MaxIDLen, resp, err)
	}
	if _, err := r.es.Dispatch(ctx, regPB(id+"d", 1)); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("REGISTER of a %d-byte dispatcher ID: %v, want InvalidArgument", MaxIDLen+1, err)
	}
	if n, _ := r.svc.Sample(); n != 1 {
		t.Fatalf("count = %d, want 1", n)
	}
}

// events returns n events of commit timestamps from, from+1, ...
func events(from uint64, n int) []*pb.Event {
	evs := make([]*pb.Event, n)
	for i := range evs {
		evs[i] = &pb.Event{CommitTs: from + uint64(i), Key: []byte("k"), Value: []byte(fmt.Sprint(i))}
	}
	return evs
}

// TestBatchesAndReadsStopAtMaxBatch: a write of MaxBatch events is
// taken and one of MaxBatch+1 refused; a read answers at most MaxBatch
// events, whatever limit it asks (none, or more than MaxBatch), and
// exactly its limit below that, in commit order from after.
func TestBatchesAndReadsStopAtMaxBatch(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	if resp, err := r.es.Dispatch(ctx, regPB("d1", 1)); err != nil || resp.GetOutcome() != pb.Outcome_OK {
		t.Fatalf("REGISTER: %v %v", resp, err)
	}
	if _, err := r.es.WriteEvents(ctx, &pb.WriteEventsRequest{Table: 1, Events: events(2, MaxBatch+1)}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("a write of %d events: %v, want InvalidArgument", MaxBatch+1, err)
	}
	if _, err := r.es.WriteEvents(ctx, &pb.WriteEventsRequest{Table: 1, Events: events(2, MaxBatch)}); err != nil {
		t.Fatalf("a write of %d events: %v", MaxBatch, err)
	}
	if _, err := r.es.WriteEvents(ctx, &pb.WriteEventsRequest{Table: 1, Events: events(2+MaxBatch, 1)}); err != nil {
		t.Fatal(err)
	}
	read := func(after uint64, limit uint32) []*pb.Event {
		t.Helper()
		resp, err := r.es.ReadEvents(ctx, &pb.ReadEventsRequest{Cluster: "c1", Dispatcher: "d1", After: after, Limit: limit})
		if err != nil {
			t.Fatalf("ReadEvents after %d, limit %d: %v", after, limit, err)
		}
		for i, e := range resp.GetEvents() {
			if want := after + 1 + uint64(i); e.GetCommitTs() != want {
				t.Fatalf("ReadEvents after %d, limit %d: event %d at %d, want %d", after, limit, i, e.GetCommitTs(), want)
			}
		}
		return resp.GetEvents()
	}
	for _, tc := range []struct {
		after uint64
		limit uint32
		want  int
	}{
		{1, 0, MaxBatch}, // no limit: MaxBatch of the MaxBatch+1
		{1, MaxBatch + 1, MaxBatch},
		{1, MaxBatch, MaxBatch},
		{1, 1, 1},
		{1, 2, 2},
		{MaxBatch, 0, 2}, // the last two
		{MaxBatch, 3, 2},
	} {
		if got := len(read(tc.after, tc.limit)); got != tc.want {
			t.Errorf("ReadEvents after %d, limit %d: %d events, want %d", tc.after, tc.limit, got, tc.want)
		}
	}
}

// TestAHeartbeatOfMaxBatchEntriesIsTaken: a heartbeat of MaxBatch
// entries is applied (each dispatcher the node does not know is answered
// removed, a registered one is not), one of MaxBatch+1 is refused.
func TestAHeartbeatOfMaxBatchEntriesIsTaken(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	if resp, err := r.es.Dispatch(ctx, regPB("d1", 1)); err != nil || resp.GetOutcome() != pb.Outcome_OK {
		t.Fatalf("REGISTER: %v %v", resp, err)
	}
	hb := &pb.DispatcherHeartbeatRequest{Cluster: "c1", Progress: []*pb.Progress{{Dispatcher: "d1", CheckpointTs: 1}}}
	for i := 1; i < MaxBatch; i++ {
		hb.Progress = append(hb.Progress, &pb.Progress{Dispatcher: fmt.Sprintf("u%d", i), CheckpointTs: 1})
	}
	resp, err := r.es.DispatcherHeartbeat(ctx, hb)
	if err != nil {
		t.Fatalf("a heartbeat of %d entries: %v", MaxBatch, err)
	}
	if resp.GetCluster() != "c1" || len(resp.GetRemoved()) != MaxBatch-1 || resp.GetRemoved()[0] != "u1" {
		t.Fatalf("a heartbeat of d1 and %d unknown dispatchers: cluster %q, %d removed (first %q), want c1, %d from u1",
			MaxBatch-1, resp.GetCluster(), len(resp.GetRemoved()), resp.GetRemoved()[0], MaxBatch-1)
	}
	hb.Progress = append(hb.Progress, &pb.Progress{Dispatcher: "one-too-many", CheckpointTs: 1})
	if _, err := r.es.DispatcherHeartbeat(ctx, hb); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("a heartbeat of %d entries: %v, want InvalidArgument", MaxBatch+1, err)
	}
}

// TestTheServiceFailuresHaveTheirCodes: a request whose caller has gone
// is answered with the context's code (Canceled, DeadlineExceeded), not
// Unavailable; a store failure, and a stopped service, are answered
// Unavailable (try again elsewhere or later), as is a request to a
// service that is not running. The handlers are called
// directly, so that the server's own answer is seen, not the client's.
func TestTheServiceFailuresHaveTheirCodes(t *testing.T) {
	r := newRig(t)
	srv := &EventServer{Svc: r.svc, Data: r.data, Node: r.node}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	hb := &pb.DispatcherHeartbeatRequest{Cluster: "c1"}
	for _, tc := range []struct {
		ctx  context.Context
		want codes.Code
	}{{cancelled, codes.Canceled}, {expired, codes.DeadlineExceeded}} {
		if _, err := srv.Dispatch(tc.ctx, regPB("d1", 1)); status.Code(err) != tc.want {
			t.Errorf("Dispatch, the caller gone (%v): %v, want %v", tc.ctx.Err(), err, tc.want)
		}
		if _, err := srv.DispatcherHeartbeat(tc.ctx, hb); status.Code(err) != tc.want {
			t.Errorf("DispatcherHeartbeat, the caller gone (%v): %v, want %v", tc.ctx.Err(), err, tc.want)
		}
	}
	ctx := context.Background()
	r.ss.FailOnce(errors.New("schema store down"))
	if resp, err := srv.Dispatch(ctx, regPB("d1", 1)); status.Code(err) != codes.Unavailable {
		t.Errorf("Dispatch, the store failing: %v %v, want Unavailable", resp, err)
	}
	if n, _ := r.svc.Sample(); n != 0 {
		t.Errorf("count = %d after the failed REGISTER, want 0", n)
	}
	idle, err := eventservice.New(eventservice.Config{
		NewStores: func(eventservice.ClusterID) (store.EventStore, store.SchemaStore) { return r.stores, r.ss }})
	if err != nil {
		t.Fatal(err)
	}
	srv.Svc = idle // never started
	if resp, err := srv.DispatcherHeartbeat(ctx, hb); status.Code(err) != codes.Unavailable {
		t.Errorf("DispatcherHeartbeat, the service not running: %v %v, want Unavailable", resp, err)
	}
	if resp, err := srv.Dispatch(ctx, regPB("d1", 1)); status.Code(err) != codes.Unavailable {
		t.Errorf("Dispatch, the service not running: %v %v, want Unavailable", resp, err)
	}
}

// TestOnRefusedCountsRefusals: OnRefused is called for a registration
// the event store refused (NOT_REUSABLE) and for one the closed gate
// refused (ADMISSION_CLOSED), and for nothing else.
func TestOnRefusedCountsRefusals(t *testing.T) {
	r := newRig(t)
	refused := 0
	srv := &EventServer{Svc: r.svc, Data: r.data, Node: r.node, OnRefused: func() { refused++ }}
	ctx := context.Background()
	dispatch := func(req *pb.DispatcherRequest, want pb.Outcome, wantRefused int) {
		t.Helper()
		resp, err := srv.Dispatch(ctx, req)
		if err != nil || resp.GetOutcome() != want {
			t.Fatalf("%v %s: %v %v, want %v", req.GetAction(), req.GetDispatcher(), resp, err, want)
		}
		if refused != wantRefused {
			t.Fatalf("after %v %s (%v): %d refusals counted, want %d", req.GetAction(), req.GetDispatcher(), want, refused, wantRefused)
		}
	}
	dispatch(regPB("d1", 1), pb.Outcome_OK, 0)
	dispatch(&pb.DispatcherRequest{Action: pb.Action_RESET, Cluster: "c1", Dispatcher: "nobody", Epoch: 1}, pb.Outcome_UNKNOWN_DISPATCHER, 0)
	r.stores.Refuse(func(id store.DispatcherID, _ store.Subscription) bool { return id == "d2" })
	probe := regPB("d2", 2)
	probe.OnlyReuse = true
	dispatch(probe, pb.Outcome_NOT_REUSABLE, 1)
	dispatch(&pb.DispatcherRequest{Action: pb.Action_REMOVE, Cluster: "c1", Dispatcher: "d1"}, pb.Outcome_OK, 1)
	r.stores.Refuse(nil)
	if !r.live.Advance(node.Draining) || !r.live.Advance(node.Stopping) {
		t.Fatal("the node did not reach STOPPING")
	}
	dispatch(regPB("d3", 3), pb.Outcome_ADMISSION_CLOSED, 2)
}
