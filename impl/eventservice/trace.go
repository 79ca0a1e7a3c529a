package eventservice

import (
	"sync"

	"github.com/drainproof/drainproof/impl/trace"
)

// This file is the event service's side of trace validation (docs/trace.md):
// with Config.Tracer set, the request loop writes one line per model action
// it performs. Each call site is one s.traceX call whose nil check is
// inlined, so an untraced service pays a compare per site. Every line is
// written by the request loop, whose baton orders the registry's steps, so
// the lines come in the order of the effects.
//
// Which function emits which action (the model of tla/DrainRegistration.tla):
//
//	register, refused at the gate    CollectorRegister(d)   admission closed, no count
//	register, fresh ordinary d       CollectorRegister(d)   after the admission's compare-and-swap: pc admitted
//	register, table trigger or a
//	  repeated registration          CollectorRegister(d)   after the whole add: the model's one step
//	add, RegisterDispatcher true     BrokerSubscribe(d)
//	add, RegisterDispatcher false    BrokerSubscribeRefused(d) after the count's rollback
//	add, RegisterTable ok            BrokerRegisterTable(d)  after the publication
//	add, RegisterTable error         BrokerRegisterTableFails(d) after the count's rollback
//	removeID, inactivity cleanup     CollectorRemove(d)     after the removed mark and the delete
//	                                 BrokerRemoveFinish(d)  after the stores' release and the decrement
//	                                 (a table trigger's removal is one CollectorRemove)

// traceState is the loop's tracing state. The request loop is its only
// user in a correct build; mu serialises emit anyway, for the cleanup
// that the DoubleDecrement bug runs beside the loop.
type traceState struct {
	mu sync.Mutex
	t  trace.Tracer
	// fresh: the registration under way is of an ordinary dispatcher not
	// registered before, whose store steps are model steps of their own.
	fresh bool
	line  trace.Line
	vars  []trace.Var
}

// The actions the service traces.
type traceAction uint8

const (
	trRegisterRefused traceAction = iota
	trRegisterAdmitted
	trRegisterDone
	trSubscribe
	trSubscribeRefused
	trRegisterTable
	trRegisterTableFails
	trRemove
	trRemoveFinish
)

func newTraceState(t trace.Tracer) *traceState {
	if t == nil {
		return nil
	}
	return &traceState{t: t}
}

// traceRegister notes a registration passing the gate: whether the
// broker's store steps will be traced one by one.
func (s *Service) traceRegister(d *dispatcher, old *dispatcher) {
	if s.tr != nil {
		s.tr.fresh = old == nil && !d.tableTrigger
		if s.tr.fresh {
			s.tr.emit(s, trRegisterAdmitted, d.id, d)
		}
	}
}

// traceStep traces action a of dispatcher id (d: its registry entry).
func (s *Service) traceStep(a traceAction, id DispatcherID, d *dispatcher) {
	if s.tr != nil {
		s.tr.emit(s, a, id, d)
	}
}

// traceFresh traces a store step of a fresh registration (the others'
// store steps are inside their one CollectorRegister).
func (s *Service) traceFresh(a traceAction, d *dispatcher) {
	if s.tr != nil && s.tr.fresh {
		s.tr.emit(s, a, d.id, d)
	}
}

// traceRemove traces the start of a collector's removal (an ordinary
// dispatcher's: a table trigger's is one step, traced at its finish).
func (s *Service) traceRemove(d *dispatcher) {
	if s.tr != nil && !d.tableTrigger {
		s.tr.emit(s, trRemove, d.id, d)
	}
}

// traceAdded traces the end of a registration that is one model step
// (a table trigger's, a repeated one's): err is add's result.
func (s *Service) traceAdded(d *dispatcher, err error) {
	if s.tr != nil && !s.tr.fresh {
		a := trRegisterDone
		if err != nil {
			a = trSubscribeRefused // the model has no failed re-registration: the trace shows it
		}
		s.tr.emit(s, a, d.id, d)
	}
}

// traceRemoved traces a removal that mark, delete and release did in one
// call (the inactivity cleanup).
func (s *Service) traceRemoved(d *dispatcher) {
	if s.tr != nil {
		if !d.tableTrigger {
			s.tr.emit(s, trRemove, d.id, nil)
		}
		s.tr.emit(s, trRemoveFinish, d.id, d)
	}
}

var traceNames = [...]string{
	trRegisterRefused:    "CollectorRegister",
	trRegisterAdmitted:   "CollectorRegister",
	trRegisterDone:       "CollectorRegister",
	trSubscribe:          "BrokerSubscribe",
	trSubscribeRefused:   "BrokerSubscribeRefused",
	trRegisterTable:      "BrokerRegisterTable",
	trRegisterTableFails: "BrokerRegisterTableFails",
	trRemove:             "CollectorRemove",
	trRemoveFinish:       "BrokerRemoveFinish",
}

// emit writes the line of action a: the dispatcher's pc and removed mark
// as the action leaves them, the stores the action touched, and the
// service's count and gate. A removal's first line of an ordinary
// dispatcher omits the count, which the model keeps until the finish but
// the cleanup's one call has already decremented.
func (ts *traceState) emit(s *Service, a traceAction, id DispatcherID, d *dispatcher) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.vars = ts.vars[:0]
	var pc string
	removed := true
	switch a {
	case trRegisterRefused:
	case trRegisterAdmitted:
		pc, removed = "admitted", false
	case trSubscribe:
		pc, removed = "subscribed", false
		ts.vars = append(ts.vars, trace.At("subscribed", string(id), true))
	case trRegisterDone, trRegisterTable:
		pc, removed = "registered", false
		ts.vars = append(ts.vars, trace.At("schemaRef", string(id), !d.tableTrigger))
	case trSubscribeRefused:
		pc = "idle"
	case trRegisterTableFails:
		pc, removed = "idle", d.isRemoved()
	case trRemove:
		pc = "removing"
	case trRemoveFinish:
		pc = "idle"
		ts.vars = append(ts.vars, trace.At("subscribed", string(id), false), trace.At("schemaRef", string(id), false))
	}
	if pc != "" {
		ts.vars = append(ts.vars, trace.At("pc", string(id), pc), trace.At("removed", string(id), removed))
	}
	if a != trRemove || d != nil {
		ts.vars = append(ts.vars, trace.Int("count", s.sumCounts()))
	}
	ts.vars = append(ts.vars, trace.Bool("admissionClosed", s.closed.Load()))
	name := traceNames[a]
	if a == trRemoveFinish && d.tableTrigger {
		name = "CollectorRemove" // a table trigger's removal is one model step
	}
	ts.line = trace.Line{Action: name, D: string(id), Vars: ts.vars}
	ts.t.Trace(&ts.line)
}
