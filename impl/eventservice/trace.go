package eventservice

import (
	"github.com/drainproof/drainproof/tla/names"
	"slices"
	"sync"

	"github.com/drainproof/drainproof/impl/trace"
)

// This file is the event service's side of trace validation (docs/trace.md):
// with Config.Tracer set, the service writes one line per model action
// (tla/DrainRegistration.tla) it performs. The traced and the untraced
// service run the same code: at each action site the code takes the trace
// lock with [Service.lockTrace] (nil, and no lock, when untraced), does the
// effect, and, traced, writes the line and unlocks. An untraced service
// pays a nil check per site.
//
// The lines of several goroutines are in the order of their effects: an
// effect that another goroutine's line observes is done under the trace
// lock together with its own line. Those are the service's gate check
// (it reads closed), the flags closing and closed, and every access to a
// broker's admission word: the admission's compare-and-swap, each count
// change (rollback, release, publish), the close of each broker's gate
// bit and the report's read of each broker's count. A step between two
// such effects (a hook, a store call) runs outside the lock, so the
// traced service interleaves as the untraced one does. The model has one
// report at a time: overlapping reports are traced in order, but two
// samples at once are not a behaviour of the model.
//
// Which function emits which action:
//
//	Service.register, on entry          CollectorSendRegister(d, b), the REGISTER in the loop's queue
//	Service.register, the gate check    ServiceRecvRegister(d, b), past or refused (refused and
//	                                      starting the close: by closeAdmission's startClose)
//	Service.admit (compare-and-swap)    BrokerAdmit(d), admitted or refused by the broker's gate bit
//	                                      (broker.casAdmit; traceState.admitLine)
//	broker.release of the old one       BrokerReleaseOld(d), a repeated registration
//	broker.add                          BrokerSubscribe(d) | BrokerSubscribeRefused(d), BrokerRollback(d)
//	                                    BrokerRegisterTable(d) | BrokerRegisterTableFails(d),
//	                                    BrokerUnsubscribe(d), BrokerRollback(d)
//	broker.removeID, broker.remove      CollectorRemove(d); broker.release: BrokerRemoveFinish(d)
//	                                    (a table trigger: one CollectorRemove, at the release)
//	Service.closeAdmission              ServiceStartClose (or the refused ServiceRecvRegister that starts it),
//	                                    ServiceCloseBroker(b) per broker (also brokerFor's), ServiceFinishClose
//	Service.Sample                      ServiceStartReport, ServiceReadBroker(b) per broker

// traceState is the service's tracing state; mu is the trace lock, which
// orders the traced effects and their lines.
type traceState struct {
	mu sync.Mutex
	t  trace.Tracer
	// brokers are the model's brokers (the trace header's Brokers): the
	// close and the report go over each, created or not (a broker created
	// later is created closed, and counts 0).
	brokers []ClusterID
	// The REGISTER under way (request loop): received yet, and at a
	// broker where its dispatcher was registered (a repeated
	// registration).
	pending, received, again bool
	req                      Request
	vars                     []trace.Var
	// gateTraced: the brokers whose ServiceCloseBroker is in the trace.
	gateTraced map[ClusterID]bool
}

func newTraceState(t trace.Tracer) *traceState {
	if t == nil {
		return nil
	}
	return &traceState{t: t, brokers: headerBrokers(t), gateTraced: map[ClusterID]bool{}}
}

// headerBrokers returns the Brokers of t's trace header, if t has a
// header (a *trace.Writer), as a header written by the harness holds
// them ([]string) or as one read back from JSON ([]any).
func headerBrokers(t trace.Tracer) []ClusterID {
	h, ok := t.(interface{ Header() trace.Header })
	if !ok {
		return nil
	}
	var out []ClusterID
	switch bs := h.Header().Model["Brokers"].(type) {
	case []string:
		for _, b := range bs {
			out = append(out, ClusterID(b))
		}
	case []ClusterID:
		out = append(out, bs...)
	case []any:
		for _, b := range bs {
			if s, ok := b.(string); ok {
				out = append(out, ClusterID(s))
			}
		}
	}
	return out
}

// lockTrace stops at point p (a test's hook, hooks.go), then takes the
// trace lock and returns the trace state, or returns nil when the service
// is untraced. The caller does the effect, then, if the result is not
// nil, writes its line and unlocks. It is inlined: an untraced site
// without a hook costs two loads and two compares.
func (s *Service) lockTrace(p point, b *broker) *traceState {
	if s.tr == nil && s.hook == nil {
		return nil
	}
	return s.lockTraceSlow(p, b)
}

// lockTraceSlow is lockTrace for a traced service or a test's hook (kept
// out of lockTrace, so that lockTrace is inlined).
//
//go:noinline
func (s *Service) lockTraceSlow(p point, b *broker) *traceState {
	s.at(p, b)
	ts := s.tr
	if ts != nil {
		ts.mu.Lock()
	}
	return ts
}

// emit writes one line (ts.mu held).
func (ts *traceState) emit(action names.Action, d, b string, vars ...trace.Var) {
	ts.vars = append(ts.vars[:0], vars...)
	l := trace.Line{Action: action, D: d, B: b, Vars: ts.vars}
	ts.t.Trace(&l)
}

// unlockAfter writes one line and releases the trace lock.
func (ts *traceState) unlockAfter(action names.Action, d, b string, vars ...trace.Var) {
	ts.emit(action, d, b, vars...)
	ts.mu.Unlock()
}

// traceSendRegister notes the REGISTER req entering the loop.
func (s *Service) traceSendRegister(req *Request) {
	if ts := s.lockTrace(pointSendRegister, nil); ts != nil {
		ts.pending, ts.received, ts.again, ts.req = true, false, false, *req
		ts.unlockAfter(names.CollectorSendRegister, string(req.Dispatcher), string(req.Cluster))
	}
}

// recvRefused traces the gate check's refusal of the pending REGISTER,
// unless the refusal already started the close (ts.mu held).
func (ts *traceState) recvRefused(s *Service) {
	if !ts.pending || ts.received {
		return
	}
	ts.received = true
	ts.emit(names.ServiceRecvRegister, string(ts.req.Dispatcher), string(ts.req.Cluster),
		trace.Bool("closing", s.closing.Load()))
}

// gated traces the pending REGISTER past the service's gate check, b
// being its broker if it exists (ts.mu held).
func (ts *traceState) gated(b *broker) {
	ts.received = true
	ts.again = b != nil && b.lookup(ts.req.Dispatcher) != nil
	pc := "gated"
	if ts.again {
		pc = "regated"
	}
	id := string(ts.req.Dispatcher)
	ts.emit(names.ServiceRecvRegister, id, string(ts.req.Cluster), trace.At("pc", id, pc), trace.At("brk", id, string(ts.req.Cluster)))
}

// admitLine traces the admission's compare-and-swap at broker b, which
// admitted (ok) or found b's gate bit closed (ts.mu held).
func (ts *traceState) admitLine(b *broker, ok bool) {
	id := string(ts.req.Dispatcher)
	if !ok {
		pc, brk := "idle", "none"
		if ts.again {
			pc, brk = "registered", string(ts.req.Cluster)
		}
		ts.emit(names.BrokerAdmit, id, "", trace.At("pc", id, pc), trace.At("brk", id, brk))
		return
	}
	pc := "admitted"
	switch {
	case ts.again:
		pc = "replacing"
	case ts.req.TableTrigger:
		pc = "registered"
	}
	ts.emit(names.BrokerAdmit, id, "", trace.At("pc", id, pc), trace.At("brk", id, string(b.cluster)),
		trace.At("count", string(b.cluster), b.count()), trace.At("removed", id, false))
}

// brokerStep names the broker steps that [broker.step] traces.
type brokerStep int8

const (
	stepNone brokerStep = iota // an effect without a line of its own
	stepSubscribe
	stepSubscribeRefused
	stepRegisterTable
	stepRegisterTableFails
	stepUnsubscribe
	stepRollback
	stepCollectorRemove
	stepRemoveFinish
	stepReleaseOld
)

// brokerStepLine writes the line of broker step a of dispatcher d and
// releases the trace lock. Each line carries the variables the step
// observes.
func (ts *traceState) brokerStepLine(a brokerStep, b *broker, d *dispatcher) {
	defer ts.mu.Unlock()
	id := string(d.id)
	pc := func(p string) trace.Var { return trace.At("pc", id, p) }
	count := func() trace.Var { return trace.At("count", string(b.cluster), b.count()) }
	none := trace.At("brk", id, "none")
	switch a {
	case stepSubscribe:
		ts.emit(names.BrokerSubscribe, id, "", pc("subscribed"), trace.At("subscribed", id, true))
	case stepSubscribeRefused:
		ts.emit(names.BrokerSubscribeRefused, id, "", pc("rollback"), trace.At("removed", id, d.isRemoved()))
	case stepRegisterTable:
		ts.emit(names.BrokerRegisterTable, id, "", pc("registered"), trace.At("schemaRef", id, true), count())
	case stepRegisterTableFails:
		ts.emit(names.BrokerRegisterTableFails, id, "", pc("failed"), trace.At("removed", id, d.isRemoved()))
	case stepUnsubscribe:
		ts.emit(names.BrokerUnsubscribe, id, "", pc("rollback"), trace.At("subscribed", id, !d.isRemoved()))
	case stepRollback:
		ts.emit(names.BrokerRollback, id, "", pc("idle"), none, count())
	case stepCollectorRemove:
		ts.emit(names.CollectorRemove, id, "", pc("removing"), trace.At("removed", id, true), count())
	case stepRemoveFinish:
		action := names.BrokerRemoveFinish
		if d.tableTrigger {
			action = names.CollectorRemove
		}
		ts.emit(action, id, "", pc("idle"), none, trace.At("subscribed", id, false),
			trace.At("schemaRef", id, false), trace.At("removed", id, true), count())
	case stepReleaseOld:
		p := "admitted"
		if ts.req.TableTrigger {
			p = "registered"
		}
		ts.emit(names.BrokerReleaseOld, id, "", pc(p), count(), trace.At("subscribed", id, false),
			trace.At("schemaRef", id, false), trace.At("removed", id, false))
	}
}

// startClose traces the start of a close: the refused REGISTER's gate
// check if the close is that check's (byGate), else ServiceStartClose
// (ts.mu held).
func (ts *traceState) startClose(byGate bool) {
	if byGate && ts.pending && !ts.received {
		ts.received = true
		ts.emit(names.ServiceRecvRegister, string(ts.req.Dispatcher), string(ts.req.Cluster), trace.Bool("closing", true))
		return
	}
	ts.emit(names.ServiceStartClose, "", "", trace.Bool("closing", true))
}

// closedBroker traces the close of cluster c's gate bit, once (ts.mu
// held): the bit is set, by this call's effect or an earlier one.
func (ts *traceState) closedBroker(c ClusterID) {
	if !ts.gateTraced[c] {
		ts.gateTraced[c] = true
		ts.emit(names.ServiceCloseBroker, "", string(c), trace.At("gateClosed", string(c), true))
	}
}

// absent calls f for each model broker not in brokers: one not created
// yet, whose count is 0 and which brokerFor creates closed once the close
// started (ts.mu held).
func (ts *traceState) absent(brokers []*broker, f func(ClusterID)) {
	for _, c := range ts.brokers {
		if !slices.ContainsFunc(brokers, func(b *broker) bool { return b.cluster == c }) {
			f(c)
		}
	}
}

// readBroker traces the report's read of cluster c's count, sum being
// the report's sum so far (ts.mu held).
func (ts *traceState) readBroker(c ClusterID, sum int64) {
	ts.emit(names.ServiceReadBroker, "", string(c), trace.At("sample", "sum", sum))
}

// startReport traces the report's read of the gate (ts.mu held).
func (ts *traceState) startReport(closed bool) {
	ts.emit(names.ServiceStartReport, "", "", trace.At("sample", "phase", "reading"), trace.At("sample", "closed", closed))
}
