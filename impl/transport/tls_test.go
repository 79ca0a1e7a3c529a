package transport

import (
	"context"
	"crypto/tls"
	"os"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/drainproof/drainproof/harness/pki"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/transport/pb"
)

// TestAccessAllow: each rule of Access, for the caller it admits and one
// it refuses.
func TestAccessAllow(t *testing.T) {
	a := Access{Operator: "operator", Coordinator: "spiffe://x/coordinator"}
	op, coord := Identity{CN: "operator"}, Identity{CN: "c", URIs: []string{"spiffe://x/coordinator"}}
	n1, n2 := Identity{CN: "n1"}, Identity{CN: "n2"}
	for _, tc := range []struct {
		who    Identity
		method string
		req    any
		ok     bool
	}{
		{op, "/drainproof.v1.Coordinator/DrainNode", &pb.DrainNodeRequest{Node: "n1"}, true},
		{n1, "/drainproof.v1.Coordinator/DrainNode", &pb.DrainNodeRequest{Node: "n1"}, true},
		{n2, "/drainproof.v1.Coordinator/DrainNode", &pb.DrainNodeRequest{Node: "n1"}, false},
		{coord, "/drainproof.v1.Coordinator/DrainNode", &pb.DrainNodeRequest{Node: "n1"}, false},
		{coord, "/drainproof.v1.Node/SetLiveness", &pb.SetLivenessRequest{Node: "n1"}, true},
		{n1, "/drainproof.v1.Node/SetLiveness", &pb.SetLivenessRequest{Node: "n1"}, false},
		{op, "/drainproof.v1.Node/SetLiveness", &pb.SetLivenessRequest{Node: "n1"}, false},
		{coord, "/drainproof.v1.Node/Bootstrap", &pb.BootstrapRequest{}, true},
		{n2, "/drainproof.v1.Node/Bootstrap", &pb.BootstrapRequest{}, false},
		{coord, "/drainproof.v1.LogCoordinator/Query", &pb.CountQuery{Target: "n1"}, true},
		{n1, "/drainproof.v1.LogCoordinator/Query", &pb.CountQuery{Target: "n1"}, false},
		{n1, "/drainproof.v1.LogCoordinator/Report", &pb.CountReport{Node: "n1"}, true},
		{n2, "/drainproof.v1.LogCoordinator/Report", &pb.CountReport{Node: "n1"}, false},
		{n1, "/drainproof.v1.Coordinator/Join", &pb.JoinRequest{Node: "n1"}, true},
		{op, "/drainproof.v1.Coordinator/Join", &pb.JoinRequest{Node: "n1"}, false},
		{n1, "/drainproof.v1.Coordinator/Heartbeat", &pb.NodeHeartbeat{Node: "n1"}, true},
		{n2, "/drainproof.v1.Coordinator/Heartbeat", &pb.NodeHeartbeat{Node: "n1"}, false},
		{n2, "/drainproof.v1.Coordinator/Leave", &pb.LeaveRequest{Node: "n1"}, false},
		{n2, "/drainproof.v1.Coordinator/Members", &pb.MembersRequest{}, true},
		{n2, "/drainproof.v1.EventService/Dispatch", &pb.DispatcherRequest{}, true},
		{n2, "/drainproof.v1.Unknown/Call", nil, false},
		{Identity{}, "/drainproof.v1.Coordinator/DrainNode", &pb.DrainNodeRequest{Node: ""}, false},
	} {
		err := a.Allow(tc.who, tc.method, tc.req)
		if (err == nil) != tc.ok || (err != nil && status.Code(err) != codes.PermissionDenied) {
			t.Errorf("%v %s %v: %v, want allowed %v", tc.who, tc.method, tc.req, err, tc.ok)
		}
	}
	if (Access{}).Allow(Identity{}, "/drainproof.v1.Coordinator/DrainNode", &pb.DrainNodeRequest{}) == nil {
		t.Error("no operator configured: an empty identity may drain")
	}
}

// TestLoadTLSMissingFile: a missing file's error names its flag, on one
// line (cmd/drainproofd's TestBadFlagsOneLineExit2 covers the others).
func TestLoadTLSMissingFile(t *testing.T) {
	dir := t.TempDir()
	_, err := LoadTLS(dir+"/none", dir+"/none", dir+"/none")
	if err == nil || !strings.HasPrefix(err.Error(), "--tls-ca: ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("LoadTLS of missing files: %v", err)
	}
}

// TestLoadTLS: the three PEM files of a process load into a TLS 1.3
// configuration that presents its certificate and demands the peer's,
// under its identity; each file at fault is named in the error.
func TestLoadTLS(t *testing.T) {
	ca, err := pki.NewCA("transport test ca")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f, err := ca.WriteIdentity(dir, "n1")
	if err != nil {
		t.Fatal(err)
	}
	tt, err := LoadTLS(f.CA, f.Cert, f.Key)
	if err != nil {
		t.Fatalf("LoadTLS of a valid identity: %v", err)
	}
	if !tt.Identity.Is("n1") || tt.Identity.String() != "n1" {
		t.Errorf("identity %v, want n1", tt.Identity)
	}
	if tt.Server.MinVersion != tls.VersionTLS13 || tt.Client.MinVersion != tls.VersionTLS13 ||
		tt.Server.ClientAuth != tls.RequireAndVerifyClientCert || len(tt.Server.Certificates) != 1 || len(tt.Client.Certificates) != 1 ||
		tt.Server.ClientCAs == nil || tt.Client.RootCAs == nil {
		t.Errorf("LoadTLS: server %+v, client %+v: want TLS 1.3, the certificate on both sides, the peer's required", tt.Server, tt.Client)
	}
	other, err := ca.WriteIdentity(t.TempDir(), "n2")
	if err != nil {
		t.Fatal(err)
	}
	notPEM := dir + "/not.pem"
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ca, cert, key, prefix string
	}{
		{f.CA, dir + "/none", f.Key, "--tls-cert: "},
		{f.CA, f.Cert, dir + "/none", "--tls-key: "},
		{f.CA, f.Cert, other.Key, "--tls-cert " + f.Cert + " with --tls-key " + other.Key + ": "},
		{notPEM, f.Cert, f.Key, "--tls-ca " + notPEM + ": no PEM certificate"},
	} {
		_, err := LoadTLS(tc.ca, tc.cert, tc.key)
		if err == nil || !strings.HasPrefix(err.Error(), tc.prefix) || strings.Contains(err.Error(), "\n") {
			t.Errorf("LoadTLS(%s, %s, %s): %v, want one line starting %q", tc.ca, tc.cert, tc.key, err, tc.prefix)
		}
	}
}

// TestNewTLSWantsACertificate: a certificate without its DER, or with
// DER that does not parse, is refused.
func TestNewTLSWantsACertificate(t *testing.T) {
	ca, err := pki.NewCA("transport test ca")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cert tls.Certificate
		want string
	}{
		{tls.Certificate{}, "no certificate"},
		{tls.Certificate{Certificate: [][]byte{[]byte("not DER")}}, "the certificate: "},
	} {
		if _, err := NewTLS(ca.PEM, tc.cert); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("NewTLS of %d certificates: %v, want %q", len(tc.cert.Certificate), err, tc.want)
		}
	}
}

// TestIdentityString: an identity is written as its common name, or,
// without one, as its first URI SAN; with neither it is empty.
func TestIdentityString(t *testing.T) {
	for _, tc := range []struct {
		id   Identity
		want string
	}{
		{Identity{CN: "n1"}, "n1"},
		{Identity{CN: "n1", URIs: []string{"drainproof://x", "drainproof://y"}}, "n1"},
		{Identity{URIs: []string{"drainproof://x", "drainproof://y"}}, "drainproof://x"},
		{Identity{}, ""},
	} {
		if got := tc.id.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.id, got, tc.want)
		}
	}
}

// mustTLS returns the mutual-TLS configuration of identity id under ca.
func mustTLS(t *testing.T, ca *pki.CA, id string) *TLS {
	t.Helper()
	l, err := ca.Issue(id, pki.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := l.TLSCertificate()
	if err != nil {
		t.Fatal(err)
	}
	tt, err := NewTLS(ca.PEM, c)
	if err != nil {
		t.Fatal(err)
	}
	return tt
}

// TestAccessOverMutualTLS: on a server with ServerOptions, the
// coordinator's command reaches the node and is applied, another peer's
// (a valid certificate, the wrong identity) is refused PermissionDenied
// and changes nothing; on a server without TLS, the interceptor refuses
// every call Unauthenticated.
func TestAccessOverMutualTLS(t *testing.T) {
	ca, err := pki.NewCA("transport test ca")
	if err != nil {
		t.Fatal(err)
	}
	access := Access{Operator: "operator", Coordinator: "coordinator"}
	r := newRigWith(t, mustTLS(t, ca, "n1").ServerOptions(access)...)
	call := func(who string) (*pb.SetLivenessResponse, error) {
		conn, err := Dial(r.addr, mustTLS(t, ca, who).DialOption())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return pb.NewNodeClient(conn).SetLiveness(context.Background(), &pb.SetLivenessRequest{Node: "n1", Epoch: 3, Target: pb.Liveness_DRAINING})
	}
	if resp, err := call("mallory"); status.Code(err) != codes.PermissionDenied || r.node.Liveness() != node.Alive {
		t.Fatalf("another peer's command: %v %v, liveness %v: want PermissionDenied, ALIVE", resp, err, r.node.Liveness())
	}
	if resp, err := call("coordinator"); err != nil || resp.GetLiveness() != pb.Liveness_DRAINING || r.node.Liveness() != node.Draining {
		t.Fatalf("the coordinator's command: %v %v, liveness %v: want DRAINING", resp, err, r.node.Liveness())
	}
	plain := newRigWith(t, grpc.ChainUnaryInterceptor(access.Interceptor()))
	if _, err := plain.ns.Bootstrap(context.Background(), &pb.BootstrapRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("a call without a certificate: %v, want Unauthenticated", err)
	}
}
