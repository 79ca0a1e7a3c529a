package tracecheck

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/drainproof/drainproof/spec"
)

// Line is one trace line as written: the action's TLA+ name, its
// parameters (d: a dispatcher; m: a message, as a record of kind, epoch,
// liveness, count, closed; keep) and the observed variables after it.
type Line struct {
	Action string         `json:"action"`
	Params map[string]any `json:"params,omitempty"`
	Vars   map[string]any `json:"vars,omitempty"`
}

// MsgParam renders a model message as a trace's m parameter.
func MsgParam(m spec.Msg) map[string]any {
	return map[string]any{"kind": m.Kind.String(), "epoch": int(m.Epoch), "liveness": m.Liveness.String(),
		"count": int(m.Count), "closed": m.Closed}
}

// Write writes a trace: the header, then one line per element of lines.
func Write(w io.Writer, h Header, lines []Line) error {
	enc := json.NewEncoder(w)
	if err := enc.Encode(h); err != nil {
		return err
	}
	for i := range lines {
		if err := enc.Encode(&lines[i]); err != nil {
			return err
		}
	}
	return nil
}

// Observe returns the values of the named variables of s as a trace line
// spells them (unknown or unobservable names are skipped).
func Observe(m *spec.Model, s *spec.State, names []string) map[string]any {
	out := map[string]any{}
	ds, bs := m.Config().Dispatchers, m.Config().Brokers
	for _, name := range names {
		for vi := range varTable {
			vd := &varTable[vi]
			if vd.name != name || (vd.kind == kUnknown && vd.dom == domScalar) {
				continue
			}
			switch vd.dom {
			case domScalar:
				out[name] = renderValue(vd.kind, vd.names, getVar(s, uint8(vi), 0), bs)
			case domDisp, domBroker:
				keys := ds
				if vd.dom == domBroker {
					keys = bs
				}
				fn := map[string]any{}
				for i, k := range keys {
					fn[k] = renderValue(vd.kind, vd.names, getVar(s, uint8(vi), i), bs)
				}
				out[name] = fn
			case domRecord:
				rec := map[string]any{}
				for f, fd := range vd.fields {
					rec[fd.name] = renderValue(fd.kind, fd.names, getVar(s, uint8(vi), f), bs)
				}
				out[name] = rec
			}
		}
	}
	return out
}

// renderValue returns value v of the given kind as a trace spells it.
func renderValue(kind varKind, names []string, v int8, brokers []string) any {
	switch kind {
	case kBool:
		return v == 1
	case kEnum:
		if int(v) >= 0 && int(v) < len(names) {
			return names[v]
		}
	case kBroker:
		if v == spec.NoBroker {
			return "none"
		}
		return brokers[v]
	case kBrokers:
		set := []string{}
		for i, b := range brokers {
			if v&(1<<i) != 0 {
				set = append(set, b)
			}
		}
		return set
	}
	return int(v)
}

// ActorVars lists the variables the process that takes action observes
// (the trace a faithful implementation writes after that action).
func ActorVars(action string) []string {
	for _, g := range actorVars {
		if strings.HasPrefix(action, g.prefix) {
			return g.vars
		}
	}
	return nil
}

// Generate walks m at random from its initial state for up to steps steps
// (seeded) and returns the trace of the walk: one line per step the
// implementation would see, with the actor's variables; environment steps
// (message losses) are left out, and receives do not say whether the
// network kept a copy. A walk stops early at a deadlock. Used for tests,
// benchmarks and the TLC parity corpus.
func Generate(m *spec.Model, seed uint64, steps int) ([]Line, error) {
	var out []Line
	err := GenerateFunc(m, seed, steps, func(l Line) error {
		out = append(out, l)
		return nil
	})
	return out, err
}

// GenerateFunc is Generate, passing each line to emit as it is generated
// instead of keeping them (a walk too long to hold).
func GenerateFunc(m *spec.Model, seed uint64, steps int, emit func(Line) error) error {
	return GenerateWithout(m, seed, steps, nil, emit)
}

// GenerateWithout is GenerateFunc on a guided walk: one that never takes
// the actions named in skip (their TLA+ names; a name that is not an
// action of the model is an error). A crash restart of T's process is
// enabled at almost every step, so a walk of GenerateFunc restarts T
// under every drain and never reaches an UpgradeRestart; skipping
// NodeCrashRestart lets the coordinator's drain of T complete, and the
// walk goes on through the upgrade restart and past it. With nothing
// skipped it is GenerateFunc: the same walk for the same seed.
func GenerateWithout(m *spec.Model, seed uint64, steps int, skip []string, emit func(Line) error) error {
	return GenerateGuided(m, seed, steps, Guide{Skip: skip}, emit)
}

// Guide steers a walk of GenerateGuided: it leaves the actions of Skip
// out until it has taken Until (all the walk when Until is empty).
// Guide{Skip: {"NodeCrashRestart"}, Until: "UpgradeRestart"} drains and
// upgrades T, then crash-restarts it as an unguided walk would: a run
// that crosses an upgrade restart and then a crash restart.
type Guide struct {
	Skip  []string // TLA+ names of actions the walk does not take
	Until string   // the action after which Skip no longer holds ("": never)
}

// GenerateGuided is GenerateFunc on the walk g guides (see Guide); every
// name g gives must be an action of the model. With an empty g it is
// GenerateFunc: the same walk for the same seed.
func GenerateGuided(m *spec.Model, seed uint64, steps int, g Guide, emit func(Line) error) error {
	acts, err := bindActions(m)
	if err != nil {
		return err
	}
	isAction := func(name string) bool {
		return slices.ContainsFunc(acts, func(a actionDef) bool { return a.name == name })
	}
	skipped := map[string]bool{}
	for _, name := range g.Skip {
		if !isAction(name) {
			return fmt.Errorf("tracecheck: no action %q to skip", name)
		}
		skipped[name] = true
	}
	if g.Until != "" && !isAction(g.Until) {
		return fmt.Errorf("tracecheck: no action %q to skip until", g.Until)
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x5bd1e995))
	type succ struct {
		line Line
		env  bool
		t    spec.State
	}
	s := m.InitState()
	normalize(&s)
	for n := 0; n < steps; {
		var all []succ
		for ai := range acts {
			a := &acts[ai]
			if skipped[a.name] {
				continue
			}
			enabledSteps(m, a, &s, func(t spec.State, params map[string]any) {
				normalize(&t)
				all = append(all, succ{Line{Action: a.name, Params: params}, a.env, t})
			})
		}
		if len(all) == 0 {
			break
		}
		pick := all[rng.IntN(len(all))]
		s = pick.t
		if g.Until != "" && pick.line.Action == g.Until {
			clear(skipped) // the guide's part of the walk is over
		}
		if pick.env {
			continue
		}
		pick.line.Vars = Observe(m, &s, ActorVars(pick.line.Action))
		if err := emit(pick.line); err != nil {
			return err
		}
		n++
	}
	return nil
}

// enabledSteps calls add for every step of action a from s, with the
// parameters a trace line gives it.
func enabledSteps(m *spec.Model, a *actionDef, s *spec.State, add func(t spec.State, params map[string]any)) {
	ds, bs := m.Config().Dispatchers, m.Config().Brokers
	switch a.shape {
	case shapeNullary:
		if t, ok := a.nullary(s); ok {
			var params map[string]any
			if sent, ok := newMsg(m, s, &t); ok {
				params = map[string]any{"m": MsgParam(sent)}
			}
			add(t, params)
		}
	case shapeIndex:
		keys := ds
		if a.param == "b" {
			keys = bs
		}
		for i := range keys {
			if t, ok := a.index(s, i); ok {
				add(t, map[string]any{a.param: keys[i]})
			}
		}
	case shapePair:
		for d := range ds {
			for b := range bs {
				if t, ok := a.pair(s, d, b); ok {
					add(t, map[string]any{"d": ds[d], "b": bs[b]})
				}
			}
		}
	case shapeVersion:
		for _, v := range m.Config().Versions {
			ver, _ := spec.ParseVersion(v)
			if t, ok := a.version(s, ver); ok {
				add(t, map[string]any{"v": v})
			}
		}
	case shapeRecv, shapeMsg:
		msgSteps(m, a, s, add)
	}
}

// msgSteps calls add for every step of the message action a from s: per
// message in flight, and for a receive with and without keeping a copy.
func msgSteps(m *spec.Model, a *actionDef, s *spec.State, add func(t spec.State, params map[string]any)) {
	for i := 0; i < int(s.NetLen); i++ {
		id := s.Net[i]
		for _, keep := range [2]bool{false, true} {
			var t spec.State
			var ok bool
			if a.shape == shapeMsg {
				if keep {
					break
				}
				t, ok = a.msg(s, id)
			} else {
				t, ok = a.recv(s, id, keep)
			}
			if !ok {
				continue
			}
			params := map[string]any{"m": MsgParam(m.Msg(id))}
			if a.shape == shapeRecv {
				if r, ok := replyOf(m, a, s, id); ok {
					params["reply"] = MsgParam(r)
				}
			}
			add(t, params)
		}
	}
}

// replyOf returns the message a receive of id from s answers with, if
// one: the receive is taken from s with id alone in flight, so the reply
// is whatever else is in flight after it.
func replyOf(m *spec.Model, a *actionDef, s *spec.State, id uint16) (spec.Msg, bool) {
	u := *s
	u.NetLen = 1
	u.Net[0] = id
	for i := 1; i < len(u.Net); i++ {
		u.Net[i] = netPad
	}
	t, ok := a.recv(&u, id, false)
	if !ok || t.NetLen == 0 {
		return spec.Msg{}, false
	}
	return m.Msg(t.Net[0]), true
}

// newMsg returns the message the step s -> t sent, if one.
func newMsg(m *spec.Model, s, t *spec.State) (spec.Msg, bool) {
	for i := 0; i < int(t.NetLen); i++ {
		if !netHas(s, t.Net[i]) {
			return m.Msg(t.Net[i]), true
		}
	}
	return spec.Msg{}, false
}

// TraceConfig returns the constants a trace of an implementation is
// checked against: cfg with the largest bounds the Go transcription
// holds (epochs, counts, messages in flight), since a trace is one run,
// not a search.
func TraceConfig(cfg spec.Config) spec.Config {
	cfg.MaxEpoch, cfg.MaxReg, cfg.MaxMsgs = spec.MaxEpochLimit, spec.MaxRegLimit, spec.MaxMsgsLimit
	return cfg
}

// String renders l as its JSON line.
func (l Line) String() string {
	b, err := json.Marshal(l)
	if err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return string(b)
}
