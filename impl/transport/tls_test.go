package transport

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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
