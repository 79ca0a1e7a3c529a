package daemon

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/transport"
	"github.com/drainproof/drainproof/impl/transport/pb"
)

// The coordinator's handlers' fuzz tests call the Coordinator's methods
// directly (no network), in the style of impl/transport's: any message
// gets an answer or one of the status errors the handler means to give
// (InvalidArgument, NotFound, FailedPrecondition), never a panic, and a
// refused message changes nothing of the coordinator's state (its
// members, the drain controller's view of each, the session). make fuzz
// runs them.

// fuzzCoordinator starts a coordinator whose periodic task never runs
// during the fuzzing (it would bootstrap and expire members under the
// fuzzer's comparisons), with n1 a member at epoch 5 whose version is
// known, and n2 a member at epoch 3 that has not answered its bootstrap.
func fuzzCoordinator(f *testing.F) *Coordinator {
	f.Helper()
	c, err := StartCoordinator(CoordinatorConfig{Listener: listenF(f), Transport: node.TransportHeartbeat,
		Period: time.Hour, ResendEvery: time.Hour, MemberTTL: time.Hour, Logger: quiet})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(c.Close)
	ctx := context.Background()
	for _, j := range []*pb.JoinRequest{
		{Node: "n1", Epoch: 5, Version: int32(node.VersionBrokerDrain), Addr: "127.0.0.1:1"},
		{Node: "n2", Epoch: 3, Version: int32(node.VersionBrokerDrain), Addr: "127.0.0.1:2"},
	} {
		if _, err := c.Join(ctx, j); err != nil {
			f.Fatal(err)
		}
	}
	c.mu.Lock()
	c.members["n1"].booted = true
	c.co.ObserveVersion("n1", 5, node.VersionBrokerDrain)
	c.mu.Unlock()
	return c
}

func listenF(f *testing.F) net.Listener {
	f.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	return l
}

// coordState is the coordinator's state as text: each member's
// address, epoch, version, bootstrap and last heartbeat, the drain
// controller's view of it, the drain sessions started, and the target.
func coordState(c *Coordinator) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make([]string, 0, len(c.members))
	for id := range c.members {
		ids = append(ids, string(id))
	}
	slices.Sort(ids)
	var b strings.Builder
	for _, id := range ids {
		m := c.members[node.ID(id)]
		fmt.Fprintf(&b, "%s addr=%s epoch=%d version=%d booted=%v seen=%d view=%+v\n", id, m.addr, m.epoch, m.version,
			m.booted, m.lastSeen.UnixNano(), c.co.NodeView(node.ID(id)))
	}
	started := make([]string, 0, len(c.started))
	for id, at := range c.started {
		started = append(started, fmt.Sprintf("%s@%d", id, at.UnixNano()))
	}
	slices.Sort(started)
	t, ok := c.co.Target()
	fmt.Fprintf(&b, "started=%v target=%q/%v\n", started, t, ok)
	return b.String()
}

// refused fails t unless err is a status error of one of the codes, and
// unless the state is still before.
func refused(t *testing.T, c *Coordinator, what string, err error, before string, want ...codes.Code) {
	t.Helper()
	if st, ok := status.FromError(err); !ok || !slices.Contains(want, st.Code()) {
		t.Fatalf("%s: %v, want a status error of %v", what, err, want)
	}
	if after := coordState(c); after != before {
		t.Fatalf("%s was refused (%v) but changed the state:\n%s->\n%s", what, err, before, after)
	}
}

// FuzzJoin: a join of any node, epoch, version and address. A refused
// one changes nothing; one of an epoch older than the member's is
// refused FailedPrecondition; an accepted one makes the node a member at
// that epoch.
func FuzzJoin(f *testing.F) {
	f.Add("n1", uint64(6), int32(1), "%gg:1") // a new process at an address gRPC cannot parse
	f.Add("n1", uint64(6), int32(1), "127.0.0.1:7")
	f.Add("n1", uint64(4), int32(1), "127.0.0.1:1")
	f.Add("n9", uint64(0), int32(-1), "nowhere")
	f.Add("", uint64(1), int32(99), ":")
	f.Add(strings.Repeat("x", transport.MaxIDLen+1), uint64(1), int32(1), "h:1")
	c := fuzzCoordinator(f)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, n string, epoch uint64, version int32, addr string) {
		before := coordState(c)
		old := memberEpoch(c, n)
		what := fmt.Sprintf("join of %q epoch %d version %d addr %q", n, epoch, version, addr)
		_, err := c.Join(ctx, &pb.JoinRequest{Node: n, Epoch: epoch, Version: version, Addr: addr})
		if err != nil {
			refused(t, c, what, err, before, codes.InvalidArgument, codes.FailedPrecondition)
			return
		}
		if epoch < old {
			t.Fatalf("%s accepted over the member's epoch %d", what, old)
		}
		if v := c.co.NodeView(node.ID(n)); !v.Member || v.Epoch != epoch {
			t.Fatalf("%s accepted: the controller sees %+v", what, v)
		}
		if n != "n1" && n != "n2" { // keep the membership small
			if _, err := c.Leave(ctx, &pb.LeaveRequest{Node: n, Epoch: epoch}); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// FuzzHeartbeat: a heartbeat of any node, epoch, liveness, count and
// work. A refused one changes nothing (an unknown node is NotFound); an
// accepted one of an epoch older than the member's changes nothing
// either (D2).
func FuzzHeartbeat(f *testing.F) {
	f.Add("n1", uint64(5), int32(1), true, int64(3), true, int64(0))
	f.Add("n1", uint64(4), int32(2), true, int64(0), true, int64(0))
	f.Add("n9", uint64(5), int32(1), false, int64(0), false, int64(0))
	f.Add("n2", uint64(0), int32(42), true, int64(-1), false, int64(-7))
	c := fuzzCoordinator(f)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, n string, epoch uint64, live int32, hasCount bool, count int64, closed bool, work int64) {
		before := coordState(c)
		old := memberEpoch(c, n)
		what := fmt.Sprintf("heartbeat of %q epoch %d liveness %d count %v/%d closed %v work %d", n, epoch, live, hasCount, count, closed, work)
		_, err := c.Heartbeat(ctx, &pb.NodeHeartbeat{Node: n, Epoch: epoch, Liveness: pb.Liveness(live), HasCount: hasCount,
			Count: count, AdmissionClosed: closed, MaintainerWork: work})
		if err != nil {
			refused(t, c, what, err, before, codes.InvalidArgument, codes.NotFound)
			if old != 0 && status.Code(err) == codes.NotFound {
				t.Fatalf("%s of a member at %d: %v", what, old, err)
			}
			return
		}
		if old == 0 {
			t.Fatalf("%s of no member accepted", what)
		}
		if epoch < old {
			if after := coordState(c); after != before {
				t.Fatalf("%s (member at %d) changed the state:\n%s->\n%s", what, old, before, after)
			}
		}
	})
}

// FuzzLeave: a leave of any node and epoch. A refused one changes
// nothing, and so does one of an epoch that is not the member's; an
// accepted one of the member's epoch ends its membership (n1 and n2 then
// join again).
func FuzzLeave(f *testing.F) {
	f.Add("n1", uint64(5))
	f.Add("n1", uint64(4))
	f.Add("n1", uint64(6))
	f.Add("n9", uint64(1))
	f.Add("", uint64(0))
	c := fuzzCoordinator(f)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, n string, epoch uint64) {
		before := coordState(c)
		old := memberEpoch(c, n)
		what := fmt.Sprintf("leave of %q epoch %d", n, epoch)
		_, err := c.Leave(ctx, &pb.LeaveRequest{Node: n, Epoch: epoch})
		if err != nil {
			refused(t, c, what, err, before, codes.InvalidArgument)
			return
		}
		if old == 0 || epoch != old {
			if after := coordState(c); after != before {
				t.Fatalf("%s (member at %d) changed the state:\n%s->\n%s", what, old, before, after)
			}
			return
		}
		if v := c.co.NodeView(node.ID(n)); v.Member {
			t.Fatalf("%s accepted: still a member %+v", what, v)
		}
		if n == "n1" || n == "n2" {
			if _, err := c.Join(ctx, &pb.JoinRequest{Node: n, Epoch: epoch, Version: int32(node.VersionBrokerDrain), Addr: "127.0.0.1:1"}); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// FuzzDrainNode: the upgrade client's poll for any node. A refused one
// changes nothing, and a node that is no member is NotFound.
func FuzzDrainNode(f *testing.F) {
	f.Add("n1")
	f.Add("n2")
	f.Add("n9")
	f.Add("")
	f.Add(strings.Repeat("y", transport.MaxIDLen+1))
	c := fuzzCoordinator(f)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, n string) {
		before := coordState(c)
		member := c.co.NodeView(node.ID(n)).Member
		what := fmt.Sprintf("drain of %q", n)
		resp, err := c.DrainNode(ctx, &pb.DrainNodeRequest{Node: n})
		if err != nil {
			refused(t, c, what, err, before, codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition)
			if !member && status.Code(err) == codes.FailedPrecondition {
				t.Fatalf("%s of no member: %v, want NotFound", what, err)
			}
			return
		}
		if !member {
			t.Fatalf("%s of no member answered %v", what, resp)
		}
		if resp.GetRemaining() < 0 {
			t.Fatalf("%s answered %v", what, resp)
		}
	})
}

// FuzzMembers: a MembersRequest of any bytes on the wire (unknown fields
// among them) is answered with the members, sorted, and changes nothing.
func FuzzMembers(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0x08, 0x01})
	f.Add([]byte{0x12, 0x03, 'a', 'b', 'c'})
	c := fuzzCoordinator(f)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, wire []byte) {
		in := &pb.MembersRequest{}
		if err := proto.Unmarshal(wire, in); err != nil {
			return // refused by gRPC's codec before the handler
		}
		before := coordState(c)
		resp, err := c.Members(ctx, in)
		if err != nil {
			t.Fatalf("Members: %v", err)
		}
		if after := coordState(c); after != before {
			t.Fatalf("Members changed the state:\n%s->\n%s", before, after)
		}
		var got []string
		for _, m := range resp.GetMembers() {
			got = append(got, fmt.Sprintf("%s@%d", m.GetNode(), m.GetEpoch()))
		}
		if want := []string{"n1@5", "n2@3"}; !slices.Equal(got, want) {
			t.Fatalf("Members answered %v, want %v", got, want)
		}
	})
}

// memberEpoch returns the epoch of member n (0 when n is not a member).
func memberEpoch(c *Coordinator, n string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := c.members[node.ID(n)]; m != nil {
		return m.epoch
	}
	return 0
}
