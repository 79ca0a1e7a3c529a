package transport

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"

	"github.com/drainproof/drainproof/impl/logcoord"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/transport/pb"
)

// lcRig is a LogCoordinator behind a real gRPC server on loopback, with
// a clock the test moves, and a client connection to it.
type lcRig struct {
	now   atomic.Int64
	cache *logcoord.Cache
	lc    pb.LogCoordinatorClient
}

func newLCRig(t *testing.T, ttl int64) *lcRig {
	t.Helper()
	r := &lcRig{cache: logcoord.New(logcoord.Config{TTL: ttl})}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	pb.RegisterLogCoordinatorServer(srv, &LogCoordServer{Cache: r.cache, Now: r.now.Load})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	conn, err := Dial(lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		srv.Stop()
		<-done
	})
	r.lc = pb.NewLogCoordinatorClient(conn)
	return r
}

// send sends r over gRPC as the node's event service does
// (ReportToPB), at tick now.
func (r *lcRig) send(t *testing.T, rep node.Report, now int64) {
	t.Helper()
	r.now.Store(now)
	if _, err := r.lc.Report(context.Background(), ReportToPB(rep)); err != nil {
		t.Fatal(err)
	}
}

func (r *lcRig) known(t *testing.T, now int64) bool {
	t.Helper()
	r.now.Store(now)
	a, err := r.lc.Query(context.Background(), &pb.CountQuery{Target: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	return a.GetKnown()
}

// TestOlderReportOverGRPCDoesNotRefresh: the report's sequence number
// crosses the wire, so an older report that arrives late over gRPC does
// not refresh the LogCoordinator's entry (L2, TiCDC #6155). The two
// reports carry the same sample (count 0, admission closed), so only the
// number tells them apart: without the field on the wire (or with the
// server dropping it) the late one refreshes the entry and it is still
// known past the TTL.
func TestOlderReportOverGRPCDoesNotRefresh(t *testing.T) {
	r := newLCRig(t, 3)
	first := node.Report{From: "n1", Epoch: 2, Count: 0, AdmissionClosed: true, Seq: 1}
	second := first
	second.Seq = 2
	r.send(t, second, 0)
	r.send(t, first, 2) // the older report, delayed
	if got, ok := r.cache.Entry("n1"); !ok || got != second {
		t.Fatalf("the entry is %+v (%v), want %+v: the sequence number did not cross the wire", got, ok, second)
	}
	if !r.known(t, 3) {
		t.Fatal("at tick 3 (TTL 3 after the newest report) the entry is unknown")
	}
	if r.known(t, 4) {
		t.Fatal("at tick 4 the entry is still known: the late older report refreshed it")
	}
	// A newer report, late or not, does refresh it.
	r.send(t, second, 5)
	third := second
	third.Seq = 3
	r.send(t, third, 6)
	if !r.known(t, 9) || r.known(t, 10) {
		t.Fatal("the entry's age is not the arrival of report 3 (tick 6)")
	}
}

// TestReportToPB: every field of a node.Report reaches the message.
func TestReportToPB(t *testing.T) {
	rep := node.Report{From: "n7", Epoch: 4, Count: 9, AdmissionClosed: true, Seq: 12}
	m := ReportToPB(rep)
	if m.GetNode() != "n7" || m.GetEpoch() != 4 || m.GetCount() != 9 || !m.GetAdmissionClosed() || m.GetSeq() != 12 {
		t.Fatalf("ReportToPB(%+v) = %v", rep, m)
	}
	if back := reportFromPB(m); back != rep {
		t.Fatalf("reportFromPB(ReportToPB(%+v)) = %+v", rep, back)
	}
}
