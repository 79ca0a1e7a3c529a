package eventservice

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/trace"
)

// Defaults of [Config].
const (
	// DefaultInactivityTimeout is the silence after which the inactivity
	// cleanup removes a dispatcher, when InactivityTimeout is 0.
	DefaultInactivityTimeout = time.Hour
	// DefaultQueueSize is how many requests may wait in the request queue
	// when QueueSize is 0. The loop takes the waiting requests a batch at
	// a time, and a producer that found the queue full is woken once per
	// batch, so a larger queue means fewer wake-ups under load.
	DefaultQueueSize = 1024
)

// Config configures a [Service]. Only NewStores is required.
type Config struct {
	// NewStores returns the event store and the schema store of a
	// cluster's broker; the service calls it in the request loop (see
	// [Service.Do] for which goroutine that is) when a cluster's first
	// admitted registration arrives. It must not block.
	NewStores func(ClusterID) (store.EventStore, store.SchemaStore)
	// Tracer, if set, receives the model actions the service performs,
	// in order (docs/trace.md; see trace.go for which function emits
	// which action). Nil: no tracing, and no cost. If it has a header (a
	// *trace.Writer: a Header() trace.Header method), the header's
	// Brokers are the model's brokers, which a traced close and a traced
	// report go over, created or not; otherwise they go over the brokers
	// created.
	Tracer trace.Tracer
	// Emit sends an event to a collector. It is called from the request
	// loop (the Run goroutine, or a Do caller's; see [Service.Do]) and
	// from event-store goroutines (notifications), so it must be safe for
	// concurrent use, must not block and must not call back into the
	// service's Do, Heartbeat, Cleanup or Snapshot. Nil drops events.
	Emit func(Event)
	// Stopping reports whether the node is STOPPING. If set, the
	// admission gate and Sample consult it and close admission (one way)
	// once it returns true. Nil: only CloseAdmission closes admission.
	Stopping func() bool
	// Now is the clock of heartbeats and the inactivity cleanup
	// (time.Now if nil).
	Now func() time.Time
	// InactivityTimeout is the silence after which the inactivity cleanup
	// removes a dispatcher (DefaultInactivityTimeout if 0).
	InactivityTimeout time.Duration
	// CleanupInterval makes Run start the inactivity cleanup this often,
	// inside the request loop; 0 disables the ticker (call Cleanup).
	CleanupInterval time.Duration
	// OnError receives the errors of requests queued by Submit. Nil
	// drops them; the collector recovers through heartbeats.
	OnError func(Request, error)
	// QueueSize bounds the requests waiting in the request queue, the
	// running batch not included (DefaultQueueSize if 0). Submit and Do
	// wait while it is full.
	QueueSize int

	_ struct{}
}

// Service is a node's event service: one broker per upstream cluster, an
// admission gate, and one serial request loop ([Service.Run]) that runs
// every Register, Remove and Reset request, every heartbeat and the
// inactivity cleanup, one at a time in arrival order (R7). The loop is
// serial, not bound to one goroutine: whoever runs requests holds the
// loop's baton, which is the Run goroutine, or a [Service.Do] caller that
// found the loop idle and runs the queue and then its own request
// instead of waking Run.
//
// [Service.Sample], [Service.CloseAdmission] and [Service.AdmissionClosed]
// are safe from any goroutine and never wait for the request loop or a
// store: a report taken while a registration is blocked in a store returns
// at once, and counts it (F-R6, R2).
type Service struct {
	cfg Config

	q       *queue
	stopped chan struct{}
	running atomic.Bool

	// exec is the request loop's baton: whoever runs requests holds it,
	// so requests run one at a time (R7). The Run goroutine takes it for
	// each wake-up; a Do caller that finds it free while Run is running
	// takes it to run the queued requests and then its own on its own
	// goroutine, instead of handing its request to the Run goroutine and
	// waiting to be woken (see Do).
	exec    sync.Mutex
	loopCtx context.Context // set by Run under exec; the store calls' context
	// live is true from Run's start until its context is done or it
	// returns (set under exec): callers may run requests under exec.
	live atomic.Bool

	// brokers is the broker registry: a copy-on-write slice that Sample
	// loads without a lock; only the request loop appends to it, under
	// brokersMu (F-R6).
	brokersMu sync.Mutex
	brokers   atomic.Pointer[[]*broker]
	byCluster map[ClusterID]*broker // request loop only (and brokersMu)
	last      *broker               // request loop only: the last broker used

	// The admission gate (R8): closing, then closed, only go from false
	// to true. Each broker keeps a copy of the gate in its count word
	// (broker.countGate), so that an admission checks it and raises the count
	// in one compare-and-swap. CloseAdmission sets closing, closes every
	// broker's copy, then sets closed; see CloseAdmission for why a
	// report that sees closed also sees every admitted registration's
	// count.
	closing atomic.Bool
	closed  atomic.Bool

	dropped atomic.Int64 // notifications dropped for removed dispatchers

	hook hookFunc    // tests only, set before Start: see hooks.go
	tr   *traceState // Config.Tracer's state, nil when untraced (request loop only)
}

// New returns a service for cfg. Start its request loop with Run.
func New(cfg Config) (*Service, error) {
	if cfg.NewStores == nil {
		return nil, fmt.Errorf("%w: Config.NewStores is nil", ErrBadRequest)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.InactivityTimeout <= 0 {
		cfg.InactivityTimeout = DefaultInactivityTimeout
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = DefaultQueueSize
	}
	s := &Service{
		cfg:       cfg,
		q:         newQueue(cfg.QueueSize),
		stopped:   make(chan struct{}),
		byCluster: make(map[ClusterID]*broker),
		tr:        newTraceState(cfg.Tracer),
	}
	s.brokers.Store(&[]*broker{})
	return s, nil
}

// Submit queues req for the request loop and returns without waiting for
// it, as a collector's message would: it never runs a request itself, so
// a slow store never holds it. Its outcome reaches the collector as
// events, and errors go to Config.OnError. Submit waits only while the
// queue is full (Config.QueueSize); it returns ErrStopped once Run has
// returned, or ctx's error.
func (s *Service) Submit(ctx context.Context, req Request) error {
	if err := validate(&req); err != nil {
		return err
	}
	return s.q.push(ctx, job{req: req})
}

// Do runs req in the request loop and returns its outcome: nil on
// success (including a Remove of an unknown dispatcher and a stale
// Reset), ErrAdmissionClosed, an error wrapping ErrNotReusable, a
// RegisterTable error, or ErrUnknownDispatcher for a Reset.
//
// When Run is running and no request is running, Do runs the requests
// queued before req and then req on the caller's goroutine, holding the
// loop's baton, instead of waking the Run goroutine and sleeping until it
// answers: the order and the one-at-a-time rule (R7) are the same, and the
// caller waits as it would anyway. Wherever req runs, the store calls it
// causes get a context that ends when ctx or Run's context ends: a caller
// that gives up (a transport's deadline) releases a blocked RegisterTable,
// the registration is rolled back (R3) and the loop goes on with the next
// request; a req still queued when ctx ends is not run at all.
// If a request is running, a Do whose ctx cannot be cancelled waits for
// it as for a mutex and then does the same; any other Do queues req and
// waits for its outcome or ctx. Do returns ctx's error at once if ctx is
// already done, and ErrNotRunning if neither Run nor Start was called.
func (s *Service) Do(ctx context.Context, req Request) error {
	if err := validate(&req); err != nil {
		return err
	}
	// Take the baton (waiting for it if ctx cannot be cancelled): a Do
	// costs little more than a mutex around the request.
	if done := ctx.Done(); done == nil {
		s.exec.Lock()
	} else if err := ctx.Err(); err != nil {
		return err
	} else if !s.exec.TryLock() {
		return s.doQueued(ctx, &req)
	}
	if !s.live.Load() {
		s.exec.Unlock()
		return s.doQueued(ctx, &req)
	}
	return s.doHeld(s.loopCtx, ctx, &req)
}

// Heartbeat applies a collector's heartbeat in the request loop and
// returns the dispatchers the broker does not know (all of them if there
// is no broker for the cluster).
func (s *Service) Heartbeat(ctx context.Context, hb Heartbeat) (HeartbeatResponse, error) {
	return call(ctx, s, func(context.Context) (HeartbeatResponse, error) {
		resp := HeartbeatResponse{Cluster: hb.Cluster}
		b := s.broker(hb.Cluster)
		now := s.cfg.Now()
		for _, p := range hb.Progress {
			if b == nil || !b.heartbeat(p, now) {
				resp.Removed = append(resp.Removed, p.Dispatcher)
			}
		}
		return resp, nil
	})
}

// Cleanup runs the inactivity cleanup now, in the request loop, and
// returns how many dispatchers it removed. A dispatcher is inactive when
// it has handshaked (epoch ≥ 1), or admission is closed, and no heartbeat
// of its epoch arrived for Config.InactivityTimeout.
func (s *Service) Cleanup(ctx context.Context) (int, error) {
	if bugs.DoubleDecrementOn() {
		// The bug: the cleanup runs beside the loop, racing its removals.
		return s.cleanupInactive(), nil
	}
	return call(ctx, s, func(context.Context) (int, error) {
		return s.cleanupInactive(), nil
	})
}

// Snapshot returns the broker registry as the request loop sees it
// between two requests.
func (s *Service) Snapshot(ctx context.Context) (Snapshot, error) {
	return call(ctx, s, func(context.Context) (Snapshot, error) {
		snap := Snapshot{AdmissionClosed: s.closed.Load()}
		for _, b := range *s.brokers.Load() {
			snap.Brokers = append(snap.Brokers, b.snapshot())
		}
		slices.SortFunc(snap.Brokers, func(x, y BrokerSnapshot) int { return compare(x.Cluster, y.Cluster) })
		return snap, nil
	})
}

// DroppedNotifications returns how many event-store notifications the
// service dropped because their dispatcher was marked removed (R4).
func (s *Service) DroppedNotifications() int64 { return s.dropped.Load() }

func (s *Service) now() time.Time { return s.cfg.Now() }

func (s *Service) emit(e Event) {
	if s.cfg.Emit != nil {
		s.cfg.Emit(e)
	}
}

// validate returns an ErrBadRequest error if req is malformed.
func validate(req *Request) error {
	if len(req.Dispatcher) != 0 && len(req.Cluster) != 0 &&
		(req.Action == Remove || req.Action == Register && len(req.Changefeed) != 0 && (req.Table > 0 || req.TableTrigger)) {
		return nil // inlined: the common case costs a few compares
	}
	return invalid(req)
}

// invalid returns an ErrBadRequest error if req is malformed: validate
// for the requests its fast path does not decide.
func invalid(req *Request) error {
	switch {
	case req.Action < Register || req.Action > Reset:
		return fmt.Errorf("%w: action %v", ErrBadRequest, req.Action)
	case req.Dispatcher == "":
		return fmt.Errorf("%w: empty dispatcher ID", ErrBadRequest)
	case req.Cluster == "":
		return fmt.Errorf("%w: %v of %s: empty cluster ID", ErrBadRequest, req.Action, req.Dispatcher)
	case req.Action == Register && req.Changefeed == "":
		return fmt.Errorf("%w: REGISTER of %s: empty changefeed ID", ErrBadRequest, req.Dispatcher)
	case req.Action == Register && !req.TableTrigger && req.Table <= 0:
		return fmt.Errorf("%w: REGISTER of %s: table %d (want ≥ 1, or TableTrigger)", ErrBadRequest, req.Dispatcher, req.Table)
	case req.Action == Reset && req.Epoch == 0:
		return fmt.Errorf("%w: RESET needs an epoch ≥ 1", ErrBadRequest)
	}
	return nil
}

// handle runs one request; the request loop is its only caller. ctx is
// Run's context; reqCtx, if not nil, is the context of the Do that asked
// for req: the store calls req causes end when either is done.
func (s *Service) handle(ctx, reqCtx context.Context, req *Request) error {
	switch req.Action {
	case Register:
		return s.register(ctx, reqCtx, req)
	case Remove:
		if b := s.broker(req.Cluster); b != nil {
			b.removeID(req.Dispatcher)
		}
		return nil
	case Reset:
		b := s.broker(req.Cluster)
		var d *dispatcher
		if b != nil {
			d = b.lookup(req.Dispatcher)
		}
		if d == nil {
			return fmt.Errorf("%w: RESET %s/%s", ErrUnknownDispatcher, req.Cluster, req.Dispatcher)
		}
		b.reset(d, req.Epoch, req.StartTs)
		return nil
	}
	return fmt.Errorf("%w: action %v", ErrBadRequest, req.Action)
}

// register is TLA+ ServiceRecvRegister (the service-level gate check:
// gateCheck), BrokerAdmit (the one compare-and-swap of the broker's gate
// word that checks its gate bit and raises its count), BrokerReleaseOld
// for a re-registration, then the broker's add steps.
func (s *Service) register(ctx, reqCtx context.Context, req *Request) error {
	s.traceSendRegister(req)
	b, ok := s.gateCheck(req)
	if !ok {
		return s.refuse(req) // no broker is created for a refused registration
	}
	if b == nil {
		b = s.brokerFor(req.Cluster)
	}
	if !s.admit(b) { // TLA+ pc "gated", then BrokerAdmit
		// Refused by b's gate bit while a CloseAdmission may still be
		// under way: finish the close first, so that whoever learns of
		// the refusal also sees admission closed.
		s.CloseAdmission()
		return s.refuse(req)
	}
	// F-R3: a repeated registration replaces the old one. Release it fully
	// first (its stores and its share of the count), so that exactly one
	// subscription and one schema reference exist per live ID (R1, R9);
	// the new registration's early count keeps the report ≥ 1 meanwhile.
	// The new registration joins its changefeed status in the same step
	// as the lookup.
	d := b.newDispatcher(req)
	old := b.lookupAndJoin(d)
	if old != nil && !bugs.DoubleIncrementOn() { // TLA+ pc "replacing"
		if b.remove(old, stepReleaseOld) { // TLA+ BrokerReleaseOld
			b.recycle(old)
		}
	}
	return b.add(ctx, reqCtx, d, req)
}

// gateCheck is the service-level gate check of a registration (TLA+
// ServiceRecvRegister): it closes admission first if the node is
// STOPPING, then reads closed. It returns whether the registration may go
// on to its broker, and the broker if it exists already.
func (s *Service) gateCheck(req *Request) (*broker, bool) {
	// One point before both reads: a liveness step between the Stopping
	// read and the closed read would put the line after a step it
	// precedes.
	s.at(pointGateCheck, nil)
	if s.cfg.Stopping != nil && !s.closed.Load() && s.cfg.Stopping() {
		s.closeAdmission(true)
	}
	ts := s.lockTrace(pointNone, nil)
	if s.closed.Load() && !bugs.NoAdmissionGateOn() {
		if ts != nil {
			ts.recvRefused(s)
			ts.mu.Unlock()
		}
		return nil, false
	}
	b := s.broker(req.Cluster)
	if ts != nil {
		ts.gated(b)
		ts.mu.Unlock()
	}
	return b, true
}

// admit raises b's count for one registration (the early count) unless
// b's gate bit is closed; the check and the increment are one
// compare-and-swap of b.countGate (TLA+ BrokerAdmit), from the word read
// just before, retried if the word changed in between. The read is
// outside the trace lock; the compare-and-swap and its line are under it.
func (s *Service) admit(b *broker) bool {
	for {
		s.at(pointAdmit, b) // TLA+ pc "gated"
		w := b.countGate.Load()
		ts := s.lockTrace(pointAdmitCAS, b)
		ok, decided := b.casAdmit(w)
		if ts != nil {
			if decided {
				ts.admitLine(b, ok)
			}
			ts.mu.Unlock()
		}
		if decided {
			return ok
		}
	}
}

// refuse answers a registration the gate did not admit: a remote probe
// gets NotReusable, a local registration is dropped (F-R7).
func (s *Service) refuse(req *Request) error {
	if req.OnlyReuse {
		s.emit(Event{Kind: EventNotReusable, Cluster: req.Cluster, Dispatcher: req.Dispatcher, Topic: req.Topic})
	}
	return ErrAdmissionClosed
}

// broker returns the broker of cluster, or nil (request loop only).
func (s *Service) broker(cluster ClusterID) *broker {
	if b := s.last; b != nil && b.cluster == cluster {
		return b
	}
	b := s.byCluster[cluster]
	if b != nil {
		s.last = b
	}
	return b
}

// brokerFor returns the broker of cluster, creating and publishing it on
// first use (request loop only).
func (s *Service) brokerFor(cluster ClusterID) *broker {
	if b := s.broker(cluster); b != nil {
		return b
	}
	es, ss := s.cfg.NewStores(cluster)
	b := newBroker(s, cluster, es, ss)
	s.at(pointNewBroker, b)
	s.brokersMu.Lock()
	defer s.brokersMu.Unlock()
	s.byCluster[cluster] = b
	s.last = b
	next := append(slices.Clone(*s.brokers.Load()), b)
	s.brokers.Store(&next)
	if s.closing.Load() { // a CloseAdmission may have missed b (see there)
		s.closeBroker(b)
	}
	return b
}

// cleanupInactive removes the inactive dispatchers of every broker
// (request loop only, except under the DoubleDecrement bug).
func (s *Service) cleanupInactive() int {
	now := s.cfg.Now()
	closed := s.closed.Load()
	n := 0
	for _, b := range *s.brokers.Load() {
		for _, d := range b.inactive(now, s.cfg.InactivityTimeout, closed) {
			if b.remove(d, stepRemoveFinish) {
				n++
				if !bugs.DoubleDecrementOn() { // in the loop: d is ours again
					b.recycle(d)
				}
			}
		}
	}
	return n
}
