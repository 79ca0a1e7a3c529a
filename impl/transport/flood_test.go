package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/transport/pb"
)

// badCalls are malformed messages, one per handler's check: each must be
// answered InvalidArgument without touching the library.
func badCalls(conn *grpc.ClientConn) []func(context.Context) error {
	es, ns, lc := pb.NewEventServiceClient(conn), pb.NewNodeClient(conn), pb.NewLogCoordinatorClient(conn)
	long := strings.Repeat("x", MaxIDLen+1)
	return []func(context.Context) error{
		func(ctx context.Context) error { // no cluster
			_, err := es.Dispatch(ctx, &pb.DispatcherRequest{Action: pb.Action_REGISTER, Dispatcher: "flood", Table: 1})
			return err
		},
		func(ctx context.Context) error { // an over-long dispatcher ID
			_, err := es.Dispatch(ctx, &pb.DispatcherRequest{Action: pb.Action_REGISTER, Cluster: "c1", Dispatcher: long, Table: 1})
			return err
		},
		func(ctx context.Context) error { // a negative table
			_, err := es.Dispatch(ctx, &pb.DispatcherRequest{Action: pb.Action_REGISTER, Cluster: "c1", Dispatcher: "flood", Table: -1})
			return err
		},
		func(ctx context.Context) error { // an unknown action
			_, err := es.Dispatch(ctx, &pb.DispatcherRequest{Action: pb.Action(99), Cluster: "c1", Dispatcher: "flood"})
			return err
		},
		func(ctx context.Context) error { // no events
			_, err := es.WriteEvents(ctx, &pb.WriteEventsRequest{Table: 1})
			return err
		},
		func(ctx context.Context) error { // a heartbeat without a cluster
			_, err := es.DispatcherHeartbeat(ctx, &pb.DispatcherHeartbeatRequest{})
			return err
		},
		func(ctx context.Context) error { // a command for another node
			_, err := ns.SetLiveness(ctx, &pb.SetLivenessRequest{Node: "n2", Epoch: 3, Target: pb.Liveness_STOPPING})
			return err
		},
		func(ctx context.Context) error { // an unknown liveness
			_, err := ns.SetLiveness(ctx, &pb.SetLivenessRequest{Node: "n1", Epoch: 3, Target: pb.Liveness(42)})
			return err
		},
		func(ctx context.Context) error { // a report of epoch 0
			_, err := lc.Report(ctx, &pb.CountReport{Node: "n1", Epoch: 0, Count: 7})
			return err
		},
		func(ctx context.Context) error { // a negative count
			_, err := lc.Report(ctx, &pb.CountReport{Node: "n1", Epoch: 3, Count: -1})
			return err
		},
	}
}

// flood sends bad messages from conns goroutines, each on its own
// connection, until stop; it counts the answers and fails t (through
// bad) on any answer but InvalidArgument.
type flood struct {
	sent, wrong atomic.Int64
	firstWrong  atomic.Value // string
	stop        context.CancelFunc
	wg          sync.WaitGroup
}

func startFlood(tb testing.TB, addr string, conns int) *flood {
	return startFloodWith(tb, addr, conns, false)
}

// startFloodWith is startFlood; with fresh, each goroutine opens a new
// connection for each message (a flooder that dodges a per-connection
// limit).
func startFloodWith(tb testing.TB, addr string, conns int, fresh bool) *flood {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := &flood{stop: cancel}
	for g := range conns {
		conn, err := Dial(addr)
		if err != nil {
			tb.Fatal(err)
		}
		calls := badCalls(conn)
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			defer func() { conn.Close() }()
			for i := g; ctx.Err() == nil; i++ {
				if fresh && i != g {
					conn.Close()
					if conn, err = Dial(addr); err != nil {
						f.wrong.Add(1)
						f.firstWrong.CompareAndSwap(nil, fmt.Sprintf("dial: %v", err))
						return
					}
					calls = badCalls(conn)
				}
				cctx, c := context.WithTimeout(ctx, 5*time.Second)
				err := calls[i%len(calls)](cctx)
				c()
				if ctx.Err() != nil {
					return
				}
				f.sent.Add(1)
				if status.Code(err) != codes.InvalidArgument {
					f.wrong.Add(1)
					f.firstWrong.CompareAndSwap(nil, fmt.Sprintf("bad call %d: %v", i%len(calls), err))
				}
			}
		}()
	}
	return f
}

func (f *flood) end() { f.stop(); f.wg.Wait() }

// pairLatency runs one REGISTER and one REMOVE of dispatcher id and
// returns their round trip.
func pairLatency(ctx context.Context, r *rig, id string) (time.Duration, error) {
	t0 := time.Now()
	resp, err := r.es.Dispatch(ctx, regPB(id, 1))
	if err != nil {
		return 0, err
	}
	if resp.GetOutcome() != pb.Outcome_OK {
		return 0, fmt.Errorf("REGISTER %s: %v", id, resp.GetOutcome())
	}
	resp, err = r.es.Dispatch(ctx, &pb.DispatcherRequest{Action: pb.Action_REMOVE, Cluster: "c1", Dispatcher: id})
	if err != nil {
		return 0, err
	}
	if resp.GetOutcome() != pb.Outcome_OK {
		return 0, fmt.Errorf("REMOVE %s: %v", id, resp.GetOutcome())
	}
	return time.Since(t0), nil
}

// TestFloodKeepsRegistrations: while 8 connections flood the node with
// malformed messages of every kind, every one of 200 good
// REGISTER+REMOVE pairs succeeds, every bad message is answered
// InvalidArgument, and the flood changes no state: the count is 0, the
// node ALIVE at its epoch, admission open, no store resource held, no
// report cached. (Latency under the flood is BenchmarkFlood's: speed
// targets live in benchmarks.)
func TestFloodKeepsRegistrations(t *testing.T) {
	r := newRig(t)
	f := startFlood(t, r.addr, 8)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 200 {
		if _, err := pairLatency(ctx, r, fmt.Sprintf("good-%d", i)); err != nil {
			f.end()
			t.Fatalf("good pair %d under the flood: %v", i, err)
		}
	}
	f.end()
	if f.sent.Load() < 100 {
		t.Fatalf("only %d bad messages were sent: no flood", f.sent.Load())
	}
	if n := f.wrong.Load(); n != 0 {
		t.Errorf("%d of %d bad messages not answered InvalidArgument; first: %v", n, f.sent.Load(), f.firstWrong.Load())
	}
	if n, closed := r.svc.Sample(); n != 0 || closed {
		t.Errorf("after the flood: count %d, admission closed %v; want 0, open", n, closed)
	}
	if r.node.Liveness() != node.Alive || r.node.Epoch() != 3 {
		t.Errorf("after the flood: node %v at epoch %d, want ALIVE at 3", r.node.Liveness(), r.node.Epoch())
	}
	if res := r.data.Resources(); res.Batches != 0 || res.Iterators != 0 {
		t.Errorf("after the flood: %d batches, %d iterators open", res.Batches, res.Iterators)
	}
	if _, ok := r.cache.Entry("n1"); ok {
		t.Error("after the flood: a report of n1 is cached")
	}
	t.Logf("%d bad messages during 200 good pairs", f.sent.Load())
}

// BenchmarkFlood measures the round trip of one client's REGISTER+REMOVE
// pairs over gRPC, quiet and while 8 goroutines flood the same server
// with malformed messages (badCalls), each on its own connection, or
// (conn-per-msg) each message on a new connection, without the tarpit,
// with it keyed on the connection as it was (conn-tarpit), and with it
// keyed on the peer; it reports the p50 and p99 of each pair in µs and
// the flood's rate. Run them in the same minutes and compare (the ratios
// are in docs/perf.md):
//
//	go test -run '^$' -bench Flood -benchtime 2000x -count 3 ./impl/transport
func BenchmarkFlood(b *testing.B) {
	for _, mode := range []string{"quiet", "flood", "flood+tarpit", "conn-per-msg", "conn-per-msg+conn-tarpit", "conn-per-msg+tarpit"} {
		b.Run(mode, func(b *testing.B) {
			var opts []grpc.ServerOption
			if strings.HasSuffix(mode, "tarpit") {
				tp := NewTarpit(TarpitRate, TarpitBurst)
				if strings.HasSuffix(mode, "+conn-tarpit") { // the key of old: the connection
					tp.keyOf = func(ctx context.Context) string {
						p, _ := peer.FromContext(ctx)
						return p.Addr.String()
					}
				}
				opts = append(opts, grpc.ChainUnaryInterceptor(tp.Interceptor()))
			}
			r := newRigWith(b, opts...)
			var f *flood
			if mode != "quiet" {
				f = startFloodWith(b, r.addr, 8, strings.HasPrefix(mode, "conn-per-msg"))
				time.Sleep(100 * time.Millisecond) // the flood under way
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			start := time.Now()
			for i := range b.N {
				d, err := pairLatency(ctx, r, fmt.Sprintf("d%d", i%64))
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, d)
			}
			b.StopTimer()
			wall := time.Since(start)
			if f != nil {
				f.end()
				if f.wrong.Load() != 0 {
					b.Fatalf("%d bad messages not answered InvalidArgument: %v", f.wrong.Load(), f.firstWrong.Load())
				}
				b.ReportMetric(float64(f.sent.Load())/wall.Seconds(), "bad-msgs/s")
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// TestTarpitHoldsOnlyTheFlooder: past its burst, a peer's malformed
// message is held (here until its deadline: DeadlineExceeded instead of
// the InvalidArgument it got before), while its good REGISTER and
// another peer's malformed message are answered at once.
func TestTarpitHoldsOnlyTheFlooder(t *testing.T) {
	r := newRigWith(t, grpc.ChainUnaryInterceptor(NewTarpit(0.001, 3).Interceptor()))
	bad := func(es pb.EventServiceClient, d time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		_, err := es.Dispatch(ctx, &pb.DispatcherRequest{Action: pb.Action_REGISTER, Dispatcher: "no-cluster", Table: 1})
		return err
	}
	for i := range 3 {
		if err := bad(r.es, 5*time.Second); status.Code(err) != codes.InvalidArgument {
			t.Fatalf("bad message %d within the burst: %v, want InvalidArgument", i, err)
		}
	}
	if err := bad(r.es, 300*time.Millisecond); status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("bad message past the burst: %v, want held until DeadlineExceeded", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := pairLatency(ctx, r, "good"); err != nil {
		t.Errorf("the flooder's good REGISTER+REMOVE: %v", err)
	}
	other, err := Dial(r.addr, fromIP("127.0.0.2"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := bad(pb.NewEventServiceClient(other), 5*time.Second); status.Code(err) != codes.InvalidArgument {
		t.Errorf("another peer's bad message: %v, want InvalidArgument at once", err)
	}
}

// fromIP is the dial option of a client whose connections leave from
// the loopback address ip (any of 127.0.0.0/8 on Linux).
func fromIP(ip string) grpc.DialOption {
	return grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		return d.DialContext(ctx, "tcp", addr)
	})
}

// TestTarpitKeysOnPeer: a flooder that opens a new connection for each
// malformed message is held past its burst all the same (the bucket is
// its IP's, not its connection's), while a client from another IP is
// answered at once.
func TestTarpitKeysOnPeer(t *testing.T) {
	r := newRigWith(t, grpc.ChainUnaryInterceptor(NewTarpit(0.001, 3).Interceptor()))
	bad := func(d time.Duration, opts ...grpc.DialOption) error {
		conn, err := Dial(r.addr, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		_, err = pb.NewEventServiceClient(conn).Dispatch(ctx, &pb.DispatcherRequest{Action: pb.Action_REGISTER, Dispatcher: "no-cluster", Table: 1})
		return err
	}
	for i := range 3 {
		if err := bad(5 * time.Second); status.Code(err) != codes.InvalidArgument {
			t.Fatalf("bad message %d within the burst: %v, want InvalidArgument", i, err)
		}
	}
	if err := bad(300 * time.Millisecond); status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("bad message past the burst, on a new connection: %v, want held until DeadlineExceeded", err)
	}
	if err := bad(5*time.Second, fromIP("127.0.0.2")); status.Code(err) != codes.InvalidArgument {
		t.Errorf("another IP's bad message: %v, want InvalidArgument at once", err)
	}
}

// TestPeerKey: the tarpit's key is the TLS identity when there is one
// (the same from two addresses; two identities on one address are two
// peers), else the remote IP (any port, IPv4-mapped or not).
func TestPeerKey(t *testing.T) {
	at := func(addr string, cn string) context.Context {
		ap := netip.MustParseAddrPort(addr)
		p := &peer.Peer{Addr: net.TCPAddrFromAddrPort(ap)}
		if cn != "" {
			p.AuthInfo = credentials.TLSInfo{State: tls.ConnectionState{
				VerifiedChains: [][]*x509.Certificate{{{Subject: pkix.Name{CommonName: cn}}}}}}
		}
		return peer.NewContext(context.Background(), p)
	}
	same := [][2]context.Context{
		{at("10.0.0.1:1000", ""), at("10.0.0.1:2000", "")},
		{at("10.0.0.1:1000", ""), at("[::ffff:10.0.0.1]:3000", "")},
		{at("10.0.0.1:1000", "op"), at("10.0.0.2:1000", "op")},
	}
	for i, c := range same {
		if a, b := peerKey(c[0]), peerKey(c[1]); a != b || a == "" {
			t.Errorf("pair %d: keys %q and %q, want one", i, a, b)
		}
	}
	differ := [][2]context.Context{
		{at("10.0.0.1:1000", ""), at("10.0.0.2:1000", "")},
		{at("10.0.0.1:1000", "op"), at("10.0.0.1:1000", "n1")},
		{at("10.0.0.1:1000", "op"), at("10.0.0.1:1000", "")},
	}
	for i, c := range differ {
		if a, b := peerKey(c[0]), peerKey(c[1]); a == b {
			t.Errorf("pair %d: both keyed %q, want two peers", i, a)
		}
	}
}
