package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/trace"
	"github.com/drainproof/drainproof/impl/transport/pb"
	"github.com/drainproof/drainproof/tla/names"
)

// syncBuf is a bytes.Buffer safe for the writer and the test.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// stamped is the stamp part of a trace line.
type stamped struct {
	P      string `json:"p"`
	C      uint64 `json:"c"`
	Action string `json:"action"`
	From   []struct {
		P string `json:"p"`
		C uint64 `json:"c"`
	} `json:"from"`
}

func (s *syncBuf) lines(t *testing.T) []stamped {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []stamped
	for i, l := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		if i == 0 {
			continue // the header
		}
		var x stamped
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		out = append(out, x)
	}
	return out
}

func procWriter(t *testing.T, proc string) (*trace.Writer, *syncBuf) {
	t.Helper()
	b := new(syncBuf)
	w, err := trace.NewWriter(b, trace.Header{Model: map[string]any{}, Process: proc})
	if err != nil {
		t.Fatal(err)
	}
	return w, b
}

// TestStampsCrossGRPC: a command sent over gRPC after the coordinator's
// send line makes the node's receive line depend on that line, and the
// response makes the coordinator's next line depend on the node's reply
// line; the clocks follow (Lamport).
func TestStampsCrossGRPC(t *testing.T) {
	cw, cbuf := procWriter(t, "coord")
	nw, nbuf := procWriter(t, "T.1")
	n, err := node.New(node.Config{ID: "n1", Epoch: 1, Version: node.VersionBrokerDrain, Transport: node.TransportLogCoord,
		Liveness: new(node.LivenessStore), Tracer: nw})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(StampServerInterceptor(nw)))
	pb.RegisterNodeServer(srv, &NodeServer{Node: n})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	defer func() { srv.Stop(); <-done }()
	conn, err := Dial(lis.Addr().String(), grpc.WithChainUnaryInterceptor(StampClientInterceptor(cw)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	// Some lines first, so the clocks differ.
	for range 3 {
		cw.Trace(&trace.Line{Action: names.CoordLearnVersion})
	}
	cw.Trace(&trace.Line{Action: names.CoordSendDraining})
	send := cw.Last()
	if _, err := pb.NewNodeClient(conn).SetLiveness(context.Background(),
		&pb.SetLivenessRequest{Node: "n1", Epoch: 1, Target: pb.Liveness_DRAINING}); err != nil {
		t.Fatal(err)
	}
	cw.Trace(&trace.Line{Action: names.CoordRecvResponse})
	if err := errors.Join(cw.Close(), nw.Close()); err != nil {
		t.Fatal(err)
	}

	nl := nbuf.lines(t)
	if len(nl) != 1 || nl[0].Action != names.NodeRecvCommand.String() {
		t.Fatalf("node trace: %+v, want one NodeRecvCommand", nl)
	}
	if len(nl[0].From) != 1 || nl[0].From[0].P != "coord" || nl[0].From[0].C != send.Clock {
		t.Fatalf("NodeRecvCommand from %+v, want coord's send line %d", nl[0].From, send.Clock)
	}
	if nl[0].C <= send.Clock {
		t.Fatalf("NodeRecvCommand clock %d not past the send's %d", nl[0].C, send.Clock)
	}
	cl := cbuf.lines(t)
	last := cl[len(cl)-1]
	if len(last.From) != 1 || last.From[0].P != "T.1" || last.From[0].C != nl[0].C {
		t.Fatalf("CoordRecvResponse from %+v, want T.1's reply line %d", last.From, nl[0].C)
	}
	if last.C <= nl[0].C {
		t.Fatalf("CoordRecvResponse clock %d not past the reply's %d", last.C, nl[0].C)
	}
}

// TestBadStampRefused: a request with a malformed stamp (or two) is
// refused with InvalidArgument before the handler runs: no line, no
// liveness change.
func TestBadStampRefused(t *testing.T) {
	nw, nbuf := procWriter(t, "T.1")
	live := new(node.LivenessStore)
	n, err := node.New(node.Config{ID: "n1", Epoch: 1, Version: node.VersionBrokerDrain, Transport: node.TransportLogCoord,
		Liveness: live, Tracer: nw})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(StampServerInterceptor(nw)))
	pb.RegisterNodeServer(srv, &NodeServer{Node: n})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	defer func() { srv.Stop(); <-done }()
	conn, err := Dial(lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, md := range [][]string{{StampKey, "x coord"}, {StampKey, "0 coord"}, {StampKey, "5"}, {StampKey, "5 a b"},
		{StampKey, "1 coord", StampKey, "2 coord"}, {StampKey, "1 " + strings.Repeat("p", MaxStampLen)}} {
		ctx := metadata.AppendToOutgoingContext(context.Background(), md...)
		_, err := pb.NewNodeClient(conn).SetLiveness(ctx, &pb.SetLivenessRequest{Node: "n1", Epoch: 1, Target: pb.Liveness_DRAINING})
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("stamp %q: %v, want InvalidArgument", md, err)
		}
	}
	if err := nw.Close(); err != nil {
		t.Fatal(err)
	}
	if got := nbuf.lines(t); len(got) != 0 || live.Load() != node.Alive {
		t.Fatalf("a refused command was applied: %d lines, liveness %v", len(got), live.Load())
	}
}

func TestParseStampRoundTrip(t *testing.T) {
	s := trace.Stamp{Proc: "n2.3", Clock: 42}
	got, err := ParseStamp(FormatStamp(s))
	if err != nil || got != s {
		t.Fatalf("ParseStamp(FormatStamp(%v)) = %v, %v", s, got, err)
	}
}

// TestAStampOfMaxStampLenBytesIsTaken: a stamp of exactly MaxStampLen
// bytes parses; one byte more is refused.
func TestAStampOfMaxStampLenBytesIsTaken(t *testing.T) {
	v := "1 " + strings.Repeat("p", MaxStampLen-2)
	if s, err := ParseStamp(v); err != nil || s.Clock != 1 || len(s.Proc) != MaxStampLen-2 {
		t.Fatalf("ParseStamp of %d bytes: %v, %v", len(v), s, err)
	}
	if _, err := ParseStamp(v + "p"); err == nil {
		t.Fatalf("ParseStamp of %d bytes: no error", len(v)+1)
	}
}
