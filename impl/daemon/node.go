package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/impl/eventservice"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/retry"
	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/trace"
	"github.com/drainproof/drainproof/impl/transport"
	"github.com/drainproof/drainproof/impl/transport/pb"
)

// Cluster is the one upstream cluster a daemon node's event service
// serves (its one broker).
const Cluster eventservice.ClusterID = "c1"

// NodeConfig configures a node process.
type NodeConfig struct {
	// ID is the node's name.
	ID node.ID
	// Listener serves the Node and EventService gRPC services.
	Listener net.Listener
	// Advertise is the address peers dial (Listener's if empty).
	Advertise string
	// Coordinator and LogCoord are the peers' addresses (LogCoord only
	// in the LogCoordinator transport).
	Coordinator, LogCoord string
	// DataDir holds the Pebble event store and the epoch file.
	DataDir string
	// Version is the drain protocol version the node announces.
	Version node.Version
	// Transport selects where the broker count travels.
	Transport node.Transport
	// HeartbeatEvery and ReportEvery are the heartbeat and report
	// periods (200ms and 100ms if 0).
	HeartbeatEvery, ReportEvery time.Duration
	// SchemaDelay makes RegisterTable slow, as a schema being resolved
	// is: one call in eight takes a uniform time up to SchemaDelay, the
	// others up to a tenth of it; the request's context ends it early.
	// 0: none.
	SchemaDelay time.Duration
	// DiskFaults fails each write batch's Set or Commit with this
	// probability (a disk error; the store's fault-injection seam), drawn
	// from DiskSeed. 0: none.
	DiskFaults float64
	DiskSeed   uint64
	// MaintainerMove is how long the maintainer takes to move its work
	// off once the node is DRAINING (0: at once).
	MaintainerMove time.Duration
	// JoinTimeout bounds the first join (5s if 0): an unreachable
	// coordinator fails StartNode.
	JoinTimeout time.Duration
	// Logger logs (slog.Default if nil).
	Logger *slog.Logger
	// Metrics, if set, gets the node's metrics.
	Metrics *Metrics
	// DialOptions are added to every peer connection (TLS, tests'
	// interceptors).
	DialOptions []grpc.DialOption
	// ServerOptions are added to the gRPC server.
	ServerOptions []grpc.ServerOption
	// Tracer, if set, is this process's trace (a process trace.Writer,
	// docs/trace.md): the event service and the node write their lines
	// to it, and every gRPC message in or out carries its stamp
	// (transport.StampServerInterceptor, StampClientInterceptor).
	Tracer *trace.Writer
}

// Node is a running node process.
type Node struct {
	cfg   NodeConfig
	log   *slog.Logger
	clk   clock
	epoch uint64

	data  *store.PebbleEventStore
	ss    *schemaStore
	live  *node.LivenessStore
	svc   *eventservice.Service
	node  *node.Node
	srv   *grpc.Server
	coord *grpc.ClientConn
	lc    *grpc.ClientConn

	stopLoop context.CancelFunc
	stopSvc  func() // ends the event service's request loop and waits for it
	wg       sync.WaitGroup
	force    chan struct{}
	closed   flag
	mu       sync.Mutex
	work     int64     // the maintainer's dispatchers still on the node
	moveAt   time.Time // when the maintainer's work is moved off (zero: not DRAINING yet)
}

// maintainerDispatcher is the ID of the node's own table-trigger
// dispatcher.
func (n *Node) maintainerDispatcher() eventservice.DispatcherID {
	return eventservice.DispatcherID("maintainer-" + string(n.cfg.ID))
}

// StartNode opens the node's store, takes the next epoch, starts its
// event service, serves its gRPC services, joins the coordinator and
// starts its heartbeats. Close undoes it all.
func StartNode(cfg NodeConfig) (_ *Node, err error) {
	if cfg.ID == "" || cfg.Listener == nil || cfg.Coordinator == "" || cfg.DataDir == "" {
		return nil, errors.New("daemon: node needs an ID, a listener, a coordinator address and a data directory")
	}
	if cfg.Transport == node.TransportLogCoord && cfg.LogCoord == "" {
		return nil, errors.New("daemon: the logcoord transport needs a LogCoordinator address")
	}
	if cfg.HeartbeatEvery <= 0 {
		cfg.HeartbeatEvery = 200 * time.Millisecond
	}
	if cfg.ReportEvery <= 0 {
		cfg.ReportEvery = 100 * time.Millisecond
	}
	if cfg.JoinTimeout <= 0 {
		cfg.JoinTimeout = 5 * time.Second
	}
	if cfg.Advertise == "" {
		cfg.Advertise = cfg.Listener.Addr().String()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	n := &Node{cfg: cfg, log: cfg.Logger.With("node", string(cfg.ID)), clk: newClock(), force: make(chan struct{}, 1)}
	var undo []func()
	defer func() {
		if err != nil {
			for i := len(undo) - 1; i >= 0; i-- {
				undo[i]()
			}
		}
	}()
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("daemon: data directory: %w", err)
	}
	if n.epoch, err = nextEpoch(cfg.DataDir); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.JoinTimeout)
	defer cancel()
	var storeOpts []store.Option
	if cfg.DiskFaults > 0 {
		storeOpts = append(storeOpts, store.WithFaultInjector(diskFaults(cfg.DiskFaults, cfg.DiskSeed^n.epoch)))
	}
	if n.data, err = store.OpenPebbleEventStore(ctx, filepath.Join(cfg.DataDir, "events"), storeOpts...); err != nil {
		return nil, fmt.Errorf("daemon: event store: %w", err)
	}
	undo = append(undo, func() { _ = n.data.Close() })
	n.ss = newSchemaStore(cfg.SchemaDelay)
	n.live = new(node.LivenessStore)
	n.svc, err = eventservice.New(eventservice.Config{
		NewStores: func(eventservice.ClusterID) (store.EventStore, store.SchemaStore) { return n.data, n.ss },
		Stopping:  func() bool { return n.live.Load() == node.Stopping },
		Tracer:    tracerOf(cfg.Tracer),
	})
	if err != nil {
		return nil, err
	}
	loopCtx, stopSvc := context.WithCancel(context.Background())
	waitSvc := n.svc.Start(loopCtx)
	n.stopSvc = func() { stopSvc(); _ = waitSvc() }
	undo = append(undo, n.stopSvc)
	n.node, err = node.New(node.Config{ID: cfg.ID, Epoch: n.epoch, Version: cfg.Version, Transport: cfg.Transport,
		Service: n.svc, Liveness: n.live, HeartbeatInterval: cfg.HeartbeatEvery.Milliseconds(), Tracer: tracerOf(cfg.Tracer)})
	if err != nil {
		return nil, err
	}
	// Stop waits for the handlers to return: Close closes the store
	// next, and a ReadEvents still running holds an iterator of it
	// (TestCloseWaitsForHandlers).
	cfg.ServerOptions, cfg.DialOptions = stampOptions(cfg.Tracer, cfg.ServerOptions, cfg.DialOptions)
	n.srv = grpc.NewServer(append([]grpc.ServerOption{grpc.WaitForHandlers(true)}, cfg.ServerOptions...)...)
	es := &transport.EventServer{Svc: n.svc, Data: n.data, Node: n.node}
	if m := cfg.Metrics; m != nil {
		es.OnRefused = m.Refused.Inc
	}
	pb.RegisterEventServiceServer(n.srv, es)
	pb.RegisterNodeServer(n.srv, &transport.NodeServer{Node: n.node, OnChange: n.onChange})
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = n.srv.Serve(cfg.Listener)
	}()
	undo = append(undo, func() { n.srv.Stop(); <-served })
	if n.coord, err = transport.Dial(cfg.Coordinator, cfg.DialOptions...); err != nil {
		return nil, fmt.Errorf("daemon: coordinator %s: %w", cfg.Coordinator, err)
	}
	undo = append(undo, func() { _ = n.coord.Close() })
	if cfg.LogCoord != "" {
		if n.lc, err = transport.Dial(cfg.LogCoord, cfg.DialOptions...); err != nil {
			return nil, fmt.Errorf("daemon: logcoord %s: %w", cfg.LogCoord, err)
		}
		undo = append(undo, func() { _ = n.lc.Close() })
	}
	// The maintainer's own dispatcher (C7's maintainer term).
	if err := n.svc.Do(ctx, eventservice.Request{Action: eventservice.Register, Cluster: Cluster,
		Changefeed: eventservice.ChangefeedID("cf-" + string(cfg.ID)), Dispatcher: n.maintainerDispatcher(), TableTrigger: true}); err != nil {
		return nil, fmt.Errorf("daemon: maintainer: %w", err)
	}
	n.work = 1
	if err := n.join(ctx); err != nil {
		return nil, fmt.Errorf("daemon: coordinator %s unreachable: %w", cfg.Coordinator, err)
	}
	loop, stop := context.WithCancel(context.Background())
	n.stopLoop = stop
	n.wg.Add(1)
	go n.loop(loop)
	n.log.Info("node started", "epoch", n.epoch, "version", int(cfg.Version), "addr", cfg.Advertise, "transport", string(cfg.Transport))
	return n, nil
}

// Epoch returns the process epoch.
func (n *Node) Epoch() uint64 { return n.epoch }

// Liveness returns the node's liveness.
func (n *Node) Liveness() node.Liveness { return n.node.Liveness() }

// Service returns the node's event service.
func (n *Node) Service() *eventservice.Service { return n.svc }

// Store returns the node's event store.
func (n *Node) Store() store.DataStore { return n.data }

func (n *Node) join(ctx context.Context) error {
	cl := pb.NewCoordinatorClient(n.coord)
	return retry.Do(ctx, retry.Policy{BaseDelay: 50 * time.Millisecond, MaxDelay: 500 * time.Millisecond}, func(ctx context.Context) error {
		_, err := cl.Join(ctx, &pb.JoinRequest{Node: string(n.cfg.ID), Epoch: n.epoch, Version: int32(n.cfg.Version), Addr: n.cfg.Advertise})
		return err
	})
}

// onChange is the NodeServer's hook: a liveness change forces a
// heartbeat (N1), and DRAINING moves the maintainer's work off.
func (n *Node) onChange(l node.Liveness) {
	n.log.Info("liveness changed", "liveness", l.String(), "epoch", n.epoch)
	select {
	case n.force <- struct{}{}:
	default:
	}
}

// loop sends heartbeats and reports and runs the maintainer.
func (n *Node) loop(ctx context.Context) {
	defer n.wg.Done()
	coord := pb.NewCoordinatorClient(n.coord)
	var lc pb.LogCoordinatorClient
	if n.lc != nil {
		lc = pb.NewLogCoordinatorClient(n.lc)
	}
	tick := time.NewTicker(min(n.cfg.ReportEvery, n.cfg.HeartbeatEvery) / 2)
	defer tick.Stop()
	var lastReport time.Time
	var sent *node.Report // the last report sent (the NoReReport bug only)
	for {
		forced := false
		select {
		case <-ctx.Done():
			return
		case <-n.force:
			forced = true
		case <-tick.C:
		}
		n.maintain(ctx)
		now := n.clk.now()
		var hb node.Heartbeat
		send := forced
		if forced {
			hb = n.node.Heartbeat(now)
		} else {
			hb, send = n.node.Tick(now)
		}
		if send {
			n.mu.Lock()
			work := n.work
			n.mu.Unlock()
			_, err := coord.Heartbeat(ctx, &pb.NodeHeartbeat{Node: string(hb.From), Epoch: hb.Epoch, Liveness: transport.LivenessToPB(hb.Liveness),
				HasCount: hb.HasCount, Count: hb.Count, AdmissionClosed: hb.AdmissionClosed, MaintainerWork: work})
			if status.Code(err) == codes.NotFound && ctx.Err() == nil {
				// The coordinator does not know this process (it
				// restarted, or removed a silent member): bootstrap again.
				jctx, cancel := context.WithTimeout(ctx, n.cfg.HeartbeatEvery*5)
				if err := n.join(jctx); err == nil {
					n.log.Info("rejoined the coordinator", "epoch", n.epoch)
				}
				cancel()
			} else if err != nil && ctx.Err() == nil {
				n.log.Debug("heartbeat lost", "err", err)
			}
		}
		if lc != nil && time.Since(lastReport) >= n.cfg.ReportEvery {
			lastReport = time.Now()
			r := n.node.Report()
			if bugs.NoReReportOn() && sent != nil && sent.Sample() == r.Sample() {
				continue // the bug: an unchanged report is not sent again
			}
			sent = &r
			if _, err := lc.Report(ctx, transport.ReportToPB(r)); err != nil && ctx.Err() == nil {
				n.log.Debug("report lost", "err", err)
			}
		}
		if m := n.cfg.Metrics; m != nil {
			for _, g := range n.svc.BrokerCounts() {
				m.Dispatchers.WithLabelValues(string(g.Cluster)).Set(float64(g.Count))
			}
		}
	}
}

// maintain moves the maintainer's dispatcher off a DRAINING node.
func (n *Node) maintain(ctx context.Context) {
	n.mu.Lock()
	work := n.work
	n.mu.Unlock()
	if work == 0 || n.node.Liveness() == node.Alive {
		return
	}
	n.mu.Lock()
	if n.moveAt.IsZero() {
		n.moveAt = time.Now().Add(n.cfg.MaintainerMove)
	}
	due := !time.Now().Before(n.moveAt)
	n.mu.Unlock()
	if !due {
		return
	}
	if err := n.svc.Do(ctx, eventservice.Request{Action: eventservice.Remove, Cluster: Cluster, Dispatcher: n.maintainerDispatcher()}); err != nil {
		return
	}
	n.mu.Lock()
	n.work = 0
	n.mu.Unlock()
	n.log.Info("maintainer moved off", "epoch", n.epoch)
	select {
	case n.force <- struct{}{}:
	default:
	}
}

// DrainResult is how a drain ended.
type DrainResult struct {
	// Complete: the coordinator declared the drain complete (C8) for
	// DrainedEpoch; Legacy: it gave the legacy hard-restart answer (§9).
	Complete, Legacy bool
	DrainedEpoch     uint64
	// Took is the time from the first poll to the answer.
	Took time.Duration
}

// Drain is the SIGTERM path: it polls the coordinator's DrainNode for
// this node every poll until the answer is 0 (complete, or the legacy
// answer), and returns ctx's error if ctx ends first, wrapped with what
// the last poll before it said: its error, or how many dispatchers still
// depended on the node.
func (n *Node) Drain(ctx context.Context, poll time.Duration) (DrainResult, error) {
	cl := pb.NewCoordinatorClient(n.coord)
	start := time.Now()
	t := time.NewTicker(poll)
	defer t.Stop()
	last := "none" // what the last poll said, for the timeout's error
	for {
		d, err := cl.DrainNode(ctx, &pb.DrainNodeRequest{Node: string(n.cfg.ID)})
		switch {
		case err != nil:
			if ctx.Err() == nil { // not the deadline's own failure
				last = err.Error()
			}
		case d.GetRemaining() == 0 && (d.GetComplete() || d.GetLegacy()):
			r := DrainResult{Complete: d.GetComplete(), Legacy: d.GetLegacy(), DrainedEpoch: d.GetDrainedEpoch(), Took: time.Since(start)}
			if r.Complete && r.DrainedEpoch != n.epoch {
				last = fmt.Sprintf("drain completed for epoch %d, this process is %d", r.DrainedEpoch, n.epoch)
				break
			}
			return r, nil
		default:
			last = fmt.Sprintf("%d remaining", d.GetRemaining())
		}
		select {
		case <-ctx.Done():
			return DrainResult{}, fmt.Errorf("%w (last poll: %s)", ctx.Err(), last)
		case <-t.C:
		}
	}
}

// Close leaves the coordinator's membership (best effort), stops the
// heartbeats, the gRPC server and the event service, and closes the store.
func (n *Node) Close() error {
	if n.closed.get() {
		return nil
	}
	n.closed.set()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	_, _ = pb.NewCoordinatorClient(n.coord).Leave(ctx, &pb.LeaveRequest{Node: string(n.cfg.ID), Epoch: n.epoch})
	cancel()
	n.stopLoop()
	n.wg.Wait()
	n.srv.Stop()
	n.stopSvc()
	err := n.data.Close()
	_ = n.coord.Close()
	if n.lc != nil {
		_ = n.lc.Close()
	}
	n.log.Info("node stopped", "epoch", n.epoch)
	return err
}

// nextEpoch reads the epoch file of dir, writes the next epoch to it
// durably and returns it (N6: a restart has a larger epoch).
func nextEpoch(dir string) (uint64, error) {
	p := filepath.Join(dir, "epoch")
	var e uint64
	if b, err := os.ReadFile(p); err == nil {
		if e, err = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err != nil {
			return 0, fmt.Errorf("daemon: epoch file %s: %w", p, err)
		}
	} else if !os.IsNotExist(err) {
		return 0, fmt.Errorf("daemon: epoch file: %w", err)
	}
	e++
	tmp := p + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return 0, fmt.Errorf("daemon: epoch file: %w", err)
	}
	_, werr := fmt.Fprintf(f, "%d\n", e)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return 0, fmt.Errorf("daemon: epoch file: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return 0, fmt.Errorf("daemon: epoch file: %w", err)
	}
	return e, nil
}

// schemaStore is the node's schema store: reference counts per table. A
// daemon node keeps no schemas (its tables' rows are opaque), so
// RegisterTable only fails when its context is done.
type schemaStore struct {
	delay time.Duration
	mu    sync.Mutex
	refs  map[store.TableID]int
}

func newSchemaStore(delay time.Duration) *schemaStore {
	return &schemaStore{delay: delay, refs: make(map[store.TableID]int)}
}

func (s *schemaStore) RegisterTable(ctx context.Context, table store.TableID, _ uint64) error {
	if s.delay > 0 {
		t := time.NewTimer(s.wait())
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refs[table]++
	return nil
}

// wait draws how long a RegisterTable waits: up to a tenth of the delay
// seven times in eight, up to the whole delay the eighth.
func (s *schemaStore) wait() time.Duration {
	d := s.delay / 10
	if rand.IntN(8) == 0 {
		d = s.delay
	}
	return rand.N(d + 1)
}

func (s *schemaStore) UnregisterTable(table store.TableID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refs[table] > 0 {
		s.refs[table]--
	}
}

// errDisk is the error of an injected disk fault.
var errDisk = errors.New("daemon: injected disk fault")

// diskFaults returns a fault injector that fails a write batch's Set or
// Commit with probability p.
func diskFaults(p float64, seed uint64) func(store.Fault) error {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, 0xd15c))
	return func(f store.Fault) error {
		if f != store.FaultBatchSet && f != store.FaultBatchCommit {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		if rng.Float64() < p {
			return errDisk
		}
		return nil
	}
}
