package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// TLS is a process's mutual-TLS configuration: its certificate and the
// authority that every peer's certificate must be signed by. Both ends of
// every connection present a certificate (TLS 1.3 only).
type TLS struct {
	// Server is the configuration of the process's gRPC server: client
	// certificates required and verified against the authority.
	Server *tls.Config
	// Client is the configuration of its connections to peers: the
	// peer's certificate verified against the authority (and the address
	// dialled), its own certificate presented.
	Client *tls.Config
	// Identity is the process's own identity (its certificate's).
	Identity Identity
}

// NewTLS returns the mutual-TLS configuration of a process holding cert
// whose peers' certificates are signed by the authority caPEM.
func NewTLS(caPEM []byte, cert tls.Certificate) (*TLS, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("no PEM certificate in the CA file")
	}
	if len(cert.Certificate) == 0 {
		return nil, errors.New("no certificate")
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("the certificate: %v", err)
	}
	return &TLS{
		Server: &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{cert},
			ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool},
		Client:   &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{cert}, RootCAs: pool},
		Identity: identityOf(leaf),
	}, nil
}

// LoadTLS reads a process's PEM files (the authority, its certificate and
// its key) into its mutual-TLS configuration. The error names the file
// at fault, on one line.
func LoadTLS(caFile, certFile, keyFile string) (*TLS, error) {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-ca: %v", err)
	}
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert: %v", err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-key: %v", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s with --tls-key %s: %v", certFile, keyFile, err)
	}
	t, err := NewTLS(ca, cert)
	if err != nil {
		return nil, fmt.Errorf("--tls-ca %s: %v", caFile, err)
	}
	return t, nil
}

// ServerOption returns the gRPC server option of t's server side.
func (t *TLS) ServerOption() grpc.ServerOption {
	return grpc.Creds(credentials.NewTLS(t.Server))
}

// DialOption returns the gRPC dial option of t's client side (it
// replaces [Dial]'s insecure default).
func (t *TLS) DialOption() grpc.DialOption {
	return grpc.WithTransportCredentials(credentials.NewTLS(t.Client))
}

// Identity names the holder of a certificate: its subject's common name
// and its URI SANs.
type Identity struct {
	// CN is the subject's common name.
	CN string
	// URIs are the URI subject alternative names.
	URIs []string
}

func identityOf(c *x509.Certificate) Identity {
	id := Identity{CN: c.Subject.CommonName}
	for _, u := range c.URIs {
		id.URIs = append(id.URIs, u.String())
	}
	return id
}

// Is reports whether the identity is name: name equals the common name
// or one of the URI SANs. An empty name is no one's.
func (id Identity) Is(name string) bool {
	return name != "" && (id.CN == name || slices.Contains(id.URIs, name))
}

// String returns the common name, or the first URI SAN without one.
func (id Identity) String() string {
	if id.CN != "" || len(id.URIs) == 0 {
		return id.CN
	}
	return id.URIs[0]
}

// PeerIdentity returns the identity of the peer of a gRPC call: the
// leaf of its verified certificate chain. ok is false on a connection
// without mutual TLS.
func PeerIdentity(ctx context.Context) (id Identity, ok bool) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return Identity{}, false
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(info.State.VerifiedChains) == 0 || len(info.State.VerifiedChains[0]) == 0 {
		return Identity{}, false
	}
	return identityOf(info.State.VerifiedChains[0][0]), true
}

// Access says who may call what, by the identity of the caller's
// certificate (an identity matches a name by common name or URI SAN,
// [Identity.Is]):
//
//   - starting or polling a drain (Coordinator.DrainNode) is the
//     operator's, or the target node's own (its SIGTERM path);
//   - the coordinator's commands to a node (Node.SetLiveness,
//     Node.Bootstrap) and its count queries (LogCoordinator.Query) are
//     the coordinator's;
//   - a node's own messages (Coordinator.Join, Heartbeat, Leave,
//     LogCoordinator.Report) are that node's: a node's identity is its
//     ID;
//   - the event service and the member list are open to every peer
//     with a valid certificate (collectors, producers).
//
// Anything else is refused with PermissionDenied, without reaching the
// handler.
type Access struct {
	// Operator is the operator's identity ("" : no operator).
	Operator string
	// Coordinator is the coordinator's identity.
	Coordinator string
}

// Allow returns nil if a caller with identity id may call method (the
// full gRPC method name) with req, and a PermissionDenied status if not.
func (a Access) Allow(id Identity, method string, req any) error {
	svc, rpc, _ := strings.Cut(strings.TrimPrefix(method, "/"), "/")
	svc = svc[strings.LastIndex(svc, ".")+1:]
	target := ""
	if n, ok := req.(interface{ GetNode() string }); ok {
		target = n.GetNode()
	}
	var ok bool
	switch svc + "/" + rpc {
	case "Coordinator/DrainNode":
		ok = id.Is(a.Operator) || id.Is(target)
	case "Node/SetLiveness", "Node/Bootstrap", "LogCoordinator/Query":
		ok = id.Is(a.Coordinator)
	case "Coordinator/Join", "Coordinator/Heartbeat", "Coordinator/Leave", "LogCoordinator/Report":
		ok = id.Is(target)
	case "Coordinator/Members":
		ok = true
	default:
		ok = svc == "EventService"
	}
	if !ok {
		return status.Errorf(codes.PermissionDenied, "%s may not call %s", id, method)
	}
	return nil
}

// Interceptor returns the gRPC server interceptor that enforces a: a
// call without a verified peer certificate, or one a refuses, gets
// PermissionDenied (codes.Unauthenticated without a certificate) and
// never reaches its handler.
func (a Access) Interceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		id, ok := PeerIdentity(ctx)
		if !ok {
			return nil, status.Errorf(codes.Unauthenticated, "%s: no verified client certificate", info.FullMethod)
		}
		if err := a.Allow(id, info.FullMethod, req); err != nil {
			return nil, err
		}
		return handler(ctx, req)
	}
}

// ServerOptions returns the gRPC server options of a mutual-TLS process
// whose calls a governs: t's credentials and a's interceptor.
func (t *TLS) ServerOptions(a Access) []grpc.ServerOption {
	return []grpc.ServerOption{t.ServerOption(), grpc.ChainUnaryInterceptor(a.Interceptor())}
}
