package tracecheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/spec"
)

// The field-mutation test: every field of every kind of trace line (every
// action, each of its parameters, each observable variable, each field of
// a message) is compared with the model. For each, traces whose lines
// observe every variable are mutated one field at a time to another valid
// value, and each mutant must be rejected at the mutated line: a
// validator that skips a field lets that field's mutants through and
// fails here, naming the action and the field.

// laterLine lists the fields whose only effect is on the network, which
// no line observes: a REGISTER's d and b (the model's regs). A mutant of
// one is a different REGISTER, which the model may send and lose, so
// the trace is valid up to the line that receives the original one, and
// is rejected there. The test requires each entry to be needed.
var laterLine = map[string]string{
	"CollectorSendRegister params.d": "only regs, which no line observes, changes",
	"CollectorSendRegister params.b": "only regs, which no line observes, changes",
}

// notMutated lists the fields the test does not mutate, with why.
var notMutated = map[string]string{
	// keep says the network duplicated the message received: a copy left
	// in flight that nothing receives is a valid behaviour of the model
	// (and keep=false where a later line receives the message again
	// is rejected at that later line); it is an environment choice the
	// line may state, not a value of the model's state.
	"params.keep": "an environment choice, not a model value",
}

// observableVars lists every variable a line may observe.
func observableVars() []string {
	var out []string
	for _, vd := range varTable {
		if vd.kind != kUnknown {
			out = append(out, vd.name)
		}
	}
	return out
}

// fullWalk is Generate with every observable variable on every line.
func fullWalk(t *testing.T, m *spec.Model, seed uint64, steps int) []Line {
	t.Helper()
	acts, err := bindActions(m)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b9))
	type succ struct {
		line Line
		env  bool
		t    spec.State
	}
	all := observableVars()
	s := m.InitState()
	normalize(&s)
	var out []Line
	for len(out) < steps {
		var next []succ
		for ai := range acts {
			a := &acts[ai]
			enabledSteps(m, a, &s, func(u spec.State, params map[string]any) {
				normalize(&u)
				next = append(next, succ{Line{Action: a.name, Params: params}, a.env, u})
			})
		}
		if len(next) == 0 {
			break
		}
		pick := next[rng.IntN(len(next))]
		s = pick.t
		if pick.env {
			continue
		}
		pick.line.Vars = Observe(m, &s, all)
		out = append(out, pick.line)
	}
	return out
}

// mutant is one field of one line changed to another valid value.
type mutant struct {
	field string // e.g. "vars.pc.d1", "params.m.epoch"
	key   string // the action and the field without its key: "BrokerAdmit vars.pc"
	line  Line
}

// mutants lists every mutant of ln under cfg whose key want accepts.
func mutants(cfg spec.Config, ln Line, want func(key string) bool) []mutant {
	var out []mutant
	add := func(field, keyField string, change func(l *Line)) {
		if !want(ln.Action + " " + keyField) {
			return
		}
		l := cloneLine(ln)
		change(&l)
		out = append(out, mutant{field: field, key: ln.Action + " " + keyField, line: l})
	}
	others := func(vals []string, v any) []any {
		var r []any
		for _, x := range vals {
			if x != v {
				r = append(r, x)
			}
		}
		return r
	}
	msgAlts := func(f string, v any) []any {
		switch f {
		case "kind":
			return others(kindNames, v)
		case "liveness":
			return others(livenessNames, v)
		case "closed":
			return []any{!v.(bool)}
		}
		return intAlts(v.(int), -1, max(cfg.MaxEpoch, cfg.MaxReg))
	}
	for _, p := range sortedKeys(ln.Params) {
		switch p {
		case "d":
			for _, x := range others(cfg.Dispatchers, ln.Params[p]) {
				add("params.d", "params.d", func(l *Line) { l.Params["d"] = x })
			}
		case "b":
			for _, x := range others(cfg.Brokers, ln.Params[p]) {
				add("params.b", "params.b", func(l *Line) { l.Params["b"] = x })
			}
		case "v":
			for _, x := range others(cfg.Versions, ln.Params[p]) {
				add("params.v", "params.v", func(l *Line) { l.Params["v"] = x })
			}
		case "m", "reply":
			msg := ln.Params[p].(map[string]any)
			for _, f := range sortedKeys(msg) {
				for _, x := range msgAlts(f, msg[f]) {
					add("params."+p+"."+f, "params."+p+"."+f, func(l *Line) { l.Params[p].(map[string]any)[f] = x })
				}
			}
		}
	}
	for _, name := range sortedKeys(ln.Vars) {
		vd := &varTable[varIdx.find([]byte(name))]
		switch val := ln.Vars[name].(type) {
		case map[string]any:
			for _, k := range sortedKeys(val) {
				var alts []any
				if vd.dom == domRecord {
					for f, fd := range vd.fields {
						if fd.name == k {
							alts = valueAlts(cfg, vd, f, fd.kind, fd.names, val[k])
						}
					}
				} else {
					alts = valueAlts(cfg, vd, -1, vd.kind, vd.names, val[k])
				}
				keyField := "vars." + name
				if vd.dom == domRecord {
					keyField += "." + k
				}
				for _, x := range alts {
					add("vars."+name+"."+k, keyField, func(l *Line) { l.Vars[name].(map[string]any)[k] = x })
				}
			}
		default:
			for _, x := range valueAlts(cfg, vd, -1, vd.kind, vd.names, val) {
				add("vars."+name, "vars."+name, func(l *Line) { l.Vars[name] = x })
			}
		}
	}
	return out
}

// valueAlts lists the other valid values of a variable's element or
// field (as Observe spells them).
func valueAlts(cfg spec.Config, vd *varDef, f int, kind varKind, names []string, v any) []any {
	var out []any
	switch kind {
	case kBool:
		return []any{!v.(bool)}
	case kEnum:
		for _, x := range names {
			if x != v {
				out = append(out, x)
			}
		}
		return out
	case kBroker:
		for _, x := range append([]string{"none"}, cfg.Brokers...) {
			if x != v {
				out = append(out, x)
			}
		}
		return out
	case kBrokers:
		set := v.([]string)
		for _, b := range cfg.Brokers {
			if slices.Contains(set, b) {
				out = append(out, slices.DeleteFunc(slices.Clone(set), func(x string) bool { return x == b }))
			} else {
				out = append(out, append(slices.Clone(set), b))
			}
		}
		return out
	}
	hi := cfg.MaxReg
	if isEpoch(check{v: uint8(varIdx.find([]byte(vd.name))), idx: int8(max(f, 0))}) {
		hi = cfg.MaxEpoch
	}
	return intAlts(v.(int), -1, hi)
}

// intAlts is v-1 and v+1, kept within lo..hi.
func intAlts(v, lo, hi int) []any {
	var out []any
	if v-1 >= lo {
		out = append(out, v-1)
	}
	if v+1 <= hi {
		out = append(out, v+1)
	}
	if v < -1 { // a count below None: -MaxReg..MaxReg
		out = append(out, v-1)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// cloneLine deep-copies a line by a JSON round trip (numbers as int).
func cloneLine(l Line) Line {
	b, err := json.Marshal(l)
	if err != nil {
		panic(err)
	}
	var out Line
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		panic(err)
	}
	return Line{Action: out.Action, Params: intsOf(out.Params).(map[string]any), Vars: intsOf(out.Vars).(map[string]any)}
}

// intsOf turns json.Numbers into ints and []any of strings into []string.
func intsOf(v any) any {
	switch x := v.(type) {
	case nil:
		return map[string]any{}
	case json.Number:
		n, _ := x.Int64()
		return int(n)
	case map[string]any:
		for k, e := range x {
			x[k] = intsOf(e)
		}
		return x
	case []any:
		out := []string{}
		for _, e := range x {
			out = append(out, e.(string))
		}
		return out
	}
	return v
}

// mutationCorpus is the traces the test mutates: walks of the heartbeat
// and logcoord transports, with two brokers and both versions, so that
// every action of the model (but the environment's and the bug-only
// BrokerInactivityCleanup) occurs.
func mutationCorpus(t *testing.T) map[string][]Line {
	t.Helper()
	base := TraceConfig(spec.DefaultConfig())
	base.Brokers = []string{"b1", "b2"}
	base.Versions = []string{"new", "legacy"}
	lc := base
	lc.Transport = spec.TransportLogCoord
	dd := base
	dd.Bugs = spec.DoubleDecrement
	out := map[string][]Line{}
	for name, cfg := range map[string]spec.Config{"heartbeat": base, "logcoord": lc, "doubledecrement": dd} {
		m, err := spec.New(cfg)
		require.NoError(t, err)
		seeds := uint64(8)
		if name == "logcoord" {
			// A known answer needs the query sent and taken while an
			// entry is cached: rarer in a random walk.
			seeds = 16
		}
		for seed := uint64(1); seed <= seeds; seed++ {
			out[fmt.Sprintf("%s/%d", name, seed)] = fullWalk(t, m, seed, 200)
		}
	}
	return out
}

func configOf(t *testing.T, name string) spec.Config {
	t.Helper()
	cfg := TraceConfig(spec.DefaultConfig())
	cfg.Brokers = []string{"b1", "b2"}
	cfg.Versions = []string{"new", "legacy"}
	switch strings.Split(name, "/")[0] {
	case "logcoord":
		cfg.Transport = spec.TransportLogCoord
	case "doubledecrement":
		cfg.Bugs = spec.DoubleDecrement
	}
	return cfg
}

// encodeLines writes a trace and returns its lines, the header first,
// each with its newline.
func encodeLines(t *testing.T, cfg spec.Config, lines []Line) [][]byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, HeaderFor(cfg, "field mutation"), lines))
	out := bytes.SplitAfter(buf.Bytes(), []byte("\n"))
	return out[:len(out)-1] // after the last newline: nothing
}

// fieldMutationSurvivors runs every mutant (up to perKey per action and
// field) and returns, per action and field, what went wrong: a mutant
// accepted, incomplete, or rejected at another line than its own. It
// also returns the action kinds met and the keys that needed laterLine.
func fieldMutationSurvivors(t *testing.T, perKey int) (survivors map[string]string, kinds map[string]bool, usedLater map[string]bool, tried int) {
	t.Helper()
	survivors, kinds, usedLater = map[string]string{}, map[string]bool{}, map[string]bool{}
	done := map[string]int{}
	corpus := mutationCorpus(t)
	for _, name := range sortedKeys(corpus) {
		lines := corpus[name]
		cfg := configOf(t, name)
		model, err := spec.New(cfg)
		require.NoError(t, err)
		enc := encodeLines(t, cfg, lines) // enc[0] is the header
		res, err := CheckBytes(bytes.Join(enc, nil), name, model, Options{})
		require.NoError(t, err)
		require.Equal(t, OK, res.Verdict, "%s: the unmutated trace: %s", name, res.Reason)
		acts, err := bindActions(model)
		require.NoError(t, err)
		shape := map[string]actionShape{}
		for _, a := range acts {
			shape[a.name] = a.shape
		}
		sent := map[string]bool{} // the messages the lines before i sent
		for i, ln := range lines {
			kinds[ln.Action] = true
			if i > 0 {
				prev := lines[i-1]
				if r, ok := prev.Params["reply"]; ok {
					sent[fmt.Sprint(r)] = true
				} else if m, ok := prev.Params["m"]; ok && shape[prev.Action] == shapeNullary {
					sent[fmt.Sprint(m)] = true
				}
			}
			for _, mu := range mutants(cfg, ln, func(key string) bool {
				_, skip := notMutated[strings.TrimPrefix(key, ln.Action+" ")]
				return !skip && done[key] < perKey
			}) {
				if equivalent(lines, i, mu, shape[ln.Action], sent) {
					continue
				}
				done[mu.key]++
				tried++
				// The trace up to the mutated line (the lines after it can only
				// keep more messages in flight), or all of it where the
				// rejection comes at the line that receives a REGISTER.
				mutated := slices.Clone(enc[:i+2])
				if laterLine[mu.key] != "" {
					mutated = slices.Clone(enc)
				}
				mutated[i+1] = encodeLines(t, cfg, []Line{mu.line})[1]
				res, err := CheckBytes(bytes.Join(mutated, nil), name, model, Options{})
				want := i + 2 // the header is line 1
				switch {
				case err != nil:
					survivors[mu.key] = fmt.Sprintf("%s line %d %s: input error %v", name, want, mu.field, err)
				case res.Verdict == Rejected && res.Line == want:
				case res.Verdict == Rejected && res.Line > want && laterLine[mu.key] != "":
					usedLater[mu.key] = true
				default:
					survivors[mu.key] = fmt.Sprintf("%s line %d %s -> %v: %s at line %d (%s)", name, want, mu.field,
						valueAt(mu.line, mu.field), res.Verdict, res.Line, mu.line)
				}
			}
		}
	}
	return survivors, kinds, usedLater, tried
}

// equivalent reports whether mutant mu of lines[i] may be a valid trace,
// so that no validator could reject it (sent: the messages the lines
// before i sent):
//   - a receive of a message an earlier line sent: a duplicate or a
//     delayed copy of it may be in flight;
//   - a reply changed to a message an earlier line sent, where the reply
//     the model sends was sent before too: both may be in flight, and a
//     reply already in flight adds nothing to the network (a set);
//   - a REGISTER sent to another dispatcher or broker, where no later line
//     receives the original before it is sent again (the model may lose
//     either), or an earlier copy of it, not yet received, is in flight.
func equivalent(lines []Line, i int, mu mutant, sh actionShape, sent map[string]bool) bool {
	ln := lines[i]
	switch {
	case (sh == shapeRecv || sh == shapeMsg) && strings.HasPrefix(mu.field, "params.m."):
		return sent[fmt.Sprint(mu.line.Params["m"])]
	case strings.HasPrefix(mu.field, "params.reply."):
		return sent[fmt.Sprint(ln.Params["reply"])] && sent[fmt.Sprint(mu.line.Params["reply"])]
	case ln.Action == sendRegAction:
		for j := i - 1; j >= 0; j-- {
			if e := lines[j]; e.Params["d"] == ln.Params["d"] && e.Params["b"] == ln.Params["b"] {
				if e.Action == sendRegAction {
					return true // an earlier copy, not yet received, may be the one received
				}
				break
			}
		}
		for _, later := range lines[i+1:] {
			if later.Params["d"] == ln.Params["d"] && later.Params["b"] == ln.Params["b"] {
				return later.Action != recvRegAction // sent again before it is received
			}
		}
		return true
	}
	return false
}

// valueAt is the mutated value, for the message.
func valueAt(l Line, field string) any {
	parts := strings.Split(field, ".")
	var cur any = map[string]any{"params": l.Params, "vars": l.Vars}
	for _, p := range parts {
		m, ok := cur.(map[string]any)
		if !ok {
			return cur
		}
		cur = m[p]
	}
	return cur
}

func TestEveryFieldOfEveryLineIsCompared(t *testing.T) {
	perKey := 2
	if raceEnabled {
		perKey = 1
	}
	survivors, kinds, usedLater, tried := fieldMutationSurvivors(t, perKey)
	for _, a := range spec.ActionNames() {
		if !envActions[a] && !kinds[a] {
			t.Errorf("no trace of the corpus has a line %s: its fields are not mutated", a)
		}
	}
	for _, k := range sortedKeys(survivors) {
		t.Errorf("%s survives: %s", k, survivors[k])
	}
	for k := range laterLine {
		require.True(t, usedLater[k], "laterLine lists %s, which no mutant needed: remove it", k)
	}
	t.Logf("%d mutants of %d line kinds, every one rejected at its line", tried, len(kinds))
}
