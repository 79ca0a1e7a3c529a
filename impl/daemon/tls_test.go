package daemon

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/drainproof/drainproof/harness/pki"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/transport"
	"github.com/drainproof/drainproof/impl/transport/pb"
)

// tlsCluster is a LogCoordinator, a coordinator and node n1, every
// connection mutual TLS under one CA, with the operator identity
// "operator".
type tlsCluster struct {
	ca                 *pki.CA
	co                 *Coordinator
	n1                 *Node
	lcAddr, coordAddr  string
	nodeAddr           string
	coordinatorTLS     *transport.TLS
	operator, intruder *transport.TLS // valid certificates: the operator's, another peer's
}

func mustTLS(t *testing.T, ca *pki.CA, id string) *transport.TLS {
	t.Helper()
	l, err := ca.Issue(id, pki.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := l.TLSCertificate()
	if err != nil {
		t.Fatal(err)
	}
	tt, err := transport.NewTLS(ca.PEM, c)
	if err != nil {
		t.Fatal(err)
	}
	return tt
}

func startTLSCluster(t *testing.T) *tlsCluster {
	t.Helper()
	ca, err := pki.NewCA("drainproof test ca")
	if err != nil {
		t.Fatal(err)
	}
	access := transport.Access{Operator: "operator", Coordinator: "coordinator"}
	c := &tlsCluster{ca: ca, coordinatorTLS: mustTLS(t, ca, "coordinator"), operator: mustTLS(t, ca, "operator"),
		intruder: mustTLS(t, ca, "mallory")}
	lcTLS, n1TLS := mustTLS(t, ca, "logcoord"), mustTLS(t, ca, "n1")
	l := listen(t)
	c.lcAddr = l.Addr().String()
	lc, err := StartLogCoord(LogCoordConfig{Listener: l, TTL: 500 * time.Millisecond, Logger: quiet, ServerOptions: lcTLS.ServerOptions(access)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lc.Close)
	l = listen(t)
	c.coordAddr = l.Addr().String()
	c.co, err = StartCoordinator(CoordinatorConfig{Listener: l, Transport: node.TransportLogCoord, LogCoord: c.lcAddr, Logger: quiet,
		Metrics: NewMetrics(), ServerOptions: c.coordinatorTLS.ServerOptions(access), DialOptions: []grpc.DialOption{c.coordinatorTLS.DialOption()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.co.Close)
	l = listen(t)
	c.nodeAddr = l.Addr().String()
	c.n1, err = StartNode(NodeConfig{ID: "n1", Listener: l, Coordinator: c.coordAddr, LogCoord: c.lcAddr, DataDir: t.TempDir(),
		Version: node.VersionBrokerDrain, Transport: node.TransportLogCoord, HeartbeatEvery: 50 * time.Millisecond,
		ReportEvery: 50 * time.Millisecond, Logger: quiet, Metrics: NewMetrics(),
		ServerOptions: n1TLS.ServerOptions(access), DialOptions: []grpc.DialOption{n1TLS.DialOption()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.n1.Close() })
	return c
}

// clients are a peer's stubs for the three processes.
type clients struct {
	es    pb.EventServiceClient
	ns    pb.NodeClient
	co    pb.CoordinatorClient
	lc    pb.LogCoordinatorClient
	close func()
}

func (c *tlsCluster) dial(t *testing.T, opt grpc.DialOption) clients {
	t.Helper()
	var conns []*grpc.ClientConn
	d := func(addr string) *grpc.ClientConn {
		conn, err := transport.Dial(addr, opt)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn)
		return conn
	}
	n := d(c.nodeAddr)
	return clients{es: pb.NewEventServiceClient(n), ns: pb.NewNodeClient(n), co: pb.NewCoordinatorClient(d(c.coordAddr)),
		lc: pb.NewLogCoordinatorClient(d(c.lcAddr)), close: func() {
			for _, c := range conns {
				_ = c.Close()
			}
		}}
}

// withCert is a client presenting cert (none if nil) that trusts the
// cluster's CA.
func (c *tlsCluster) withCert(cert *pki.Leaf) grpc.DialOption {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.ca.PEM)
	cfg := &tls.Config{MinVersion: tls.VersionTLS13, RootCAs: pool}
	if cert != nil {
		tc, err := cert.TLSCertificate()
		if err != nil {
			panic(err)
		}
		// Present it whatever the server asks for (Go's client would
		// otherwise send nothing when the certificate is not signed by
		// an authority the server names).
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &tc, nil }
	}
	return grpc.WithTransportCredentials(credentials.NewTLS(cfg))
}

// attempts are one call of each kind a peer could make to change the
// cluster: register a dispatcher, report a count, command a node, start
// a drain, join as a node. Each returns its error.
func attempts(cl clients) map[string]func(context.Context) error {
	return map[string]func(context.Context) error{
		"register": func(ctx context.Context) error {
			_, err := cl.es.Dispatch(ctx, &pb.DispatcherRequest{Action: pb.Action_REGISTER, Cluster: string(Cluster), Changefeed: "cf",
				Dispatcher: "intruder", Table: 9, StartTs: 1})
			return err
		},
		"report": func(ctx context.Context) error {
			_, err := cl.lc.Report(ctx, &pb.CountReport{Node: "n9", Epoch: 1, Count: 5})
			return err
		},
		"command": func(ctx context.Context) error {
			_, err := cl.ns.SetLiveness(ctx, &pb.SetLivenessRequest{Node: "n1", Epoch: 1, Target: pb.Liveness_DRAINING})
			return err
		},
		"drain": func(ctx context.Context) error {
			_, err := cl.co.DrainNode(ctx, &pb.DrainNodeRequest{Node: "n1"})
			return err
		},
		"join": func(ctx context.Context) error {
			_, err := cl.co.Join(ctx, &pb.JoinRequest{Node: "n9", Epoch: 1, Version: 2, Addr: "127.0.0.1:1"})
			return err
		},
	}
}

// unchanged fails t unless the cluster is as it started: n1 ALIVE with
// only its maintainer's dispatcher, no drain session, n1 the only
// member, and no report of n9 cached.
func (c *tlsCluster) unchanged(t *testing.T, who string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cl := c.dial(t, c.coordinatorTLS.DialOption())
	defer cl.close()
	if l := c.n1.Liveness(); l != node.Alive {
		t.Errorf("%s: n1 is %v, want ALIVE", who, l)
	}
	st, err := cl.es.Status(ctx, &pb.StatusRequest{})
	if err != nil || st.GetCount() != 1 {
		t.Errorf("%s: n1's count %d (%v), want 1 (the maintainer's dispatcher)", who, st.GetCount(), err)
	}
	c.co.mu.Lock()
	target, drained := c.co.co.Target()
	members := len(c.co.members)
	c.co.mu.Unlock()
	if drained || members != 1 {
		t.Errorf("%s: drain target %q (%v), %d members; want no drain and n1 alone", who, target, drained, members)
	}
	a, err := cl.lc.Query(ctx, &pb.CountQuery{Target: "n9"})
	if err != nil || a.GetKnown() {
		t.Errorf("%s: n9's count in the LogCoordinator: %v (%v), want unknown", who, a, err)
	}
}

// TestTLSRefusesBadCertificates: with mutual TLS on, a peer presenting no
// certificate, a self-signed one, one from another CA or an expired one
// (and a plaintext peer) can neither register, report, command a node,
// drain nor join, and nothing changes.
func TestTLSRefusesBadCertificates(t *testing.T) {
	c := startTLSCluster(t)
	other, err := pki.NewCA("another ca")
	if err != nil {
		t.Fatal(err)
	}
	self, err := pki.SelfSigned("operator")
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := other.Issue("operator", pki.Options{})
	if err != nil {
		t.Fatal(err)
	}
	expired, err := c.ca.Issue("operator", pki.Options{NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	peers := map[string]grpc.DialOption{
		"no certificate": c.withCert(nil),
		"self-signed":    c.withCert(&self),
		"another CA":     c.withCert(&foreign),
		"expired":        c.withCert(&expired),
		"plaintext":      grpc.EmptyDialOption{}, // transport.Dial's default: insecure
	}
	for name, opt := range peers {
		cl := c.dial(t, opt)
		for what, call := range attempts(cl) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			err := call(ctx)
			cancel()
			if err == nil {
				t.Errorf("%s: %s succeeded", name, what)
			} else if code := status.Code(err); code != codes.Unavailable {
				t.Errorf("%s: %s: %v, want Unavailable (the handshake refused)", name, what, err)
			}
		}
		cl.close()
		c.unchanged(t, name)
	}
}

// TestOperatorAloneDrains: a peer with a valid certificate that is not
// the operator gets PermissionDenied for a drain, a command to a node, a
// report and a join in another node's name, and nothing changes (it may
// still use the event service: it is a collector); the operator's drain
// starts and n1 becomes DRAINING.
func TestOperatorAloneDrains(t *testing.T) {
	c := startTLSCluster(t)
	cl := c.dial(t, c.intruder.DialOption())
	for what, call := range attempts(cl) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := call(ctx)
		cancel()
		if what == "register" {
			if err != nil {
				t.Errorf("a valid peer's REGISTER: %v", err)
			}
			continue
		}
		if code := status.Code(err); code != codes.PermissionDenied {
			t.Errorf("non-operator %s: %v, want PermissionDenied", what, err)
		}
	}
	ctx := context.Background()
	if _, err := cl.es.Dispatch(ctx, &pb.DispatcherRequest{Action: pb.Action_REMOVE, Cluster: string(Cluster), Dispatcher: "intruder"}); err != nil {
		t.Fatal(err)
	}
	cl.close()
	c.unchanged(t, "non-operator")

	op := c.dial(t, c.operator.DialOption())
	defer op.close()
	// The operator polls, as an upgrade client does: a poll before the
	// coordinator has learned the nodes' versions only waits (a quiet
	// machine gets there first), and a later one starts the drain.
	deadline := time.Now().Add(10 * time.Second)
	for c.n1.Liveness() == node.Alive {
		if _, err := op.co.DrainNode(ctx, &pb.DrainNodeRequest{Node: "n1"}); err != nil {
			t.Fatalf("the operator's drain: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatal("n1 still ALIVE 10s after the operator's first drain poll")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
