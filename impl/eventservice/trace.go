package eventservice

import (
	"sync"

	"github.com/drainproof/drainproof/impl/trace"
)

// This file is the event service's side of trace validation (docs/trace.md):
// with Config.Tracer set, the service writes one line per model action
// (tla/DrainRegistration.tla) it performs. Each call site is one s.traceX
// call whose nil check is inlined, so an untraced service pays a compare
// per site. The registry's lines are written by the request loop, whose
// baton orders its steps; the close and the report write theirs from the
// caller's goroutine, after each atomic step (a run with one reporter and
// one closer, as the simulator's, is in order).
//
// Which function emits which action:
//
//	register, on entry                  CollectorSendRegister(d, b), the REGISTER in the loop's queue
//	register, past or refused at the
//	  service's gate (gateOpen, refuse)  ServiceRecvRegister(d, b)
//	register, after the compare-and-swap
//	  (or refuse, when admit refused)   BrokerAdmit(d)
//	register, a repeated registration   BrokerReleaseOld(d) after the old one's release
//	broker.add                          BrokerSubscribe(d) | BrokerSubscribeRefused(d), BrokerRollback(d)
//	                                    BrokerRegisterTable(d) | BrokerRegisterTableFails(d),
//	                                    BrokerUnsubscribe(d), BrokerRollback(d)
//	broker.removeID, cleanupInactive    CollectorRemove(d), BrokerRemoveFinish(d) (a table trigger: one CollectorRemove)
//	CloseAdmission                      ServiceStartClose (or the refused ServiceRecvRegister that starts it),
//	                                    ServiceCloseBroker(b) per broker, ServiceFinishClose
//	Report                              ServiceStartReport, ServiceReadBroker(b) per broker

// traceState is the service's tracing state.
type traceState struct {
	mu sync.Mutex
	t  trace.Tracer
	// brokers are the model's brokers (Config.TraceBrokers): the close and
	// the report go over each, created or not (a broker created later is
	// created closed, and counts 0).
	brokers []ClusterID
	// The REGISTER under way: received yet, and at a broker where its
	// dispatcher was registered (a repeated registration).
	pending, received, gated, again bool
	req                             Request
	vars                            []trace.Var
	// closedAhead: the close traced these brokers before they existed.
	closedAhead map[ClusterID]bool
}

func newTraceState(t trace.Tracer, brokers []ClusterID) *traceState {
	if t == nil {
		return nil
	}
	return &traceState{t: t, brokers: brokers, closedAhead: map[ClusterID]bool{}}
}

// emit writes one line (ts.mu held by the caller).
func (ts *traceState) emit(action, d, b string, vars ...trace.Var) {
	ts.vars = append(ts.vars[:0], vars...)
	l := trace.Line{Action: action, D: d, B: b, Vars: ts.vars}
	ts.t.Trace(&l)
}

func (s *Service) lockTrace() *traceState {
	s.tr.mu.Lock()
	return s.tr
}

// traceSendRegister notes the REGISTER req entering the loop.
func (s *Service) traceSendRegister(req *Request) {
	if s.tr != nil {
		ts := s.lockTrace()
		defer ts.mu.Unlock()
		ts.pending, ts.received, ts.gated, ts.again, ts.req = true, false, false, false, *req
		ts.emit("CollectorSendRegister", string(req.Dispatcher), string(req.Cluster))
	}
}

// recvRefused traces the gate's refusal of the pending REGISTER
// (closing: whether the refusal started closing admission).
func (ts *traceState) recvRefused(s *Service) {
	ts.received = true
	ts.emit("ServiceRecvRegister", string(ts.req.Dispatcher), string(ts.req.Cluster),
		trace.Bool("closing", s.closing.Load()))
}

// traceGated traces the pending REGISTER past the service's gate, at
// broker b.
func (s *Service) traceGated(b *broker) {
	if s.tr != nil {
		ts := s.lockTrace()
		defer ts.mu.Unlock()
		ts.received, ts.gated = true, true
		ts.again = b.lookup(ts.req.Dispatcher) != nil
		pc := "gated"
		if ts.again {
			pc = "regated"
		}
		id := string(ts.req.Dispatcher)
		ts.emit("ServiceRecvRegister", id, string(b.cluster), trace.At("pc", id, pc), trace.At("brk", id, string(b.cluster)))
	}
}

// traceRefuse traces a refusal: at the service's gate, or by the broker's
// gate bit (admit).
func (s *Service) traceRefuse() {
	if s.tr != nil {
		ts := s.lockTrace()
		defer ts.mu.Unlock()
		if !ts.gated { // refused at the service's gate
			if !ts.received {
				ts.recvRefused(s)
			}
			return
		}
		id := string(ts.req.Dispatcher)
		pc, brk := "idle", "none"
		if ts.again {
			pc, brk = "registered", string(ts.req.Cluster)
		}
		ts.emit("BrokerAdmit", id, "", trace.At("pc", id, pc), trace.At("brk", id, brk))
	}
}

// traceAdmitted traces the admission's compare-and-swap at broker b.
func (s *Service) traceAdmitted(b *broker) {
	if s.tr != nil {
		ts := s.lockTrace()
		defer ts.mu.Unlock()
		id := string(ts.req.Dispatcher)
		pc := "admitted"
		switch {
		case ts.again:
			pc = "replacing"
		case ts.req.TableTrigger:
			pc = "registered"
		}
		ts.emit("BrokerAdmit", id, "", trace.At("pc", id, pc), trace.At("brk", id, string(b.cluster)),
			trace.At("count", string(b.cluster), b.count()), trace.At("removed", id, false))
	}
}

// traceReleasedOld traces a repeated registration's release of the old one.
func (s *Service) traceReleasedOld(b *broker) {
	if s.tr != nil {
		ts := s.lockTrace()
		defer ts.mu.Unlock()
		id := string(ts.req.Dispatcher)
		pc := "admitted"
		if ts.req.TableTrigger {
			pc = "registered"
		}
		ts.emit("BrokerReleaseOld", id, "", trace.At("pc", id, pc), trace.At("count", string(b.cluster), b.count()),
			trace.At("subscribed", id, false), trace.At("schemaRef", id, false), trace.At("removed", id, false))
	}
}

// traceStep traces a broker step of dispatcher d with the vars of the
// step. Its callers check s.tr first, so that an untraced service does
// not build the vars.
func (s *Service) traceStep(action string, b *broker, d *dispatcher, vars ...trace.Var) {
	ts := s.lockTrace()
	defer ts.mu.Unlock()
	ts.emit(action, string(d.id), "", vars...)
}

// The broker steps' observations.
func pcIs(d *dispatcher, pc string) trace.Var { return trace.At("pc", string(d.id), pc) }
func countOf(b *broker) trace.Var             { return trace.At("count", string(b.cluster), b.count()) }

// traceRemoved traces a removal that mark, delete and release did in one
// call (the inactivity cleanup).
func (s *Service) traceRemoved(b *broker, d *dispatcher) {
	if s.tr != nil {
		if !d.tableTrigger {
			s.traceStep("CollectorRemove", b, d, pcIs(d, "removing"), trace.At("removed", string(d.id), true))
		}
		s.traceRemoveFinish(b, d)
	}
}

// traceRemoveFinish traces the end of a removal (a table trigger's one
// step).
func (s *Service) traceRemoveFinish(b *broker, d *dispatcher) {
	if s.tr != nil {
		action := "BrokerRemoveFinish"
		if d.tableTrigger {
			action = "CollectorRemove"
		}
		s.traceStep(action, b, d, pcIs(d, "idle"), trace.At("brk", string(d.id), "none"),
			trace.At("subscribed", string(d.id), false), trace.At("schemaRef", string(d.id), false),
			trace.At("removed", string(d.id), true), countOf(b))
	}
}

// traceCloseStart traces the start of a close: the refused REGISTER's
// gate check if one is pending, else ServiceStartClose.
func (s *Service) traceCloseStart() {
	ts := s.lockTrace()
	defer ts.mu.Unlock()
	if ts.pending && !ts.received {
		ts.recvRefused(s)
		return
	}
	ts.emit("ServiceStartClose", "", "", trace.Bool("closing", true))
}

// traceCloseBrokers traces the close of each model broker's gate bit that
// this close set (closedNow), and of those not created yet (created
// closed, see brokerFor), once.
func (s *Service) traceCloseBrokers(closedNow map[ClusterID]bool) {
	ts := s.lockTrace()
	defer ts.mu.Unlock()
	for _, c := range ts.brokers {
		if closedNow[c] || (s.broker0(c) == nil && !ts.closedAhead[c]) {
			if s.broker0(c) == nil {
				ts.closedAhead[c] = true
			}
			ts.emit("ServiceCloseBroker", "", string(c), trace.At("gateClosed", string(c), true))
		}
	}
}

// traceCloseFinish traces the close's last step.
func (s *Service) traceCloseFinish() {
	ts := s.lockTrace()
	defer ts.mu.Unlock()
	ts.emit("ServiceFinishClose", "", "", trace.Bool("admissionClosed", true))
}

// reportTraced is Report, traced: the close if the node is STOPPING,
// then the gate read (ServiceStartReport), then each model broker's count
// read into the sum (ServiceReadBroker; 0 for one not created yet).
func (s *Service) reportTraced() (int64, bool) {
	if !s.closed.Load() && s.cfg.Stopping != nil && s.cfg.Stopping() {
		s.CloseAdmission()
	}
	ts := s.lockTrace()
	defer ts.mu.Unlock()
	closed := s.closed.Load()
	ts.emit("ServiceStartReport", "", "", trace.At("sample", "phase", "reading"), trace.At("sample", "closed", closed))
	var sum int64
	read := map[ClusterID]bool{}
	for _, b := range *s.brokers.Load() {
		sum += b.count()
		read[b.cluster] = true
		ts.emit("ServiceReadBroker", "", string(b.cluster), trace.At("sample", "sum", sum))
	}
	for _, c := range ts.brokers {
		if !read[c] { // not created yet: it counts 0
			ts.emit("ServiceReadBroker", "", string(c), trace.At("sample", "sum", sum))
		}
	}
	return sum, closed
}

// closeTraced is CloseAdmission, traced: each step that changed the gate.
func (s *Service) closeTraced() {
	if !s.closing.Swap(true) {
		s.traceCloseStart()
	}
	closedNow := map[ClusterID]bool{}
	for _, b := range *s.brokers.Load() {
		if b.gate.Or(gateClosed)&gateClosed == 0 {
			closedNow[b.cluster] = true
		}
	}
	s.traceCloseBrokers(closedNow)
	if !s.closed.Swap(true) {
		s.traceCloseFinish()
	}
}

// broker0 returns the broker of cluster c, or nil (any goroutine).
func (s *Service) broker0(c ClusterID) *broker {
	for _, b := range *s.brokers.Load() {
		if b.cluster == c {
			return b
		}
	}
	return nil
}
