package transport

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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
