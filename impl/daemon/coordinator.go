package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/drainproof/drainproof/impl/coordinator"
	"github.com/drainproof/drainproof/impl/logcoord"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/trace"
	"github.com/drainproof/drainproof/impl/transport"
	"github.com/drainproof/drainproof/impl/transport/pb"
)

// CoordinatorConfig configures the coordinator process.
type CoordinatorConfig struct {
	// Listener serves the Coordinator gRPC service.
	Listener net.Listener
	// Transport selects where broker counts come from; LogCoord is the
	// LogCoordinator's address in its transport.
	Transport node.Transport
	LogCoord  string
	// Period is the periodic task's period (C2; 50ms if 0).
	Period time.Duration
	// ResendEvery throttles command resends (200ms if 0).
	ResendEvery time.Duration
	// MemberTTL removes a node silent this long from membership (C9;
	// 3s if 0).
	MemberTTL time.Duration
	// Logger logs (slog.Default if nil).
	Logger *slog.Logger
	// Metrics, if set, gets the drain metrics.
	Metrics *Metrics
	// DialOptions and ServerOptions as in NodeConfig.
	DialOptions   []grpc.DialOption
	ServerOptions []grpc.ServerOption
	// Tracer, if set, is this process's trace (docs/trace.md): the drain
	// controller writes its lines about TraceNode to it, and every gRPC
	// message in or out carries its stamp.
	Tracer *trace.Writer
	// TraceNode is the node whose drain is traced (with Tracer).
	TraceNode node.ID
	// TraceRestart: the process succeeds a killed coordinator (its
	// trace's header names the predecessor); its first line is the
	// traced node's join, CoordRejoin (coordinator.Coordinator.TraceRestart).
	TraceRestart bool
}

type member struct {
	addr     string
	epoch    uint64
	version  node.Version
	lastSeen time.Time
	conn     *grpc.ClientConn
	// booted: the bootstrap of this epoch answered (its version is
	// known to the drain controller).
	booted bool
}

// Coordinator is the running coordinator process.
type Coordinator struct {
	pb.UnimplementedCoordinatorServer

	cfg CoordinatorConfig
	log *slog.Logger
	clk clock // the protocol's tick, and the time of the members' silence (MemberTTL)
	co  *coordinator.Coordinator
	srv *grpc.Server
	lc  *grpc.ClientConn

	mu      sync.Mutex
	members map[node.ID]*member
	started map[node.ID]time.Time // drain sessions started, by target (metrics)

	stop func()
	wg   sync.WaitGroup
}

// StartCoordinator starts the coordinator: its gRPC service and its
// periodic task.
func StartCoordinator(cfg CoordinatorConfig) (*Coordinator, error) {
	if cfg.Listener == nil {
		return nil, errors.New("daemon: coordinator needs a listener")
	}
	if cfg.Transport == "" {
		cfg.Transport = node.TransportLogCoord
	}
	if cfg.Transport == node.TransportLogCoord && cfg.LogCoord == "" {
		return nil, errors.New("daemon: the logcoord transport needs a LogCoordinator address")
	}
	if cfg.Period <= 0 {
		cfg.Period = 50 * time.Millisecond
	}
	if cfg.ResendEvery <= 0 {
		cfg.ResendEvery = 200 * time.Millisecond
	}
	if cfg.MemberTTL <= 0 {
		cfg.MemberTTL = 3 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Tracer != nil && cfg.TraceNode == "" {
		return nil, errors.New("daemon: a traced coordinator needs TraceNode")
	}
	cfg.ServerOptions, cfg.DialOptions = stampOptions(cfg.Tracer, cfg.ServerOptions, cfg.DialOptions)
	co, err := coordinator.New(coordinator.Config{Transport: cfg.Transport, ResendInterval: cfg.ResendEvery.Milliseconds(),
		QueryInterval: cfg.Period.Milliseconds(), Tracer: tracerOf(cfg.Tracer), TraceNode: cfg.TraceNode})
	if err != nil {
		return nil, err
	}
	if cfg.TraceRestart {
		if cfg.Tracer == nil {
			return nil, errors.New("daemon: TraceRestart needs a Tracer")
		}
		co.TraceRestart()
	}
	c := &Coordinator{cfg: cfg, log: cfg.Logger.With("role", "coordinator"), clk: newClock(), co: co,
		members: make(map[node.ID]*member), started: make(map[node.ID]time.Time)}
	if cfg.LogCoord != "" {
		if c.lc, err = transport.Dial(cfg.LogCoord, cfg.DialOptions...); err != nil {
			return nil, fmt.Errorf("daemon: logcoord %s: %w", cfg.LogCoord, err)
		}
	}
	c.srv = grpc.NewServer(cfg.ServerOptions...)
	pb.RegisterCoordinatorServer(c.srv, c)
	ctx, cancel := context.WithCancel(context.Background())
	c.wg.Add(2)
	go func() {
		defer c.wg.Done()
		_ = c.srv.Serve(cfg.Listener)
	}()
	go func() {
		defer c.wg.Done()
		c.loop(ctx)
	}()
	c.stop = cancel
	c.log.Info("coordinator started", "addr", cfg.Listener.Addr().String(), "transport", string(cfg.Transport))
	return c, nil
}

// Close stops the coordinator.
func (c *Coordinator) Close() {
	c.stop()
	c.srv.Stop()
	c.wg.Wait()
	c.mu.Lock()
	for _, m := range c.members {
		_ = m.conn.Close()
	}
	c.members = map[node.ID]*member{}
	c.mu.Unlock()
	if c.lc != nil {
		_ = c.lc.Close()
	}
}

func checkNode(id string) error {
	if id == "" || len(id) > transport.MaxIDLen {
		return status.Errorf(codes.InvalidArgument, "node ID %q: want 1 to %d bytes", id, transport.MaxIDLen)
	}
	return nil
}

// Join is a node's bootstrap (N4): membership, epoch and version.
func (c *Coordinator) Join(_ context.Context, in *pb.JoinRequest) (*pb.JoinResponse, error) {
	if err := checkNode(in.GetNode()); err != nil {
		return nil, err
	}
	if in.GetEpoch() == 0 || in.GetVersion() < 0 || in.GetVersion() > int32(node.VersionBrokerDrain) {
		return nil, status.Errorf(codes.InvalidArgument, "join of %q: epoch %d, version %d", in.GetNode(), in.GetEpoch(), in.GetVersion())
	}
	if _, _, err := net.SplitHostPort(in.GetAddr()); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "join of %q: address %q: %v", in.GetNode(), in.GetAddr(), err)
	}
	id := node.ID(in.GetNode())
	now := c.clk.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.members[id]
	if m != nil && in.GetEpoch() < m.epoch {
		return nil, status.Errorf(codes.FailedPrecondition, "join of %q with epoch %d: epoch %d already joined", id, in.GetEpoch(), m.epoch)
	}
	// The address is dialled before anything changes: a join refused
	// for its address leaves the member as it was.
	var conn *grpc.ClientConn
	if m == nil || m.addr != in.GetAddr() {
		var err error
		if conn, err = transport.Dial(in.GetAddr(), c.cfg.DialOptions...); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "join of %q: %v", id, err)
		}
	}
	if m != nil && in.GetEpoch() > m.epoch {
		// A new process: the old one has left membership (C9), whether
		// or not its Leave arrived; its session ends (a completed one
		// leaves the tombstone that keeps answering 0), so that a lost
		// Leave cannot hold every later drain (D3).
		c.co.RemoveNode(id)
		delete(c.started, id)
	}
	if conn != nil {
		if m != nil {
			_ = m.conn.Close()
		}
		m = &member{addr: in.GetAddr(), conn: conn}
		c.members[id] = m
	}
	m.epoch, m.version, m.lastSeen, m.booted = in.GetEpoch(), node.Version(in.GetVersion()), c.clk.time(), false
	c.co.AddNode(id, m.epoch, now)
	// The join is the new process's first message: its epoch (C4). Its
	// version is learnt from the bootstrap the periodic task sends (N4,
	// §9): until then the drain controller does not know it.
	c.co.ObserveJoin(id, m.epoch, now)
	c.log.Info("node joined", "node", string(id), "epoch", m.epoch, "version", int(m.version), "addr", m.addr)
	return &pb.JoinResponse{}, nil
}

// Leave removes a node's process from membership (C9).
func (c *Coordinator) Leave(_ context.Context, in *pb.LeaveRequest) (*pb.LeaveResponse, error) {
	if err := checkNode(in.GetNode()); err != nil {
		return nil, err
	}
	id := node.ID(in.GetNode())
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := c.members[id]; m != nil && m.epoch == in.GetEpoch() {
		c.removeLocked(id, "left")
	}
	return &pb.LeaveResponse{}, nil
}

func (c *Coordinator) removeLocked(id node.ID, why string) {
	m := c.members[id]
	delete(c.members, id)
	_ = m.conn.Close()
	c.co.RemoveNode(id)
	delete(c.started, id)
	c.log.Info("node removed", "node", string(id), "epoch", m.epoch, "why", why)
}

// Heartbeat applies a node's heartbeat (C4, C5) and its maintainers'
// work when the node is the drain's target.
func (c *Coordinator) Heartbeat(_ context.Context, in *pb.NodeHeartbeat) (*pb.HeartbeatAck, error) {
	if err := checkNode(in.GetNode()); err != nil {
		return nil, err
	}
	l, ok := transport.LivenessFromPB(in.GetLiveness())
	if !ok || in.GetEpoch() == 0 || in.GetCount() < 0 || in.GetMaintainerWork() < 0 {
		return nil, status.Errorf(codes.InvalidArgument, "heartbeat of %q: liveness %v, epoch %d, count %d, work %d",
			in.GetNode(), in.GetLiveness(), in.GetEpoch(), in.GetCount(), in.GetMaintainerWork())
	}
	id := node.ID(in.GetNode())
	now := c.clk.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.members[id]
	if m == nil {
		return nil, status.Errorf(codes.NotFound, "heartbeat of %q: not a member (join first)", id)
	}
	if in.GetEpoch() == m.epoch {
		m.lastSeen = c.clk.time()
	}
	c.co.ObserveHeartbeat(node.Heartbeat{From: id, Epoch: in.GetEpoch(), Liveness: l, HasCount: in.GetHasCount(),
		Count: in.GetCount(), AdmissionClosed: in.GetAdmissionClosed()}, now)
	if t, ok := c.co.Target(); ok && t == id && c.co.NodeView(id).Epoch == in.GetEpoch() {
		c.co.ReportProgress(id, coordinator.Progress{Maintainers: in.GetMaintainerWork()})
	}
	return &pb.HeartbeatAck{}, nil
}

// DrainNode is the upgrade client's poll (C1).
func (c *Coordinator) DrainNode(_ context.Context, in *pb.DrainNodeRequest) (*pb.DrainNodeResponse, error) {
	if err := checkNode(in.GetNode()); err != nil {
		return nil, err
	}
	id := node.ID(in.GetNode())
	c.mu.Lock()
	defer c.mu.Unlock()
	d, err := c.co.DrainNode(id, c.clk.now())
	if err != nil {
		if errors.Is(err, coordinator.ErrNodeNotExist) {
			return nil, status.Error(codes.NotFound, err.Error())
		}
		return nil, status.Error(codes.FailedPrecondition, err.Error())
	}
	if t, ok := c.co.Target(); ok && t == id {
		if _, ok := c.started[id]; !ok {
			c.started[id] = time.Now()
			c.log.Info("drain started", "node", string(id), "epoch", c.co.NodeView(id).Epoch)
			if m := c.cfg.Metrics; m != nil {
				m.DrainsStarted.Inc()
			}
		}
	}
	if d.Complete && d.DrainedEpoch != 0 {
		if at, ok := c.started[id]; ok && !at.IsZero() {
			took := time.Since(at)
			c.started[id] = time.Time{} // reported once
			c.log.Info("drain complete", "node", string(id), "epoch", d.DrainedEpoch, "took_ms", took.Milliseconds())
			if m := c.cfg.Metrics; m != nil {
				m.DrainsCompleted.Inc()
				m.DrainSeconds.Observe(took.Seconds())
			}
		}
	}
	return &pb.DrainNodeResponse{Remaining: d.Remaining, Complete: d.Complete, DrainedEpoch: d.DrainedEpoch,
		Legacy: d.Legacy, LegacyEpoch: d.LegacyEpoch, Waiting: d.Waiting}, nil
}

// Members lists the members.
func (c *Coordinator) Members(context.Context, *pb.MembersRequest) (*pb.MembersResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := &pb.MembersResponse{}
	for id, m := range c.members {
		o := c.co.NodeView(id)
		out.Members = append(out.Members, &pb.Member{Node: string(id), Epoch: o.Epoch, Liveness: transport.LivenessToPB(o.Liveness),
			Version: int32(m.version), Addr: m.addr, CountObserved: o.CountObserved, Count: o.Count})
	}
	slices.SortFunc(out.Members, func(a, b *pb.Member) int {
		if a.Node < b.Node {
			return -1
		}
		if a.Node > b.Node {
			return 1
		}
		return 0
	})
	return out, nil
}

// loop is the periodic task (C2): commands, queries, membership expiry.
func (c *Coordinator) loop(ctx context.Context) {
	t := time.NewTicker(c.cfg.Period)
	defer t.Stop()
	var lc pb.LogCoordinatorClient
	if c.lc != nil {
		lc = pb.NewLogCoordinatorClient(c.lc)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c.expire()
		c.bootstrap(ctx)
		c.mu.Lock()
		cmd, ok := c.co.NextCommand(c.clk.now())
		var conn *grpc.ClientConn
		if ok {
			if m := c.members[cmd.To]; m != nil {
				conn = m.conn
			}
		}
		q, qok := c.co.NextQuery(c.clk.now())
		c.mu.Unlock()
		if conn != nil {
			c.send(ctx, conn, cmd)
		}
		if qok && lc != nil {
			cctx, cancel := context.WithTimeout(ctx, c.cfg.Period*4)
			a, err := lc.Query(cctx, &pb.CountQuery{Target: string(q)})
			cancel()
			if err == nil {
				c.mu.Lock()
				c.co.ObserveAnswer(transport.AnswerFromPB(a), c.clk.now())
				c.mu.Unlock()
			}
		}
	}
}

// bootstrap sends the bootstrap to every member whose process has not
// answered one, and records the version it answers (N4, §9).
func (c *Coordinator) bootstrap(ctx context.Context) {
	type todo struct {
		id    node.ID
		epoch uint64
		conn  *grpc.ClientConn
	}
	var list []todo
	c.mu.Lock()
	for id, m := range c.members {
		if !m.booted {
			list = append(list, todo{id, m.epoch, m.conn})
		}
	}
	c.mu.Unlock()
	for _, t := range list {
		cctx, cancel := context.WithTimeout(ctx, c.cfg.ResendEvery)
		r, err := pb.NewNodeClient(t.conn).Bootstrap(cctx, &pb.BootstrapRequest{})
		cancel()
		if err != nil || r.GetNode() != string(t.id) || r.GetVersion() < 0 || r.GetVersion() > int32(node.VersionBrokerDrain) {
			continue
		}
		c.mu.Lock()
		if m := c.members[t.id]; m != nil && m.epoch == r.GetEpoch() && !m.booted {
			m.booted, m.version = true, node.Version(r.GetVersion())
			c.co.ObserveVersion(t.id, r.GetEpoch(), m.version)
		}
		c.mu.Unlock()
	}
}

// send sends a liveness command and applies the response (C4).
func (c *Coordinator) send(ctx context.Context, conn *grpc.ClientConn, cmd node.Command) {
	cctx, cancel := context.WithTimeout(ctx, c.cfg.ResendEvery)
	defer cancel()
	r, err := pb.NewNodeClient(conn).SetLiveness(cctx, &pb.SetLivenessRequest{Node: string(cmd.To), Epoch: cmd.Epoch,
		Target: transport.LivenessToPB(cmd.Target)})
	if err != nil {
		return // resent (C3)
	}
	l, ok := transport.LivenessFromPB(r.GetLiveness())
	if !ok || r.GetNode() != string(cmd.To) {
		return
	}
	c.mu.Lock()
	c.co.ObserveResponse(node.Response{From: cmd.To, Epoch: r.GetEpoch(), Liveness: l}, c.clk.now())
	c.mu.Unlock()
}

// expire removes the members silent for MemberTTL (C9).
func (c *Coordinator) expire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, m := range c.members {
		if c.clk.time().Sub(m.lastSeen) > c.cfg.MemberTTL {
			c.removeLocked(id, "silent")
		}
	}
}

// LogCoordConfig configures the LogCoordinator process.
type LogCoordConfig struct {
	// Listener serves the LogCoordinator gRPC service.
	Listener net.Listener
	// TTL expires a node's cached report (L4; 1s if 0).
	TTL time.Duration
	// Logger logs (slog.Default if nil).
	Logger *slog.Logger
	// ServerOptions as in NodeConfig.
	ServerOptions []grpc.ServerOption
	// Tracer, if set, is this process's trace (docs/trace.md): the cache
	// writes its lines about TraceNode to it, and every gRPC message in or
	// out carries its stamp.
	Tracer *trace.Writer
	// TraceNode is the node whose entry is traced (with Tracer).
	TraceNode node.ID
	// TraceRestart: the process succeeds a killed LogCoordinator (its
	// trace's header names the predecessor); its first line is the empty
	// cache's (logcoord.Cache.TraceRestart).
	TraceRestart bool
}

// LogCoord is the running LogCoordinator process.
type LogCoord struct {
	srv  *grpc.Server
	done chan struct{}
}

// StartLogCoord starts the LogCoordinator.
func StartLogCoord(cfg LogCoordConfig) (*LogCoord, error) {
	if cfg.Listener == nil {
		return nil, errors.New("daemon: logcoord needs a listener")
	}
	if cfg.TTL <= 0 {
		cfg.TTL = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	clk := newClock()
	if cfg.Tracer != nil && cfg.TraceNode == "" {
		return nil, errors.New("daemon: a traced logcoord needs TraceNode")
	}
	cfg.ServerOptions, _ = stampOptions(cfg.Tracer, cfg.ServerOptions, nil)
	l := &LogCoord{srv: grpc.NewServer(cfg.ServerOptions...), done: make(chan struct{})}
	cache := logcoord.New(logcoord.Config{TTL: cfg.TTL.Milliseconds(), Tracer: tracerOf(cfg.Tracer), TraceNode: cfg.TraceNode})
	if cfg.TraceRestart {
		if cfg.Tracer == nil {
			return nil, errors.New("daemon: TraceRestart needs a Tracer")
		}
		cache.TraceRestart()
	}
	pb.RegisterLogCoordinatorServer(l.srv, &transport.LogCoordServer{Cache: cache, Now: clk.now})
	go func() {
		defer close(l.done)
		_ = l.srv.Serve(cfg.Listener)
	}()
	cfg.Logger.Info("logcoord started", "addr", cfg.Listener.Addr().String(), "ttl", cfg.TTL.String())
	return l, nil
}

// Close stops the LogCoordinator.
func (l *LogCoord) Close() {
	l.srv.Stop()
	<-l.done
}
