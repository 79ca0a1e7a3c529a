package tracecheck

// This file is the one place that knows package spec's shapes: which TLA+
// variables a trace line may observe and how to read each off a
// spec.State, which actions take which parameters, and which actions are
// environment steps the implementation cannot see. The actions themselves
// are found by name on *spec.Model (reflection, once per Checker), so a new
// action of a known shape needs no code here beyond its parameter names.

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/drainproof/drainproof/spec"
)

// varKind is how a variable's value is spelt in a trace line.
type varKind uint8

const (
	kInt     varKind = iota // a JSON integer (None is -1)
	kLive                   // a liveness string ("ALIVE", …, "NONE")
	kBool                   // a JSON boolean
	kPcFn                   // an object: dispatcher -> pc string
	kBoolFn                 // an object: dispatcher -> boolean
	kRecord                 // an object of named fields (each a kInt or kBool)
	kUnknown                // not observable in a trace
)

// varDef is one TLA+ variable a line may observe; getVar reads it.
type varDef struct {
	name string
	kind varKind
	// fields names a record's fields with their kinds (kInt or kBool).
	fields []fieldDef
}

type fieldDef struct {
	name string
	kind varKind
}

func b8(b bool) int8 {
	if b {
		return 1
	}
	return 0
}

func bitOf(mask uint8, d int) int8 { return int8(mask>>d) & 1 }

// varTable lists the variables of DrainRegistration.tla in the module's
// order. registrations (the collectors' budget, abstracted away in a
// trace: see normalize) and net (the environment's) are not observable.
var varTable = []varDef{
	{name: "epoch", kind: kInt},
	{name: "liveness", kind: kLive},
	{name: "admissionClosed", kind: kBool},
	{name: "pc", kind: kPcFn},
	{name: "count", kind: kInt},
	{name: "subscribed", kind: kBoolFn},
	{name: "schemaRef", kind: kBoolFn},
	{name: "removed", kind: kBoolFn},
	{name: "registrations", kind: kUnknown},
	{name: "coordEpoch", kind: kInt},
	{name: "coordLiveness", kind: kLive},
	{name: "coordCount", kind: kInt},
	{name: "work", kind: kInt},
	{name: "drainedEpoch", kind: kInt},
	{name: "cache", kind: kRecord, fields: []fieldDef{{"epoch", kInt}, {"count", kInt}, {"closed", kBool}}},
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
		return int8(s.Liveness)
	case 2:
		return b8(s.AdmissionClosed)
	case 3:
		return int8(s.Pc[idx])
	case 4:
		return s.Count
	case 5:
		return bitOf(s.Subscribed, idx)
	case 6:
		return bitOf(s.SchemaRef, idx)
	case 7:
		return bitOf(s.Removed, idx)
	case 9:
		return s.CoordEpoch
	case 10:
		return int8(s.CoordLiveness)
	case 11:
		return s.CoordCount
	case 12:
		return s.Work
	case 13:
		return s.DrainedEpoch
	case 14:
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
// MaxEpoch: a trace past it is incomplete, not rejected).
func isEpoch(ck check) bool {
	switch varTable[ck.v].name {
	case "epoch", "coordEpoch", "drainedEpoch":
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
var envActions = map[string]bool{"NetLose": true}

// netPad is the value spec.State pads its unused network slots with.
const netPad = 0xFFFF

// loseAction is the environment's loss of one message, NetLose(m).
const loseAction = "NetLose"

// indexParams names the parameter of an action of shape
// func(*State, int) (State, bool); every such action of the current model
// takes a dispatcher, named d.
var indexParams = map[string]string{}

// actionShape is the Go signature of an action method.
type actionShape uint8

const (
	shapeNullary actionShape = iota // A(s)
	shapeIndex                      // A(s, d)
	shapeRecv                       // A(s, m, keep)
	shapeMsg                        // A(s, m)
)

// actionDef is one TLA+ action, bound to its method of a *spec.Model.
type actionDef struct {
	name    string
	shape   actionShape
	env     bool
	param   string // shapeIndex: the parameter's name
	nullary func(*spec.State) (spec.State, bool)
	index   func(*spec.State, int) (spec.State, bool)
	recv    func(*spec.State, uint16, bool) (spec.State, bool)
	msg     func(*spec.State, uint16) (spec.State, bool)
}

// bindActions finds every action of spec.ActionNames on m. The methods
// are taken from the type, not the value, so that calls through the
// bound closures are direct calls, not reflective ones.
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
			a.index = func(s *spec.State, d int) (spec.State, bool) { return f(m, s, d) }
			if p, ok := indexParams[name]; ok {
				a.param = p
			}
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

var (
	livenessNames = enumNames(spec.Liveness.String)
	pcNames       = enumNames(spec.Pc.String)
	kindNames     = enumNames(spec.Kind.String)
)

// actorVars groups the variables by the process that can observe them,
// keyed by the prefix of an action's name: what Generate records after a
// step of that actor.
var actorVars = []struct {
	prefix string
	vars   []string
}{
	{"Collector", []string{"epoch", "liveness", "admissionClosed", "pc", "count", "subscribed", "schemaRef", "removed"}},
	{"Broker", []string{"epoch", "liveness", "admissionClosed", "pc", "count", "subscribed", "schemaRef", "removed"}},
	{"Node", []string{"epoch", "liveness", "admissionClosed", "pc", "count", "subscribed", "schemaRef", "removed"}},
	{"Service", []string{"epoch", "liveness", "admissionClosed", "count"}},
	{"UpgradeRestart", []string{"epoch", "liveness", "admissionClosed", "pc", "count", "subscribed", "schemaRef", "removed"}},
	{"Coord", []string{"coordEpoch", "coordLiveness", "coordCount", "work", "drainedEpoch"}},
	{"Maintainer", []string{"work"}},
	{"LogCoord", []string{"cache"}},
}
