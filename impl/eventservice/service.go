package eventservice

import (
	"context"
	"fmt"
	"runtime/debug"
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
	// Tracer, if set, receives the model actions the request loop
	// performs, in order (docs/trace.md; see trace.go for which function
	// emits which action). Nil: no tracing, and no cost.
	Tracer trace.Tracer
	// TraceBrokers are the model's brokers (the trace header's Brokers):
	// a traced close and a traced report go over each of them, created
	// or not.
	TraceBrokers []ClusterID
	// Emit sends an event to a collector. It is called from the request
	// loop (the Run goroutine, or a Do caller's; see [Service.Do]) and
	// from event-store goroutines (notifications), so it must be safe for
	// concurrent use, must not block and must not call back into the
	// service's Do, Heartbeat, Cleanup or Snapshot. Nil drops events.
	Emit func(Event)
	// Stopping reports whether the node is STOPPING. If set, the
	// admission gate and Report consult it and close admission (one way)
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
// [Service.Report], [Service.CloseAdmission] and [Service.AdmissionClosed]
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

	// brokers is the broker registry: a copy-on-write slice that Report
	// loads without a lock; only the request loop appends to it, under
	// brokersMu (F-R6).
	brokersMu sync.Mutex
	brokers   atomic.Pointer[[]*broker]
	byCluster map[ClusterID]*broker // request loop only (and brokersMu)
	last      *broker               // request loop only: the last broker used

	// The admission gate (R8): closing, then closed, only go from false
	// to true. Each broker keeps a copy of the gate in its count word
	// (broker.gate), so that an admission checks it and raises the count
	// in one compare-and-swap. CloseAdmission sets closing, closes every
	// broker's copy, then sets closed; see CloseAdmission for why a
	// report that sees closed also sees every admitted registration's
	// count.
	closing atomic.Bool
	closed  atomic.Bool

	dropped atomic.Int64 // notifications dropped for removed dispatchers

	hook atomic.Pointer[hookFunc] // tests under the tag bugs: see hooks.go
	tr   *traceState              // Config.Tracer's state, nil when untraced (request loop only)
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
		tr:        newTraceState(cfg.Tracer, cfg.TraceBrokers),
	}
	s.brokers.Store(&[]*broker{})
	return s, nil
}

// Start runs the request loop ([Service.Run]) on a new goroutine and
// returns at once: from then on Do, Heartbeat, Cleanup and Snapshot reach
// the loop, without the race of a `go svc.Run(ctx)` followed by a Do,
// which may find the loop not yet started (ErrNotRunning). wait waits for
// the loop to end (ctx done) and returns Run's error. Start, like Run,
// may be called once.
func (s *Service) Start(ctx context.Context) (wait func() error) {
	s.begin()
	done := make(chan error, 1)
	go func() { done <- s.loop(ctx) }()
	return func() error {
		err := <-done
		done <- err // wait may be called again
		return err
	}
}

// Run is the serial request loop. It runs queued requests one at a time
// until ctx is done, then returns ctx's error; requests still queued are
// dropped and their waiters get ErrStopped. Store calls made by the loop
// (by Run's goroutine or a Do caller's) get ctx, so a store blocked at
// shutdown is released; Run returns only once no request is running.
// Run (or Start) must be called at most once. Calls that wait for the
// loop return ErrNotRunning before Run is called; to call them right
// after starting the loop on another goroutine, use Start.
func (s *Service) Run(ctx context.Context) error {
	s.begin()
	return s.loop(ctx)
}

// begin marks the loop started, once.
func (s *Service) begin() {
	if !s.running.CompareAndSwap(false, true) {
		panic("eventservice: Run called twice")
	}
}

// loop is Run after begin.
func (s *Service) loop(ctx context.Context) error {
	defer close(s.stopped)
	defer func() {
		// Wait for a caller running requests, then refuse every later
		// push (ErrStopped) before stopped is closed.
		s.exec.Lock()
		s.live.Store(false)
		s.q.stop()
		s.exec.Unlock()
	}()
	s.exec.Lock()
	s.loopCtx = ctx
	s.live.Store(ctx.Err() == nil)
	s.exec.Unlock()
	defer context.AfterFunc(ctx, func() { s.live.Store(false) })()
	var tick <-chan time.Time
	if s.cfg.CleanupInterval > 0 {
		t := time.NewTicker(s.cfg.CleanupInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.q.bell:
			if err := s.drainHeld(ctx, tick); err != nil {
				return err
			}
		case <-tick:
			s.cleanupHeld()
		}
	}
}

// drainHeld runs drain holding exec.
func (s *Service) drainHeld(ctx context.Context, tick <-chan time.Time) error {
	s.exec.Lock()
	finished := false
	defer s.release(&finished)
	err := s.drain(ctx, tick)
	finished = true
	return err
}

// cleanupHeld runs the inactivity cleanup holding exec.
func (s *Service) cleanupHeld() {
	s.exec.Lock()
	finished := false
	defer s.release(&finished)
	s.cleanupInactive()
	finished = true
}

// release gives exec back; it is deferred by every holder of exec that
// runs requests, finished being set once they ran. If they did not, a
// store call, Emit or OnError panicked: the registry may be half-way
// through a request, and callers may be waiting for requests that will
// not run, so, as in the Run goroutine, the panic must end the process
// rather than be recovered by whoever called Do (singleflight does the
// same). release re-raises it on a new goroutine, which nobody can
// recover. A runtime.Goexit (a test's FailNow in a store) is let through.
func (s *Service) release(finished *bool) {
	if !*finished {
		if p := recover(); p != nil {
			crash(p)
		}
	}
	s.exec.Unlock()
}

// crash re-raises p, recovered from a request, on a new goroutine, with
// the stack where it was recovered, and never returns.
func crash(p any) {
	stack := debug.Stack()
	go panic(fmt.Sprintf("eventservice: panic while running a request: %v\n\n%s", p, stack))
	select {} // the process is going down
}

// runBatch runs the queued requests, oldest first, under exec; it
// reports false if Run's context ctx ended first (the rest of the batch
// is dropped, as Run drops the queue when it returns).
func (s *Service) runBatch(ctx context.Context) bool {
	if !s.q.waiting() {
		return true
	}
	batch := s.q.take()
	defer s.q.done(batch)
	for i := range batch {
		if !s.live.Load() { // ctx is done (cheaper to read than ctx.Err)
			return false
		}
		s.run(ctx, &batch[i])
	}
	return true
}

// drain runs the queued requests a batch at a time, oldest first, until
// the queue is empty; between batches it runs a due inactivity cleanup,
// so that a busy queue does not starve it. One wake-up of the loop thus
// serves every request that arrived while it was busy. The caller holds
// exec.
func (s *Service) drain(ctx context.Context, tick <-chan time.Time) error {
	for s.q.waiting() {
		if !s.runBatch(ctx) {
			return ctx.Err()
		}
		select {
		case <-tick:
			s.cleanupInactive()
		default:
		}
	}
	return ctx.Err()
}

// run runs j in the request loop.
func (s *Service) run(ctx context.Context, j *job) {
	if j.fn != nil {
		j.fn(ctx)
		return
	}
	err := s.handle(ctx, &j.req)
	switch {
	case j.w != nil:
		j.w.done <- err // capacity 1, and only this send
	case err != nil && s.cfg.OnError != nil:
		s.cfg.OnError(j.req, err)
	}
}

// call runs fn in the request loop and waits for its result.
func call[T any](ctx context.Context, s *Service, fn func(context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	var zero T
	if !s.running.Load() {
		return zero, ErrNotRunning
	}
	j := job{fn: func(loopCtx context.Context) {
		v, err := fn(loopCtx)
		done <- result{v, err}
	}}
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	if err := s.q.push(ctx, j); err != nil {
		return zero, err
	}
	select {
	case r := <-done:
		return r.v, r.err
	case <-s.stopped:
		// The job may have finished just before the loop stopped.
		select {
		case r := <-done:
			return r.v, r.err
		default:
			return zero, ErrStopped
		}
	case <-ctx.Done():
		return zero, ctx.Err()
	}
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
// answers: the order and the one-at-a-time rule (R7) are the same, the
// store calls get Run's context, and the caller waits as it would anyway.
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
	return s.doHeld(s.loopCtx, &req)
}

// doHeld runs the queued requests (at most one batch, which is all of
// them, since nobody else takes batches while exec is held), then req,
// then at most one batch queued meanwhile, so that callers who queued
// behind it need not wait for the Run goroutine to wake (requests left
// queued rang the bell when the queue became non-empty, so Run runs
// them). The caller holds exec; doHeld gives it back.
func (s *Service) doHeld(loopCtx context.Context, req *Request) error {
	finished := false
	defer s.release(&finished)
	if s.q.waiting() && !s.runBatch(loopCtx) {
		finished = true
		return ErrStopped // Run's context ended: the queue is being dropped
	}
	err := s.handle(loopCtx, req)
	if s.q.waiting() {
		s.runBatch(loopCtx)
	}
	finished = true
	return err
}

// doQueued is Do for a request that waits in the queue for the loop.
func (s *Service) doQueued(ctx context.Context, req *Request) error {
	if !s.running.Load() {
		return ErrNotRunning
	}
	w := waiters.Get().(*waiter)
	if err := s.q.push(ctx, job{req: *req, w: w}); err != nil {
		waiters.Put(w)
		return err
	}
	select {
	case err := <-w.done:
		waiters.Put(w)
		return err
	case <-s.stopped:
		// The request may have finished just before the loop stopped.
		select {
		case err := <-w.done:
			return err
		default:
			return ErrStopped
		}
	case <-ctx.Done():
		return ctx.Err() // w may still get the outcome: not reused
	}
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

// Report returns the sum of the brokers' dispatcher counts and whether
// admission is closed. It never waits for the request loop or a store. If
// Config.Stopping says the node is STOPPING, Report first closes
// admission; then it reads the gate, then the counts, so that a report
// with admissionClosed true counts every registration ever admitted and
// not yet fully removed: such a report's zero is final (R2, R8).
func (s *Service) Report() (count int64, admissionClosed bool) {
	if bugs.SampleBeforeCloseOn() {
		// The bug: the sum is taken before the close, so a registration
		// admitted in between is missing from a closed report.
		s.startReport()
		count = s.readCounts()
	}
	// TLA+ ServiceStartReport (NodeStartHeartbeat for a heartbeat's
	// sample): close admission when STOPPING, then read the flag.
	if !s.closed.Load() && s.cfg.Stopping != nil && s.cfg.Stopping() {
		s.CloseAdmission()
	}
	if bugs.SampleBeforeCloseOn() {
		return count, s.closed.Load()
	}
	admissionClosed = s.startReport()
	return s.readCounts(), admissionClosed
}

// startReport reads the gate for a report (TLA+ ServiceStartReport).
func (s *Service) startReport() bool {
	ts := s.lockTrace()
	closed := s.closed.Load()
	if ts != nil {
		ts.startReport(closed)
		ts.mu.Unlock()
	}
	return closed
}

// readCounts returns the sum of the brokers' counts, read one broker at a
// time (TLA+ ServiceReadBroker(b) for each b; a model broker not created
// when the list is read counts 0 then).
func (s *Service) readCounts() int64 {
	ts := s.lockTrace()
	brokers := *s.brokers.Load()
	if ts != nil {
		ts.absent(brokers, func(c ClusterID) { ts.readBroker(c, 0) })
		ts.mu.Unlock()
	}
	var n int64
	for _, b := range brokers {
		s.at(stepReadBroker, b)
		ts := s.lockTrace()
		n += b.count()
		if ts != nil {
			ts.readBroker(b.cluster, n)
			ts.mu.Unlock()
		}
	}
	return n
}

// sumCounts returns the sum of the brokers' counts, untraced (tests).
func (s *Service) sumCounts() int64 {
	var n int64
	for _, b := range *s.brokers.Load() {
		n += b.count()
	}
	return n
}

// CloseAdmission closes the admission gate, for good: every later
// registration is refused (R8). The node calls it when it goes STOPPING.
//
// The order makes a report that sees closed count every admitted
// registration (Go's atomics are sequentially consistent). An admission
// to broker b succeeds by a compare-and-swap of b.gate with the gate bit
// clear, so it comes before the store that set b's bit. That store is
// either the one here, before closed is set (so before a report sees it),
// or the one brokerFor makes when it created b after it saw closing; but
// brokerFor runs in the request loop before any admission to b, which
// would then be refused. If brokerFor did not see closing, closing was
// set after b was in the broker list, so the loop here sets b's bit.
func (s *Service) CloseAdmission() { s.closeAdmission(false) }

// closeAdmission is CloseAdmission; byGate tells that a registration's
// gate check found the node STOPPING (TLA+ ServiceRecvRegister, refused,
// starts the close).
func (s *Service) closeAdmission(byGate bool) {
	if s.closed.Load() {
		return
	}
	ts := s.lockTrace()
	started := !s.closing.Swap(true) // TLA+ ServiceStartClose
	if ts != nil {
		if started {
			ts.startClose(byGate)
		}
		ts.mu.Unlock()
	}
	if bugs.ClosedBeforeBrokersOn() {
		s.finishClose() // the bug: closed before the brokers' bits
	}
	ts = s.lockTrace()
	brokers := *s.brokers.Load()
	if ts != nil {
		ts.absent(brokers, ts.closedBroker) // created closed by brokerFor
		ts.mu.Unlock()
	}
	for _, b := range brokers {
		s.at(stepCloseBroker, b)
		s.closeBroker(b) // TLA+ ServiceCloseBroker(b)
	}
	s.finishClose() // TLA+ ServiceFinishClose
}

// closeBroker sets b's gate bit (TLA+ ServiceCloseBroker(b)).
func (s *Service) closeBroker(b *broker) {
	ts := s.lockTrace()
	b.gate.Or(gateClosed)
	if ts != nil {
		ts.closedBroker(b.cluster)
		ts.mu.Unlock()
	}
}

// finishClose sets closed (TLA+ ServiceFinishClose).
func (s *Service) finishClose() {
	ts := s.lockTrace()
	finished := !s.closed.Swap(true)
	if ts != nil {
		if finished {
			ts.emit("ServiceFinishClose", "", "", trace.Bool("admissionClosed", true))
		}
		ts.mu.Unlock()
	}
}

// Gates returns each broker's count and gate bit, sorted by cluster, one
// atomic load per broker (so, like Report's sum, not one atomic read of
// them all). It never waits for the request loop or a store, and never
// closes admission.
func (s *Service) Gates() []Gate {
	brokers := *s.brokers.Load()
	out := make([]Gate, 0, len(brokers))
	for _, b := range brokers {
		w := b.gate.Load()
		out = append(out, Gate{Cluster: b.cluster, Count: w >> 1, Closed: w&gateClosed != 0})
	}
	slices.SortFunc(out, func(x, y Gate) int { return compare(x.Cluster, y.Cluster) })
	return out
}

// AdmissionClosed reports whether the admission gate is closed.
func (s *Service) AdmissionClosed() bool { return s.closed.Load() }

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

// handle runs one request; the request loop is its only caller.
func (s *Service) handle(ctx context.Context, req *Request) error {
	switch req.Action {
	case Register:
		return s.register(ctx, req)
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

// admit raises b's count for one registration (the early count) unless
// b's gate bit is closed; the check and the increment are one
// compare-and-swap of b.gate (TLA+ BrokerAdmit).
func (s *Service) admit(b *broker) bool {
	ts := s.lockTrace()
	ok := b.admit()
	if ts != nil {
		ts.admit(b, ok)
		ts.mu.Unlock()
	}
	return ok
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

// refuse answers a registration the gate did not admit: a remote probe
// gets NotReusable, a local registration is dropped (F-R7).
func (s *Service) refuse(req *Request) error {
	if req.OnlyReuse {
		s.emit(Event{Kind: EventNotReusable, Cluster: req.Cluster, Dispatcher: req.Dispatcher, Topic: req.Topic})
	}
	return ErrAdmissionClosed
}

// register is TLA+ ServiceRecvRegister (the service-level gate check:
// gateCheck), BrokerAdmit (the one compare-and-swap of the broker's gate
// word that checks its gate bit and raises its count), BrokerReleaseOld
// for a re-registration, then the broker's add steps.
func (s *Service) register(ctx context.Context, req *Request) error {
	s.traceSendRegister(req)
	b, ok := s.gateCheck(req)
	if !ok {
		return s.refuse(req) // no broker is created for a refused registration
	}
	if b == nil {
		b = s.brokerFor(req.Cluster)
	}
	s.at(stepGated, b) // TLA+ pc "gated"
	if !s.admit(b) {   // TLA+ BrokerAdmit
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
	old, slot := b.lookupAndJoin(d)
	if old != nil && !bugs.DoubleIncrementOn() { // TLA+ pc "replacing"
		if b.remove(old, stepReleaseOld) { // TLA+ BrokerReleaseOld
			b.recycle(old)
		}
	}
	return b.add(ctx, d, req, slot)
}

// gateCheck is the service-level gate check of a registration (TLA+
// ServiceRecvRegister): it closes admission first if the node is
// STOPPING, then reads closed. It returns whether the registration may go
// on to its broker, and the broker if it exists already.
func (s *Service) gateCheck(req *Request) (*broker, bool) {
	if s.cfg.Stopping != nil && !s.closed.Load() && s.cfg.Stopping() {
		s.closeAdmission(true)
	}
	ts := s.lockTrace()
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
