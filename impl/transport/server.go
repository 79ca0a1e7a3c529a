package transport

import (
	"context"
	"errors"
	"math"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/drainproof/drainproof/impl/eventservice"
	"github.com/drainproof/drainproof/impl/logcoord"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/transport/pb"
)

// Limits of a message a handler accepts.
const (
	// MaxIDLen bounds a node, cluster, changefeed or dispatcher ID.
	MaxIDLen = 256
	// MaxBatch bounds the events of one WriteEvents and of one
	// ReadEvents answer, and the entries of a heartbeat.
	MaxBatch = 4096
)

func badArg(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, format, args...)
}

func checkID(what, id string, required bool) error {
	if required && id == "" {
		return badArg("%s is empty", what)
	}
	if len(id) > MaxIDLen {
		return badArg("%s is %d bytes long (at most %d)", what, len(id), MaxIDLen)
	}
	return nil
}

// ctxStatus turns a context error into its gRPC status.
func ctxStatus(err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	}
	return nil
}

// EventServer is the gRPC EventService of one node process: dispatcher
// requests and heartbeats go to the event service's request loop, the
// data path to the event store.
type EventServer struct {
	pb.UnimplementedEventServiceServer

	// Svc is the node's event service (running).
	Svc *eventservice.Service
	// Data is the node's event store, the one Svc's broker subscribes
	// dispatchers to.
	Data store.DataStore
	// Node is the node process (its epoch and liveness for Status).
	Node *node.Node
	// OnRefused, if set, is called for each registration the service
	// did not take (admission closed, not reusable): a metric.
	OnRefused func()
	// OnDispatch, if set, is called after each Dispatch with the request
	// and the error it returns (nil on OK): a metric, a history.
	OnDispatch func(req *pb.DispatcherRequest, resp *pb.DispatcherResponse, err error)

	writes atomic.Int64
}

// Dispatch runs a REGISTER, REMOVE or RESET. The request's context (its
// deadline) reaches the store calls it causes.
func (s *EventServer) Dispatch(ctx context.Context, in *pb.DispatcherRequest) (resp *pb.DispatcherResponse, err error) {
	if s.OnDispatch != nil {
		defer func() { s.OnDispatch(in, resp, err) }()
	}
	req, err := requestFromPB(in)
	if err != nil {
		return nil, err
	}
	resp = &pb.DispatcherResponse{NodeEpoch: s.Node.Epoch()}
	err = s.Svc.Do(ctx, req)
	switch {
	case err == nil:
	case errors.Is(err, eventservice.ErrAdmissionClosed):
		resp.Outcome = pb.Outcome_ADMISSION_CLOSED
	case errors.Is(err, eventservice.ErrNotReusable):
		resp.Outcome = pb.Outcome_NOT_REUSABLE
	case errors.Is(err, eventservice.ErrUnknownDispatcher):
		resp.Outcome = pb.Outcome_UNKNOWN_DISPATCHER
	case errors.Is(err, eventservice.ErrBadRequest):
		return nil, badArg("%v", err)
	case errors.Is(err, eventservice.ErrStopped), errors.Is(err, eventservice.ErrNotRunning):
		return nil, status.Error(codes.Unavailable, err.Error())
	default:
		if st := ctxStatus(err); st != nil {
			return nil, st
		}
		return nil, status.Error(codes.Unavailable, err.Error()) // a store failure: try again
	}
	if resp.Outcome == pb.Outcome_ADMISSION_CLOSED || resp.Outcome == pb.Outcome_NOT_REUSABLE {
		if s.OnRefused != nil {
			s.OnRefused()
		}
	}
	return resp, nil
}

func requestFromPB(in *pb.DispatcherRequest) (eventservice.Request, error) {
	var r eventservice.Request
	switch in.GetAction() {
	case pb.Action_REGISTER:
		r.Action = eventservice.Register
	case pb.Action_REMOVE:
		r.Action = eventservice.Remove
	case pb.Action_RESET:
		r.Action = eventservice.Reset
	default:
		return r, badArg("action %v: want REGISTER, REMOVE or RESET", in.GetAction())
	}
	for _, f := range []struct{ what, v string }{{"cluster", in.GetCluster()}, {"changefeed", in.GetChangefeed()}, {"dispatcher", in.GetDispatcher()}} {
		if err := checkID(f.what, f.v, f.what != "changefeed"); err != nil {
			return r, err
		}
	}
	if in.GetTable() < 0 {
		return r, badArg("table %d is negative", in.GetTable())
	}
	r.Cluster = eventservice.ClusterID(in.GetCluster())
	r.Changefeed = eventservice.ChangefeedID(in.GetChangefeed())
	r.Dispatcher = eventservice.DispatcherID(in.GetDispatcher())
	r.Table = eventservice.TableID(in.GetTable())
	r.StartTs = in.GetStartTs()
	r.Epoch = in.GetEpoch()
	r.OnlyReuse = in.GetOnlyReuse()
	r.TableTrigger = in.GetTableTrigger()
	return r, nil
}

// DispatcherHeartbeat applies a collector's heartbeat in the request loop.
func (s *EventServer) DispatcherHeartbeat(ctx context.Context, in *pb.DispatcherHeartbeatRequest) (*pb.DispatcherHeartbeatResponse, error) {
	if err := checkID("cluster", in.GetCluster(), true); err != nil {
		return nil, err
	}
	if len(in.GetProgress()) > MaxBatch {
		return nil, badArg("%d heartbeat entries (at most %d)", len(in.GetProgress()), MaxBatch)
	}
	hb := eventservice.Heartbeat{Cluster: eventservice.ClusterID(in.GetCluster())}
	for _, p := range in.GetProgress() {
		if err := checkID("dispatcher", p.GetDispatcher(), true); err != nil {
			return nil, err
		}
		hb.Progress = append(hb.Progress, eventservice.Progress{Dispatcher: eventservice.DispatcherID(p.GetDispatcher()),
			CheckpointTs: p.GetCheckpointTs(), Epoch: p.GetEpoch()})
	}
	r, err := s.Svc.Heartbeat(ctx, hb)
	if err != nil {
		if st := ctxStatus(err); st != nil {
			return nil, st
		}
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	out := &pb.DispatcherHeartbeatResponse{Cluster: string(r.Cluster)}
	for _, id := range r.Removed {
		out.Removed = append(out.Removed, string(id))
	}
	return out, nil
}

// WriteEvents commits a batch of one table's change events, atomically.
func (s *EventServer) WriteEvents(ctx context.Context, in *pb.WriteEventsRequest) (*pb.WriteEventsResponse, error) {
	if in.GetTable() <= 0 {
		return nil, badArg("table %d (want ≥ 1)", in.GetTable())
	}
	if n := len(in.GetEvents()); n == 0 || n > MaxBatch {
		return nil, badArg("%d events (want 1 to %d)", n, MaxBatch)
	}
	if err := ctx.Err(); err != nil {
		return nil, ctxStatus(err)
	}
	evs := make([]store.Event, 0, len(in.GetEvents()))
	for _, e := range in.GetEvents() {
		if e.GetCommitTs() == 0 {
			return nil, badArg("event with commit ts 0")
		}
		evs = append(evs, store.Event{CommitTs: e.GetCommitTs(), Key: e.GetKey(), Value: e.GetValue()})
	}
	if err := s.Data.WriteEvents(store.TableID(in.GetTable()), evs); err != nil {
		if errors.Is(err, store.ErrBehindResolved) {
			return nil, status.Error(codes.FailedPrecondition, err.Error())
		}
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	s.writes.Add(1)
	return &pb.WriteEventsResponse{}, nil
}

// ReadEvents reads up to limit events of a registered dispatcher with a
// commit timestamp after in.After, in commit order.
func (s *EventServer) ReadEvents(ctx context.Context, in *pb.ReadEventsRequest) (*pb.ReadEventsResponse, error) {
	if err := checkID("dispatcher", in.GetDispatcher(), true); err != nil {
		return nil, err
	}
	limit := int(in.GetLimit())
	if limit <= 0 || limit > MaxBatch {
		limit = MaxBatch
	}
	out := &pb.ReadEventsResponse{NodeEpoch: s.Node.Epoch()}
	err := store.ReadEvents(s.Data, store.DispatcherID(in.GetDispatcher()), in.GetAfter(), math.MaxUint64, func(e store.Event) bool {
		out.Events = append(out.Events, &pb.Event{CommitTs: e.CommitTs, Key: e.Key, Value: e.Value})
		return len(out.Events) < limit && ctx.Err() == nil
	})
	switch {
	case errors.Is(err, store.ErrNotSubscribed):
		return nil, status.Error(codes.NotFound, err.Error())
	case err != nil:
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	return out, nil
}

// Status answers the node's liveness, epoch, version and the event
// service's sample (Service.Observe: it closes admission only when the
// node is STOPPING, as every report does; an observer's sample, not the
// node's report, so its reads are not trace lines).
func (s *EventServer) Status(context.Context, *pb.StatusRequest) (*pb.StatusResponse, error) {
	n, closed := s.Svc.Observe()
	res := s.Data.Resources()
	return &pb.StatusResponse{Node: string(s.Node.ID()), Epoch: s.Node.Epoch(), Liveness: LivenessToPB(s.Node.Liveness()),
		Count: n, AdmissionClosed: closed, Version: int32(s.Node.Version()), OpenBatches: res.Batches, OpenIterators: res.Iterators}, nil
}

// NodeServer is the gRPC Node service of one node process: the
// coordinator's liveness commands (N1).
type NodeServer struct {
	pb.UnimplementedNodeServer

	// Node is the node process.
	Node *node.Node
	// OnChange, if set, is called after a command changed the liveness:
	// the caller sends a forced heartbeat (N1, N2).
	OnChange func(node.Liveness)
}

// SetLiveness applies a SetNodeLiveness command (N1). A command for
// another node is refused; one for another epoch changes nothing and is
// answered with the node's own epoch.
func (s *NodeServer) SetLiveness(_ context.Context, in *pb.SetLivenessRequest) (*pb.SetLivenessResponse, error) {
	if in.GetNode() != string(s.Node.ID()) {
		return nil, badArg("command for node %q sent to node %q", in.GetNode(), s.Node.ID())
	}
	l, ok := LivenessFromPB(in.GetTarget())
	if !ok {
		return nil, badArg("liveness %v", in.GetTarget())
	}
	resp, changed := s.Node.RecvCommand(node.Command{To: s.Node.ID(), Epoch: in.GetEpoch(), Target: l})
	if changed && s.OnChange != nil {
		s.OnChange(resp.Liveness)
	}
	return &pb.SetLivenessResponse{Node: string(resp.From), Epoch: resp.Epoch, Liveness: LivenessToPB(resp.Liveness)}, nil
}

// Bootstrap answers the coordinator's bootstrap (N4): the node's epoch
// and drain protocol version.
func (s *NodeServer) Bootstrap(context.Context, *pb.BootstrapRequest) (*pb.BootstrapResponse, error) {
	return &pb.BootstrapResponse{Node: string(s.Node.ID()), Epoch: s.Node.Epoch(), Version: int32(s.Node.Version())}, nil
}

// LogCoordServer is the gRPC LogCoordinator service over a report cache
// (L2, L3). Now is the cache's clock (logical ticks).
type LogCoordServer struct {
	pb.UnimplementedLogCoordinatorServer

	// Cache is the LogCoordinator's cache.
	Cache *logcoord.Cache
	// Now returns the current tick.
	Now func() int64
}

// Report caches an event service's count report (L2).
func (s *LogCoordServer) Report(_ context.Context, in *pb.CountReport) (*pb.ReportAck, error) {
	if err := checkID("node", in.GetNode(), true); err != nil {
		return nil, err
	}
	if in.GetEpoch() == 0 {
		return nil, badArg("report of node %q with epoch 0", in.GetNode())
	}
	if in.GetCount() < 0 {
		return nil, badArg("report of node %q with count %d", in.GetNode(), in.GetCount())
	}
	s.Cache.OnReport(reportFromPB(in), s.Now())
	return &pb.ReportAck{}, nil
}

// Query answers the coordinator's count query (L3): the cached report,
// or unknown.
func (s *LogCoordServer) Query(_ context.Context, in *pb.CountQuery) (*pb.CountAnswer, error) {
	if err := checkID("target", in.GetTarget(), true); err != nil {
		return nil, err
	}
	a := s.Cache.Answer(node.ID(in.GetTarget()), s.Now())
	return &pb.CountAnswer{Target: string(a.Target), Known: a.Known, Epoch: a.Epoch, Count: a.Count,
		AdmissionClosed: a.AdmissionClosed}, nil
}

// AnswerFromPB returns the wire's answer as the library's.
func AnswerFromPB(a *pb.CountAnswer) logcoord.Answer {
	if !a.GetKnown() {
		return logcoord.Unknown(node.ID(a.GetTarget()))
	}
	return logcoord.Answer{Target: node.ID(a.GetTarget()), Known: true, Epoch: a.GetEpoch(), Count: a.GetCount(),
		AdmissionClosed: a.GetAdmissionClosed()}
}
