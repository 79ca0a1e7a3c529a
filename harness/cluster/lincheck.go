package cluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drainproof/drainproof/harness/lincheck"
	"github.com/drainproof/drainproof/impl/transport/pb"
)

// Registry phase: before the workload starts, LinClients clients issue
// LinOps operations each on one node process's event service through its
// gRPC endpoint (REGISTER, REMOVE, RESET of lincheck's dispatcher universe
// d0..d5, t0..t2 on clusters c1 and c2, and Status reads of the count);
// the history, with call and return ticks taken around each gRPC call, is
// checked by porcupine against lincheck's model.
const (
	// LinClients is the number of clients of the registry phase.
	LinClients = 4
	// LinOps is the number of operations each client issues.
	LinOps = 20
)

// linPhase records and checks the registry history of node i. The node's
// maintainer holds one table trigger of its own in broker c1, so a
// Status count is one above the model's while the node is ALIVE (it is:
// the phase runs before any drain or fault).
func (r *run) linPhase(ctx context.Context, i int) (lincheck.Result, int, error) {
	es := pb.NewEventServiceClient(r.w.conns[i])
	var clk atomic.Int64
	tick := func() int64 { return clk.Add(1) }
	h := &lincheck.History{Version: lincheck.HistoryVersion, Clients: LinClients, Seed: int64(r.cfg.Seed)}
	var mu sync.Mutex
	add := func(op lincheck.Op) {
		mu.Lock()
		h.Ops = append(h.Ops, op)
		mu.Unlock()
	}
	cluster := func(id int) string { return fmt.Sprintf("c%d", lincheck.BrokerOf(id)+1) }
	trigger := func(id int) bool { return id >= lincheck.NumOrdinary }
	var ts atomic.Uint64
	// do issues one operation of client c and records it; a transport
	// error makes the history unusable (the outcome is not known).
	do := func(ctx context.Context, c int, rng *rand.Rand) error {
		id := rng.IntN(lincheck.NumOrdinary)
		if rng.IntN(4) == 0 {
			id = lincheck.NumOrdinary + rng.IntN(lincheck.NumTriggers)
		}
		op := lincheck.Op{Client: c, ID: lincheck.IDName(id)}
		var req *pb.DispatcherRequest
		switch k := rng.IntN(100); {
		case k < 40:
			op.Kind = lincheck.KindRegister
			req = &pb.DispatcherRequest{Action: pb.Action_REGISTER, Cluster: cluster(id), Changefeed: "cf-lincheck",
				Dispatcher: op.ID, TableTrigger: trigger(id), StartTs: ts.Add(1) * 4}
			if !trigger(id) {
				req.Table = int64(id + 1)
			}
		case k < 70:
			op.Kind = lincheck.KindRemove
			req = &pb.DispatcherRequest{Action: pb.Action_REMOVE, Cluster: cluster(id), Dispatcher: op.ID}
		case k < 85:
			op.Kind, op.Epoch = lincheck.KindReset, uint8(1+rng.IntN(4))
			req = &pb.DispatcherRequest{Action: pb.Action_RESET, Cluster: cluster(id), Dispatcher: op.ID,
				Epoch: uint64(op.Epoch), StartTs: ts.Add(1) * 4}
		default:
			op = lincheck.Op{Client: c, Kind: lincheck.KindReport}
			op.Call = tick()
			st, err := es.Status(ctx, &pb.StatusRequest{})
			op.Return = tick()
			if err != nil {
				return err
			}
			op.Count, op.Closed = st.GetCount()-1, st.GetAdmissionClosed()
			add(op)
			return nil
		}
		op.Call = tick()
		resp, err := es.Dispatch(ctx, req)
		op.Return = tick()
		if err != nil {
			return err
		}
		switch resp.GetOutcome() {
		case pb.Outcome_ADMISSION_CLOSED:
			op.Err = lincheck.ErrAdmissionClosed
		case pb.Outcome_NOT_REUSABLE:
			op.Err = lincheck.ErrNotReusable
		case pb.Outcome_UNKNOWN_DISPATCHER:
			op.Err = lincheck.ErrUnknownDispatcher
		}
		if op.Kind == lincheck.KindRemove {
			op.Err = lincheck.ErrNone
		}
		add(op)
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	// The brokers' creation order is the model's: c1 (the maintainer's)
	// exists; create c2 with a registration and a removal of t1's.
	for _, k := range []pb.Action{pb.Action_REGISTER, pb.Action_REMOVE} {
		op := lincheck.Op{Client: 0, ID: lincheck.IDName(lincheck.NumOrdinary + 1), Kind: lincheck.KindRegister}
		req := &pb.DispatcherRequest{Action: k, Cluster: cluster(lincheck.NumOrdinary + 1), Changefeed: "cf-lincheck",
			Dispatcher: op.ID, TableTrigger: true}
		if k == pb.Action_REMOVE {
			op.Kind = lincheck.KindRemove
		}
		op.Call = tick()
		if _, err := es.Dispatch(cctx, req); err != nil {
			return lincheck.Result{}, 0, err
		}
		op.Return = tick()
		add(op)
	}
	var wg sync.WaitGroup
	errs := make(chan error, LinClients)
	for c := range LinClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(r.cfg.Seed, uint64(1000+c)))
			for range LinOps {
				if err := do(cctx, c, rng); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	// Leave nothing registered for the drains to come.
	for id := range lincheck.NumIDs {
		_, _ = es.Dispatch(cctx, &pb.DispatcherRequest{Action: pb.Action_REMOVE, Cluster: cluster(id), Dispatcher: lincheck.IDName(id)})
	}
	for err := range errs {
		return lincheck.Result{}, 0, err
	}
	if err := h.Validate(); err != nil {
		return lincheck.Result{}, 0, err
	}
	return lincheck.Check(h, 30*time.Second), len(h.Ops), nil
}
