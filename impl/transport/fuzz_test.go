package transport

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/drainproof/drainproof/impl/logcoord"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/transport/pb"
)

// The handlers' fuzz tests call the servers directly (no network): any
// message gets an answer or a status error, never a panic, and a refused
// message (InvalidArgument) changes nothing. make fuzz runs them.

// FuzzDispatch: a REGISTER, REMOVE or RESET of any shape.
func FuzzDispatch(f *testing.F) {
	f.Add(int32(1), "c1", "cf", "d1", int64(1), uint64(1), uint64(0), false, false)
	f.Add(int32(3), "c1", "", "d1", int64(0), uint64(0), uint64(0), true, true)
	f.Add(int32(9), "", "", "", int64(-5), uint64(0), uint64(7), false, true)
	r := newRig(f)
	srv := &EventServer{Svc: r.svc, Data: r.data, Node: r.node}
	f.Fuzz(func(t *testing.T, action int32, cluster, cf, id string, table int64, startTs, epoch uint64, onlyReuse, trigger bool) {
		before, _ := r.svc.Sample()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		resp, err := srv.Dispatch(ctx, &pb.DispatcherRequest{Action: pb.Action(action), Cluster: cluster, Changefeed: cf,
			Dispatcher: id, Table: table, StartTs: startTs, Epoch: epoch, OnlyReuse: onlyReuse, TableTrigger: trigger})
		if err != nil {
			if _, ok := status.FromError(err); !ok {
				t.Fatalf("Dispatch returned a non-status error %v", err)
			}
			if after, _ := r.svc.Sample(); status.Code(err) == codes.InvalidArgument && after != before {
				t.Fatalf("a refused message changed the count %d -> %d", before, after)
			}
			return
		}
		if resp == nil {
			t.Fatal("Dispatch returned neither an answer nor an error")
		}
		// Leave the registry empty for the next input.
		_, _ = srv.Dispatch(ctx, &pb.DispatcherRequest{Action: pb.Action_REMOVE, Cluster: cluster, Dispatcher: id})
	})
}

// FuzzSetLiveness: a command of any node, epoch and target. A refused
// command leaves the liveness as it was; an accepted one only moves it
// forward (D1).
func FuzzSetLiveness(f *testing.F) {
	f.Add("n1", uint64(3), int32(1))
	f.Add("n2", uint64(3), int32(2))
	f.Add("n1", uint64(0), int32(-1))
	f.Fuzz(func(t *testing.T, n string, epoch uint64, target int32) {
		nd, err := node.New(node.Config{ID: "n1", Epoch: 3, Version: node.VersionBrokerDrain, Transport: node.TransportLogCoord})
		if err != nil {
			t.Fatal(err)
		}
		srv := &NodeServer{Node: nd}
		before := nd.Liveness()
		resp, err := srv.SetLiveness(context.Background(), &pb.SetLivenessRequest{Node: n, Epoch: epoch, Target: pb.Liveness(target)})
		if err != nil {
			if status.Code(err) != codes.InvalidArgument || nd.Liveness() != before {
				t.Fatalf("SetLiveness: %v, liveness %v -> %v", err, before, nd.Liveness())
			}
			return
		}
		if resp.GetEpoch() != 3 || nd.Liveness() < before {
			t.Fatalf("SetLiveness answered %v; liveness %v -> %v", resp, before, nd.Liveness())
		}
	})
}

// FuzzWriteEvents: a batch of any shape is written whole or refused.
func FuzzWriteEvents(f *testing.F) {
	f.Add(int64(1), uint64(5), []byte("k"), []byte("v"), 3)
	f.Add(int64(0), uint64(0), []byte(nil), []byte(nil), 0)
	f.Add(int64(-1), uint64(1), []byte("k"), []byte("v"), 5000)
	r := newRig(f)
	srv := &EventServer{Svc: r.svc, Data: r.data, Node: r.node}
	f.Fuzz(func(t *testing.T, table int64, ts uint64, key, value []byte, n int) {
		if n < 0 || n > 2*MaxBatch {
			n = n & 0xff
		}
		req := &pb.WriteEventsRequest{Table: table}
		for i := range n {
			req.Events = append(req.Events, &pb.Event{CommitTs: ts + uint64(i), Key: key, Value: value})
		}
		_, err := srv.WriteEvents(context.Background(), req)
		if err != nil {
			if _, ok := status.FromError(err); !ok {
				t.Fatalf("WriteEvents returned a non-status error %v", err)
			}
		}
		if res := r.data.Resources(); res.Batches != 0 || res.Iterators != 0 {
			t.Fatalf("resources left open: %+v", res)
		}
	})
}

// FuzzReport: a count report of any shape is cached or refused; a query
// never fails for a valid target.
func FuzzReport(f *testing.F) {
	f.Add("n1", uint64(1), int64(0), true)
	f.Add("", uint64(0), int64(-1), false)
	f.Fuzz(func(t *testing.T, n string, epoch uint64, count int64, closed bool) {
		srv := &LogCoordServer{Cache: newTestCache(), Now: func() int64 { return 1 }}
		_, err := srv.Report(context.Background(), &pb.CountReport{Node: n, Epoch: epoch, Count: count, AdmissionClosed: closed})
		a, qerr := srv.Query(context.Background(), &pb.CountQuery{Target: n})
		if err != nil {
			if status.Code(err) != codes.InvalidArgument {
				t.Fatalf("Report: %v", err)
			}
			if qerr == nil && a.GetKnown() {
				t.Fatalf("a refused report was cached: %v", a)
			}
			return
		}
		if qerr != nil || !a.GetKnown() || a.GetCount() != count || a.GetEpoch() != epoch {
			t.Fatalf("accepted report %d/%d answered %v %v", epoch, count, a, qerr)
		}
	})
}

func newTestCache() *logcoord.Cache { return logcoord.New(logcoord.Config{TTL: 1000}) }

// FuzzDispatcherHeartbeat: a collector's heartbeat of any shape is
// answered or refused; a refused one changes no count.
func FuzzDispatcherHeartbeat(f *testing.F) {
	f.Add("c1", "d1", uint64(5), uint64(1), 1)
	f.Add("", "", uint64(0), uint64(0), 0)
	f.Add("c1", "", uint64(1), uint64(1), 5000)
	r := newRig(f)
	srv := &EventServer{Svc: r.svc, Data: r.data, Node: r.node}
	f.Fuzz(func(t *testing.T, cluster, id string, ts, epoch uint64, n int) {
		if n < 0 || n > 2*MaxBatch {
			n = n & 0xff
		}
		req := &pb.DispatcherHeartbeatRequest{Cluster: cluster}
		for range n {
			req.Progress = append(req.Progress, &pb.Progress{Dispatcher: id, CheckpointTs: ts, Epoch: epoch})
		}
		before, _ := r.svc.Sample()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		resp, err := srv.DispatcherHeartbeat(ctx, req)
		after, _ := r.svc.Sample()
		switch {
		case err != nil && status.Code(err) == codes.Unknown:
			t.Fatalf("DispatcherHeartbeat returned a non-status error %v", err)
		case err != nil && status.Code(err) == codes.InvalidArgument && after != before:
			t.Fatalf("a refused heartbeat changed the count %d -> %d", before, after)
		case err == nil && resp == nil:
			t.Fatal("DispatcherHeartbeat returned neither an answer nor an error")
		}
	})
}

// FuzzReadEvents: a read of any dispatcher, position and limit is
// answered (at most MaxBatch events) or refused, and leaves no iterator
// open.
func FuzzReadEvents(f *testing.F) {
	f.Add("d1", uint64(0), uint32(10))
	f.Add("", uint64(7), uint32(0))
	f.Add("d1", uint64(1)<<63, uint32(1)<<30)
	r := newRig(f)
	srv := &EventServer{Svc: r.svc, Data: r.data, Node: r.node}
	ctx := context.Background()
	if _, err := srv.Dispatch(ctx, regPB("d1", 1)); err != nil {
		f.Fatal(err)
	}
	if _, err := srv.WriteEvents(ctx, &pb.WriteEventsRequest{Table: 1, Events: []*pb.Event{{CommitTs: 5, Key: []byte("k")}}}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, id string, after uint64, limit uint32) {
		resp, err := srv.ReadEvents(ctx, &pb.ReadEventsRequest{Dispatcher: id, After: after, Limit: limit})
		if err != nil {
			if status.Code(err) == codes.Unknown {
				t.Fatalf("ReadEvents returned a non-status error %v", err)
			}
		} else if len(resp.GetEvents()) > MaxBatch {
			t.Fatalf("ReadEvents answered %d events (at most %d)", len(resp.GetEvents()), MaxBatch)
		}
		if res := r.data.Resources(); res.Batches != 0 || res.Iterators != 0 {
			t.Fatalf("resources left open: %+v", res)
		}
	})
}

// FuzzQuery: the coordinator's count query of any target, against a
// LogCoordinator holding n1's report. A refused query (InvalidArgument)
// leaves the report cached; an answer is of the target asked, and known
// with n1's report exactly when the target is n1.
func FuzzQuery(f *testing.F) {
	f.Add("n1")
	f.Add("n2")
	f.Add("")
	f.Add(strings.Repeat("z", MaxIDLen+1))
	srv := &LogCoordServer{Cache: newTestCache(), Now: func() int64 { return 1 }}
	if _, err := srv.Report(context.Background(), &pb.CountReport{Node: "n1", Epoch: 4, Count: 2, AdmissionClosed: true}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, target string) {
		a, err := srv.Query(context.Background(), &pb.CountQuery{Target: target})
		if _, ok := srv.Cache.Entry("n1"); !ok {
			t.Fatalf("a query of %q (answered %v, %v) dropped n1's report", target, a, err)
		}
		if err != nil {
			if status.Code(err) != codes.InvalidArgument {
				t.Fatalf("Query %q: %v, want InvalidArgument", target, err)
			}
			return
		}
		want := &pb.CountAnswer{Target: target}
		if target == "n1" {
			want = &pb.CountAnswer{Target: "n1", Known: true, Epoch: 4, Count: 2, AdmissionClosed: true}
		}
		if !proto.Equal(a, want) {
			t.Fatalf("Query %q answered %v, want %v", target, a, want)
		}
	})
}
