package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/drainproof/drainproof/harness/pki"
	"github.com/drainproof/drainproof/impl/transport"
	"github.com/drainproof/drainproof/impl/transport/pb"
)

// Identities of a TLS run (Config.TLS): each process's certificate names
// it (a node by its ID); the workload's collectors and producers use
// ClientIdentity, a valid certificate that is not the operator's.
const (
	OperatorIdentity    = "operator"
	CoordinatorIdentity = "coordinator"
	ClientIdentity      = "harness"
)

// tlsSetup makes the run's CA and writes a certificate for every process
// and the workload's, under dir/pki.
type tlsSetup struct {
	dir   string
	ca    *pki.CA
	dial  grpc.DialOption // the workload's (ClientIdentity)
	flags map[string][]string
}

func newTLSSetup(dir string) (*tlsSetup, error) {
	d := filepath.Join(dir, "pki")
	if err := os.MkdirAll(d, 0o700); err != nil {
		return nil, err
	}
	ca, err := pki.NewCA("drainproof cluster ca")
	if err != nil {
		return nil, err
	}
	f, err := ca.WriteIdentity(d, ClientIdentity)
	if err != nil {
		return nil, err
	}
	t, err := transport.LoadTLS(f.CA, f.Cert, f.Key)
	if err != nil {
		return nil, err
	}
	return &tlsSetup{dir: d, ca: ca, dial: t.DialOption(), flags: map[string][]string{}}, nil
}

// issue writes process name's certificate (boot, before any process
// starts: a restart reads the same files).
func (s *tlsSetup) issue(name string) error {
	f, err := s.ca.WriteIdentity(s.dir, name)
	if err != nil {
		return err
	}
	s.flags[name] = append(f.Args(), "--operator-identity", OperatorIdentity, "--coordinator-identity", CoordinatorIdentity)
	return nil
}

// probeTLS checks the running cluster's access rules from outside: the
// workload's certificate (valid, not the operator's) may not start a
// drain, and a peer without a certificate reaches nothing.
func (r *run) probeTLS(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	conn, err := transport.Dial(r.coord.addr(), r.tls.dial)
	if err != nil {
		r.violate("tls probe: %v", err)
		return
	}
	_, derr := pb.NewCoordinatorClient(conn).DrainNode(cctx, &pb.DrainNodeRequest{Node: r.nodes[0].name})
	_ = conn.Close()
	if status.Code(derr) != codes.PermissionDenied {
		r.violate("tls: a peer that is not the operator (%s) asked to drain %s: %v, want PermissionDenied", ClientIdentity, r.nodes[0].name, derr)
	}
	plain, err := transport.Dial(r.in[0].addr())
	if err != nil {
		r.violate("tls probe: %v", err)
		return
	}
	_, err = pb.NewEventServiceClient(plain).Dispatch(cctx, &pb.DispatcherRequest{Action: pb.Action_REGISTER, Cluster: "c1",
		Changefeed: "cf", Dispatcher: "tls-probe", Table: 1, StartTs: 1})
	_ = plain.Close()
	if err == nil {
		r.violate("tls: a peer without a certificate registered a dispatcher with %s", r.nodes[0].name)
	}
	probe := fmt.Sprintf("a non-operator's drain: %v; a REGISTER without a certificate: %v", status.Code(derr), status.Code(err))
	r.mu.Lock()
	r.tlsProbe = probe
	r.mu.Unlock()
	r.logf("tls: %s", probe)
}
