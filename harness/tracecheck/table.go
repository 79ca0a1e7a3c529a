package tracecheck

// This file is the one place that knows package spec's shapes: which TLA+
// variables a trace line may observe and how to read each off a
// spec.State, which actions take which parameters, and which actions are
// environment steps the implementation cannot see. The actions themselves
// are found by name on *spec.Model (reflection, once per model: boundActions), so a new
// action of a known shape needs no code here beyond its parameter names.

import (
	"fmt"
	"github.com/drainproof/drainproof/tla/names"
	"reflect"
	"strings"
	"sync"

	"github.com/drainproof/drainproof/spec"
)

// varKind is how a value is spelt in a trace line.
type varKind uint8

const (
	kInt     varKind = iota // a JSON integer (None is -1)
	kBool                   // a JSON boolean
	kEnum                   // a string of a list of names (index in the list)
	kBroker                 // a broker's name, or "none" (-1)
	kBrokers                // an array of brokers' names (a bitmask)
	kUnknown                // not observable in a trace
)

// varDom is the domain of a variable: a scalar, a function of the
// dispatchers or of the brokers, or a record.
type varDom uint8

const (
	domScalar varDom = iota
	domDisp
	domBroker
	domRecord
)

// varDef is one TLA+ variable a line may observe; getVar reads it.
type varDef struct {
	name  string
	dom   varDom
	kind  varKind
	names []string // kEnum
	// fields names a record's fields with their kinds.
	fields []fieldDef
}

type fieldDef struct {
	name  string
	kind  varKind
	names []string
}

// elem returns the kind (and enum names) of element or field idx.
func (vd *varDef) elem(idx int) (varKind, []string) {
	if vd.dom == domRecord {
		return vd.fields[idx].kind, vd.fields[idx].names
	}
	return vd.kind, vd.names
}

func b8(b bool) int8 {
	if b {
		return 1
	}
	return 0
}

func bitOf(mask uint8, d int) int8 { return int8(mask>>d) & 1 }

// The enumerations of the model, spelt as spec spells them.
var (
	livenessNames = enumNames(spec.Liveness.String)
	pcNames       = enumNames(spec.Pc.String)
	kindNames     = enumNames(spec.Kind.String)
	versionNames  = enumNames(spec.Version.String)
	phaseNames    = enumNames(spec.Phase.String)
)

// varTable lists the variables of DrainRegistration.tla in the module's
// order; getVar reads them by index. registrations (the collectors'
// budget, abstracted away in a trace: see normalize), regs and net (the
// environment's) are not observable.
var varTable = []varDef{
	{name: "epoch", kind: kInt},
	{name: "version", kind: kEnum, names: versionNames},
	{name: "liveness", kind: kEnum, names: livenessNames},
	{name: "closing", kind: kBool},
	{name: "gateClosed", dom: domBroker, kind: kBool},
	{name: "admissionClosed", kind: kBool},
	{name: "pc", dom: domDisp, kind: kEnum, names: pcNames},
	{name: "brk", dom: domDisp, kind: kBroker},
	{name: "count", dom: domBroker, kind: kInt},
	{name: "subscribed", dom: domDisp, kind: kBool},
	{name: "schemaRef", dom: domDisp, kind: kBool},
	{name: "removed", dom: domDisp, kind: kBool},
	{name: "sample", dom: domRecord, fields: []fieldDef{{"phase", kEnum, phaseNames}, {"liveness", kEnum, livenessNames},
		{"closed", kBool, nil}, {"read", kBrokers, nil}, {"sum", kInt, nil}}},
	{name: "lastReport", dom: domRecord, fields: []fieldDef{{"count", kInt, nil}, {"closed", kBool, nil}}},
	{name: "registrations", kind: kUnknown},
	{name: "regs", kind: kUnknown},
	{name: "coordEpoch", kind: kInt},
	{name: "coordVersion", kind: kEnum, names: versionNames},
	{name: "coordLiveness", kind: kEnum, names: livenessNames},
	{name: "coordCount", kind: kInt},
	{name: "work", kind: kInt},
	{name: "drainedEpoch", kind: kInt},
	{name: "legacyEpoch", kind: kInt},
	{name: "cache", dom: domRecord, fields: []fieldDef{{"epoch", kInt, nil}, {"count", kInt, nil}, {"closed", kBool, nil}}},
	{name: "net", kind: kUnknown},
}

// getVar reads variable v of varTable (element or field idx) off s, as a
// small integer. It is a switch, not a table of closures, so that s does
// not escape.
func getVar(s *spec.State, v uint8, idx int) int8 {
	switch v {
	case 0:
		return s.Epoch
	case 1:
		return int8(s.Version)
	case 2:
		return int8(s.Liveness)
	case 3:
		return b8(s.Closing)
	case 4:
		return bitOf(s.GateClosed, idx)
	case 5:
		return b8(s.AdmissionClosed)
	case 6:
		return int8(s.Pc[idx])
	case 7:
		return s.Brk[idx]
	case 8:
		return s.Count[idx]
	case 9:
		return bitOf(s.Subscribed, idx)
	case 10:
		return bitOf(s.SchemaRef, idx)
	case 11:
		return bitOf(s.Removed, idx)
	case 12:
		switch idx {
		case 0:
			return int8(s.Sample.Phase)
		case 1:
			return int8(s.Sample.Liveness)
		case 2:
			return b8(s.Sample.Closed)
		case 3:
			return int8(s.Sample.Read)
		}
		return s.Sample.Sum
	case 13:
		if idx == 0 {
			return s.LastReport.Count
		}
		return b8(s.LastReport.Closed)
	case 16:
		return s.CoordEpoch
	case 17:
		return int8(s.CoordVersion)
	case 18:
		return int8(s.CoordLiveness)
	case 19:
		return s.CoordCount
	case 20:
		return s.Work
	case 21:
		return s.DrainedEpoch
	case 22:
		return s.LegacyEpoch
	case 23:
		switch idx {
		case 0:
			return s.Cache.Epoch
		case 1:
			return s.Cache.Count
		}
		return b8(s.Cache.Closed)
	}
	panic(fmt.Sprintf("tracecheck: variable %s is not observable", varTable[v].name))
}

// isEpoch reports whether check ck reads an epoch (bounded by
// MaxEpoch: a trace past it is rejected, as no state of the model has it).
func isEpoch(ck check) bool {
	switch varTable[ck.v].name {
	case "epoch", "coordEpoch", "drainedEpoch", "legacyEpoch":
		return true
	case "cache":
		return ck.idx == 0
	}
	return false
}

// normalize is the trace's view of a model state: the collectors' budget
// of REGISTER requests (MaxReg, a bound that only makes the model finite)
// is unbounded in a trace, so it is reset after every step. Without it a
// trace could hold no more than MaxReg registrations.
func normalize(s *spec.State) { s.Registrations = 0 }

// envActions are the environment's steps that no process sees: a trace
// never names them; the checker fills them in from the trace's future
// (see lookahead).
var envActions = map[string]bool{names.NetLose.String(): true, names.NetLoseRegister.String(): true}

// The environment's loss of one message, NetLose(m), and of one REGISTER,
// NetLoseRegister(d, b); the send and the receive of a REGISTER.
var (
	loseAction    = names.NetLose.String()
	loseRegAction = names.NetLoseRegister.String()
	sendRegAction = names.CollectorSendRegister.String()
	recvRegAction = names.ServiceRecvRegister.String()
)

// netPad is the value spec.State pads its unused network slots with.
const netPad = 0xFFFF

// indexParams names the parameter of an action of shape
// func(*State, int) (State, bool) that is not a dispatcher d.
var indexParams = map[string]string{names.ServiceCloseBroker.String(): "b", names.ServiceReadBroker.String(): "b"}

// actionShape is the Go signature of an action method.
type actionShape uint8

const (
	shapeNullary actionShape = iota // A(s)
	shapeIndex                      // A(s, d) or A(s, b)
	shapePair                       // A(s, d, b)
	shapeVersion                    // A(s, v)
	shapeRecv                       // A(s, m, keep)
	shapeMsg                        // A(s, m)
	shapeRefine                     // a refinement step (refine.go)
)

// actionDef is one TLA+ action, bound to its method of a *spec.Model.
type actionDef struct {
	name    string
	shape   actionShape
	env     bool
	param   string // shapeIndex: the parameter's name, d or b
	nullary func(*spec.State) (spec.State, bool)
	index   func(*spec.State, int) (spec.State, bool)
	pair    func(*spec.State, int, int) (spec.State, bool)
	version func(*spec.State, spec.Version) (spec.State, bool)
	recv    func(*spec.State, uint16, bool) (spec.State, bool)
	msg     func(*spec.State, uint16) (spec.State, bool)
}

// bindActions finds every action of spec.ActionNames on m. The methods
// are taken from the type, not the value, so that calls through the
// bound closures are direct calls, not reflective ones.
// bound remembers the actions bound to the models checked last (a run
// of many short traces has one or two models, and binding by reflection
// is a part of each trace's fixed cost).
var bound struct {
	sync.Mutex
	recent [4]struct {
		m    *spec.Model
		acts []actionDef
	}
	next int
}

// boundActions is bindActions(m), remembered for the last few models; the
// slice is shared and must not be written.
func boundActions(m *spec.Model) ([]actionDef, error) {
	bound.Lock()
	defer bound.Unlock()
	for i := range bound.recent {
		if r := &bound.recent[i]; r.m == m {
			return r.acts, nil
		}
	}
	acts, err := bindActions(m)
	if err != nil {
		return nil, err
	}
	r := &bound.recent[bound.next]
	r.m, r.acts = m, acts
	bound.next = (bound.next + 1) % len(bound.recent)
	return acts, nil
}

func bindActions(m *spec.Model) ([]actionDef, error) {
	rt := reflect.TypeOf(m)
	var out []actionDef
	for _, name := range spec.ActionNames() {
		meth, found := rt.MethodByName(name)
		if !found {
			return nil, fmt.Errorf("tracecheck: spec has no method for action %s", name)
		}
		a := actionDef{name: name, env: envActions[name]}
		switch f := meth.Func.Interface().(type) {
		case func(*spec.Model, *spec.State) (spec.State, bool):
			a.shape = shapeNullary
			a.nullary = func(s *spec.State) (spec.State, bool) { return f(m, s) }
		case func(*spec.Model, *spec.State, int) (spec.State, bool):
			a.shape, a.param = shapeIndex, "d"
			a.index = func(s *spec.State, i int) (spec.State, bool) { return f(m, s, i) }
			if p, ok := indexParams[name]; ok {
				a.param = p
			}
		case func(*spec.Model, *spec.State, int, int) (spec.State, bool):
			a.shape = shapePair
			a.pair = func(s *spec.State, d, b int) (spec.State, bool) { return f(m, s, d, b) }
		case func(*spec.Model, *spec.State, spec.Version) (spec.State, bool):
			a.shape = shapeVersion
			a.version = func(s *spec.State, v spec.Version) (spec.State, bool) { return f(m, s, v) }
		case func(*spec.Model, *spec.State, uint16, bool) (spec.State, bool):
			a.shape = shapeRecv
			a.recv = func(s *spec.State, id uint16, keep bool) (spec.State, bool) { return f(m, s, id, keep) }
		case func(*spec.Model, *spec.State, uint16) (spec.State, bool):
			a.shape = shapeMsg
			a.msg = func(s *spec.State, id uint16) (spec.State, bool) { return f(m, s, id) }
		default:
			return nil, fmt.Errorf("tracecheck: action %s has an unknown signature %s", name, meth.Type)
		}
		out = append(out, a)
	}
	return out, nil
}

// enumNames lists String() of the values 0, 1, … of an enumeration until
// the first that is not a name of the model (spelt "Type(n)").
func enumNames[T ~int8](str func(T) string) []string {
	var out []string
	for i := 0; i < 64; i++ {
		s, ok := name(str, T(i))
		if !ok || strings.HasSuffix(s, ")") {
			break
		}
		out = append(out, s)
	}
	return out
}

// name is str(v), false if str panics (an index past a table of names).
func name[T any](str func(T) string, v T) (s string, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return str(v), true
}

// The variables of T's process, by the part of it that observes them.
var (
	brokerVars  = []string{"pc", "brk", "count", "subscribed", "schemaRef", "removed"}
	serviceVars = []string{"closing", "gateClosed", "admissionClosed", "sample", "count"}
	nodeVars    = []string{"epoch", "version", "liveness", "sample"}
	restartVars = []string{"epoch", "version", "liveness", "closing", "gateClosed", "admissionClosed", "pc", "brk",
		"count", "subscribed", "schemaRef", "removed", "sample"}
)

// actorVars groups the variables by the process that can observe them,
// keyed by the prefix of an action's name: what Generate records after a
// step of that actor (what the implementation's emitters record).
var actorVars = []struct {
	prefix string
	vars   []string
}{
	{names.CollectorSendRegister.String(), nil},
	{"Collector", brokerVars},
	{"Broker", brokerVars},
	{names.ServiceRecvRegister.String(), append([]string{"closing"}, brokerVars...)},
	{"Service", serviceVars},
	{names.NodeCrashRestart.String(), restartVars},
	{"Node", nodeVars},
	{names.UpgradeRestart.String(), restartVars},
	{"Coord", []string{"coordEpoch", "coordVersion", "coordLiveness", "coordCount", "work", "drainedEpoch", "legacyEpoch"}},
	{"Maintainer", []string{"work"}},
	{"LogCoord", []string{"cache"}},
}
