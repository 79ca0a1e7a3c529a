package tracecheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/drainproof/drainproof/spec"
)

// SchemaVersion is the version of the trace format this package writes
// (docs/trace.md); it reads it and version 1 (the single-process format
// without stamps). A header naming another version is refused.
const SchemaVersion = 2

// Header is a trace's first line: the schema version, the model's
// constants the trace is to be checked against (TLA+ constant names, TLC
// values: integers, strings, sets as arrays) and where the trace comes
// from.
type Header struct {
	Trace  int            `json:"drainproof_trace"`
	Model  map[string]any `json:"model"`
	Source string         `json:"source,omitempty"`
	// Process names the process of a multi-process run whose lines the
	// trace holds, and After the process it succeeds (version 2): such a
	// trace is checked with the run's other traces (CheckRun).
	Process string `json:"process,omitempty"`
	After   string `json:"after,omitempty"`
	// Mapping names the refinement mapping the trace is validated with
	// ("" none; "sessions": a full run's, refine.go and docs/trace.md).
	Mapping string `json:"mapping,omitempty"`
}

// Config returns the spec configuration the header names.
func (h *Header) Config() (spec.Config, error) {
	var cfg spec.Config
	keys := make([]string, 0, len(h.Model))
	for k := range h.Model {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := cfg.SetConstant(k, jsonToTLC(h.Model[k])); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// jsonToTLC turns decoded JSON into the values spec.Config.SetConstant
// takes: integral numbers become int64.
func jsonToTLC(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonToTLC(e)
		}
		return out
	}
	return v
}

// HeaderFor returns the header of a trace checked against cfg.
func HeaderFor(cfg spec.Config, source string) Header {
	bugs := []string{}
	for _, n := range spec.BugNames() {
		if b, _ := spec.ParseBug(n); cfg.Bugs&b != 0 {
			bugs = append(bugs, n)
		}
	}
	// An empty set is [], never null (which no constant accepts).
	set := func(x []string) []string {
		if x == nil {
			return []string{}
		}
		return x
	}
	return Header{Trace: SchemaVersion, Source: source, Model: map[string]any{
		"Dispatchers": set(cfg.Dispatchers), "TableTriggers": set(cfg.TableTriggers), "Brokers": set(cfg.Brokers),
		"Versions": set(cfg.Versions), "MaxEpoch": cfg.MaxEpoch,
		"MaxReg": cfg.MaxReg, "MaxMsgs": cfg.MaxMsgs, "Transport": cfg.Transport, "Bugs": bugs,
	}}
}

// Verdict is the outcome of checking one trace.
type Verdict string

// The verdicts.
const (
	// OK: some behaviour of the model explains every line.
	OK Verdict = "ok"
	// Rejected: a line that no step explains (Result.Line).
	Rejected Verdict = "rejected"
	// Incomplete: a larger bound would explain the trace (Result.Reason
	// names it: --max-candidates, MaxReg, the int8 range of values), or
	// the run does what the model does not cover (a coordinator
	// restarted while its decision was outstanding; the reason says so).
	Incomplete Verdict = "incomplete"
)

// Result is the outcome of checking one trace.
type Result struct {
	File    string  `json:"file"`
	Verdict Verdict `json:"verdict"`
	// Lines is the number of action lines explained.
	Lines int `json:"lines"`
	// Line is the number (in the file) of the first line no step explains,
	// or the line the search stopped at; Text is that line.
	Line   int    `json:"line,omitempty"`
	Text   string `json:"text,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Process is the process that wrote the line (a multi-process run);
	// ProcessFile and ProcessLine are where the line is in that process's
	// own trace (CheckRun).
	Process     string `json:"process,omitempty"`
	ProcessFile string `json:"process_file,omitempty"`
	ProcessLine int    `json:"process_line,omitempty"`
	// Candidates are the states that agreed with every line before Line.
	Candidates []Candidate `json:"candidates,omitempty"`
	// MaxCandidates is the largest candidate set the search held.
	MaxCandidates int     `json:"max_candidates"`
	Seconds       float64 `json:"seconds"`
}

// Candidate is one state that explained the lines before the rejected
// one, with why it does not explain that line.
type Candidate struct {
	State []Var `json:"state"`
	// Enabled reports whether the line's action, with its parameters, is
	// enabled at State; Successors lists, for each step it has, the
	// observed variables that disagree.
	Enabled    bool        `json:"enabled"`
	Successors []Successor `json:"successors,omitempty"`
	// EnabledActions are the actions (environment steps aside) that have
	// a step from State with some parameters: what the model could do
	// there instead.
	EnabledActions []string `json:"enabled_actions,omitempty"`
}

// Var is a variable's value in TLA+ notation.
type Var struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Successor is one step of the line's action from a candidate.
type Successor struct {
	Disagree []Disagreement `json:"disagree"`
}

// Disagreement is one observed variable the model's step does not give.
type Disagreement struct {
	Var   string `json:"var"`
	Trace string `json:"trace"`
	Model string `json:"model"`
}

// InputError is a malformed trace: the file, the line number and what is
// wrong.
type InputError struct {
	File string
	Line int
	Msg  string
	// Err, if set, is the kind of input error (ErrUnnamedSend).
	Err error
}

// Error returns "file:line: what is wrong".
func (e *InputError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Unwrap returns the kind of input error, if any.
func (e *InputError) Unwrap() error { return e.Err }

// ErrUnnamedSend is the input error of a line whose action sends a
// message that the line does not name (no params.m). TLC's trace spec
// rejects such a line instead (its SentAsSaid: a line without m sends
// nothing); docs/trace.md, "A send without its message", says why the
// checker calls it an input error, and checker traceparity counts the
// two as agreeing.
var ErrUnnamedSend = errors.New("a send line does not name its message")

// maxShown bounds the candidates a rejection lists.
const maxShown = 8

// CheckFile checks the trace in the file at path; see Check.
func CheckFile(path string, model *spec.Model, opts Options) (Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Result{File: path}, &InputError{File: path, Msg: err.Error()}
	}
	return CheckBytes(data, path, model, opts)
}

// Check reads a trace (a header line, then one line per action) and
// checks it against model, or against the model its header names when
// model is nil. A malformed trace is an *InputError.
func Check(r io.Reader, name string, model *spec.Model, opts Options) (Result, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Result{File: name}, &InputError{File: name, Msg: err.Error()}
	}
	return CheckBytes(data, name, model, opts)
}

// CheckBytes checks the trace held in data; see Check.
func CheckBytes(data []byte, name string, model *spec.Model, opts Options) (Result, error) {
	start := time.Now()
	res := Result{File: name}
	text, rest := nextLine(data)
	model, mapping, err := headerModel(text, model)
	if err != nil {
		return res, &InputError{File: name, Line: 1, Msg: err.Error()}
	}
	c, err := NewChecker(model, opts)
	if err != nil {
		return res, err
	}
	if err := c.setMapping(mapping); err != nil {
		return res, &InputError{File: name, Line: 1, Msg: err.Error()}
	}
	buf := bufPool.Get().(*buffers)
	defer bufPool.Put(buf)
	lines, cut, err := c.compile(data, len(data)-len(rest), name, buf)
	if err != nil {
		return res, err
	}
	lookahead(lines)
	if err := c.search(data, lines, &res); err != nil {
		return res, err
	}
	if cut != nil && res.Verdict == OK {
		// Every line before the cut is explained; the cut line is in no
		// order of a run (or depends on a line a killed process lost).
		res.Line, res.Text = lineAt(data, cut.off)
		res.Process = cut.proc
		var lost *lostLine
		if errors.As(cut.err, &lost) {
			res.Verdict, res.Reason = Incomplete, "happens-before: "+cut.err.Error()
		} else {
			res.Verdict, res.Reason = Rejected, "happens-before: "+cut.err.Error()
		}
	}
	if res.Verdict != OK && res.Process == "" && res.Line > 0 {
		var st stamp
		if _, err := splitStamp([]byte(res.Text), &st); err == nil {
			res.Process = st.proc
		}
	}
	res.MaxCandidates = c.MaxCandidates()
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// headerModel reads the header line text and returns model, or the model
// the header names when model is nil, and the refinement mapping the
// header names ("" none).
func headerModel(text []byte, model *spec.Model) (*spec.Model, string, error) {
	if len(bytes.TrimSpace(text)) == 0 {
		return nil, "", errors.New("empty trace: no header line")
	}
	var h Header
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return nil, "", fmt.Errorf("bad header: %v", err)
	}
	if h.Trace != SchemaVersion && h.Trace != 1 {
		return nil, "", fmt.Errorf("trace schema version %d, this checker reads versions 1 and %d", h.Trace, SchemaVersion)
	}
	if h.Process != "" {
		return nil, "", fmt.Errorf("the trace of process %s of a multi-process run: check the run's directory (its traces merged)", h.Process)
	}
	if model != nil {
		return model, h.Mapping, nil
	}
	key, err := json.Marshal(h.Model) // sorted keys: equal models, equal keys
	if err != nil {
		return nil, "", fmt.Errorf("header: %v", err)
	}
	models.Lock()
	defer models.Unlock()
	for i := range models.recent {
		if r := &models.recent[i]; r.m != nil && r.key == string(key) {
			return r.m, h.Mapping, nil
		}
	}
	cfg, err := h.Config()
	if err != nil {
		return nil, "", fmt.Errorf("header: %v", err)
	}
	if model, err = spec.New(cfg); err != nil {
		return nil, "", fmt.Errorf("header: %v", err)
	}
	r := &models.recent[models.next]
	r.key, r.m = string(key), model
	models.next = (models.next + 1) % len(models.recent)
	return model, h.Mapping, nil
}

// models are the models of the last headers read: the traces of one
// directory name few models (its runs of one simulation, one per
// transport, in alternation: seed-1-heartbeat, seed-1-logcoord, …), each
// built once while it is among the last four. A spec.Model does not
// change once built.
var models struct {
	sync.Mutex
	recent [4]struct {
		key string
		m   *spec.Model
	}
	next int
}

// buffers hold a trace's compiled lines and observed values, reused
// from one CheckBytes to the next: a long trace's are megabytes, which a
// new allocation takes from the operating system, page by page (a page
// fault each), every time.
type buffers struct {
	lines []line
	arena []check
}

var bufPool = sync.Pool{New: func() any { return new(buffers) }}

// causalCut is the first line of a stamped trace that is in no order of
// a run (happens-before), where compile stops.
type causalCut struct {
	off  int
	proc string
	err  error
}

// compile compiles every line of data from offset off on (the lines
// after the header) into buf; a malformed line is an *InputError. The
// lines of a multi-process run (stamped) must come in an order that
// respects happens-before: compile stops at the first that does not and
// returns it as the cut.
func (c *Checker) compile(data []byte, off int, name string, buf *buffers) (lines []line, cut *causalCut, err error) {
	est := bytes.Count(data[off:], []byte{'\n'}) + 1
	if cap(buf.lines) < est {
		buf.lines = make([]line, 0, est)
	}
	if cap(buf.arena) < 8*est {
		buf.arena = make([]check, 0, 8*est)
	}
	lines, c.arena = buf.lines[:0], buf.arena[:0]
	defer func() { buf.lines, buf.arena = lines[:0], c.arena[:0] }()
	// The lines of a trace repeat (a small model has few distinct
	// observations): a line equal to an earlier one is a copy of its
	// compiled form (the observed values shared in the arena). The cache
	// holds the first lineCacheSize distinct lines, and is dropped when
	// most lines miss it.
	cache := map[string]int32{}
	hits := 0
	n := 1
	var order causal
	var st stamp
	for off < len(data) {
		text, rest := nextLine(data[off:])
		n++
		key, body := text, 0
		if len(bytes.TrimSpace(text)) > 0 {
			// The stamp (p, c, after, from) comes first; the line's
			// body, the rest, is what repeats.
			var err error
			if body, err = splitStamp(text, &st); err != nil {
				return nil, nil, &InputError{File: name, Line: n, Msg: err.Error()}
			}
			if err := order.add(&st); err != nil {
				var v *violation
				var l *lostLine
				if !errors.As(err, &v) && !errors.As(err, &l) {
					return nil, nil, &InputError{File: name, Line: n, Msg: err.Error()}
				}
				return lines, &causalCut{off: off, proc: st.proc, err: err}, nil
			}
			key = text[body:]
		}
		if j, ok := cache[string(key)]; ok && st.after == "" {
			lines = append(lines, lines[j])
			lines[len(lines)-1].off = off
			hits++
		} else if len(bytes.TrimSpace(text)) > 0 {
			lines = append(lines, line{})
			ln := &lines[len(lines)-1]
			if err := c.parseLine(text, body, st.after != "", ln); err != nil {
				return nil, nil, &InputError{File: name, Line: n, Msg: err.Error()}
			}
			ln.off = off
			switch {
			case cache == nil, st.after != "":
				// A successor's first line is read differently from a
				// line of the same body elsewhere (refine.go): not kept.
			case len(cache) < lineCacheSize:
				cache[string(key)] = int32(len(lines) - 1)
			case hits < len(lines)/2:
				cache = nil // most lines are new: the cache does not pay
			}
		}
		off = len(data) - len(rest)
	}
	return lines, nil, nil
}

// lineCacheSize bounds the distinct lines compile remembers (a variable
// for the tests and benchmarks that turn the cache off).
var lineCacheSize = 1024

// search runs the candidate search over lines and sets res's verdict;
// a line whose step sends a message it does not name is an *InputError.
func (c *Checker) search(data []byte, lines []line, res *Result) error {
	for i := range lines {
		ln := &lines[i]
		ok, err := c.step(ln)
		if ok {
			res.Lines++
			continue
		}
		res.Line, res.Text = lineAt(data, ln.off)
		if c.judge(ln, err, res) {
			return &InputError{File: res.File, Line: res.Line, Err: ErrUnnamedSend,
				Msg: fmt.Sprintf("%s sends a message the line does not name (params.m)", c.actions[ln.act].name)}
		}
		return nil
	}
	res.Verdict = OK
	return nil
}

// judge sets res's verdict for line ln, which step did not explain (err
// being step's error), and reports whether the line is instead an input
// error: a send that does not name its message (ErrUnnamedSend).
func (c *Checker) judge(ln *line, err error, res *Result) (unnamedSend bool) {
	if c.unnamedSend {
		return true
	}
	var be *boundError
	if errors.As(err, &be) {
		res.Verdict, res.Reason = Incomplete, "past a bound: "+be.msg
		return false
	}
	var oe *outsideError
	if errors.As(err, &oe) {
		res.Verdict, res.Reason = Rejected, oe.msg
		return false
	}
	var ue *uncoveredError
	if errors.As(err, &ue) {
		res.Verdict, res.Reason = Incomplete, "not covered: "+ue.msg
		return false
	}
	res.Verdict = Rejected
	res.Reason = fmt.Sprintf("no step of %s from any of the %d candidate states agrees with the line",
		c.actions[ln.act].name, len(c.cur))
	res.Candidates = c.explain(ln)
	return false
}

// lineAt returns the number (from 1) and the text of the line of data
// that starts at offset off.
func lineAt(data []byte, off int) (int, string) {
	text, _ := nextLine(data[off:])
	return bytes.Count(data[:off], []byte{'\n'}) + 1, string(text)
}

// lookahead fills in the environment steps no line names, from the
// trace's future: a receive keeps a copy of its message on the network
// (duplication) exactly when a later line receives the same message
// before any line sends it again, and a sent message is lost at once
// when no later line receives it before it is sent again. The network
// then holds exactly the messages some later line receives, which is the
// most any behaviour can offer: every other choice of losses and
// duplications only removes messages a later line needs or blocks a send
// (the network is a set, bounded by MaxMsgs). A line that says keep is
// taken at its word.
//
// It also records, per line, how many messages the network holds at the
// line's peak (those awaiting a later receive, plus a sent message about
// to be lost): more than MaxMsgs is past the model's bound.
func lookahead(lines []line) {
	recvNext := map[msgKey]bool{} // the next event of a message is a receive
	pending := 0                  // messages whose next event is a receive
	set := func(k msgKey, v bool) {
		if !k.isReg() {
			switch old := recvNext[k]; {
			case v && !old:
				pending++
			case !v && old:
				pending--
			}
		}
		recvNext[k] = v
	}
	for i := len(lines) - 1; i >= 0; i-- {
		ln := &lines[i]
		ln.peak = int32(pending)
		if ln.isSendReg || ln.isRecvReg {
			k := regKey(int(ln.idx), int(ln.b))
			if ln.isSendReg {
				ln.lose = !recvNext[k]
			}
			set(k, ln.isRecvReg)
			continue
		}
		if ln.hasReply || (ln.hasMsg && !ln.isRecv) {
			k := keyOf(ln.sentMsg())
			ln.lose = !recvNext[k]
			if ln.lose {
				ln.peak++
			}
			set(k, false)
		}
		if ln.isRecv {
			k := keyOf(ln.msg.msg)
			if ln.keep < 0 {
				ln.keep = b8(recvNext[k])
			}
			set(k, true)
		}
	}
}

// msgKey names a message, or a REGISTER, in lookahead: a message's
// fields packed in the low 40 bits, or a REGISTER's d*MaxBrokers + b + 1
// above them.
type msgKey uint64

// keyOf is the key of message m.
func keyOf(m spec.Msg) msgKey {
	return msgKey(uint8(m.Kind)) | msgKey(uint8(m.Epoch))<<8 | msgKey(uint8(m.Liveness))<<16 |
		msgKey(uint8(m.Count))<<24 | msgKey(b8(m.Closed))<<32
}

// regKey is the key of REGISTER(d, b).
func regKey(d, b int) msgKey { return msgKey(d*spec.MaxBrokers+b+1) << 40 }

// isReg reports whether k names a REGISTER.
func (k msgKey) isReg() bool { return k>>40 != 0 }

// nextLine splits data at its first newline.
func nextLine(data []byte) (text, rest []byte) {
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		return bytes.TrimSuffix(data, []byte("\r")), nil
	}
	return bytes.TrimSuffix(data[:i], []byte("\r")), data[i+1:]
}

// explain describes why no candidate explains ln.
func (c *Checker) explain(ln *line) []Candidate {
	var out []Candidate
	for i := range c.cur {
		if i == maxShown {
			break
		}
		s := &c.cur[i]
		cand := Candidate{State: c.stateVars(s), EnabledActions: c.enabledActions(s)}
		c.successors(s, ln, func(t spec.State) {
			normalize(&t)
			cand.Enabled = true
			cand.Successors = append(cand.Successors, Successor{Disagree: c.disagreements(&t, c.checks(ln))})
		})
		out = append(out, cand)
	}
	return out
}

// enabledActions lists the actions with a step from s, whatever their
// parameters (environment steps aside).
func (c *Checker) enabledActions(s *spec.State) []string {
	var out []string
	for i := range c.actions {
		a := &c.actions[i]
		if !a.env && c.enabled(a, s) {
			out = append(out, a.name)
		}
	}
	return out
}

// enabled reports whether action a has a step from s.
func (c *Checker) enabled(a *actionDef, s *spec.State) bool {
	switch a.shape {
	case shapeNullary:
		_, ok := a.nullary(s)
		return ok
	case shapeIndex:
		n := len(c.dispatchers)
		if a.param == "b" {
			n = len(c.brokers)
		}
		for d := range n {
			if _, ok := a.index(s, d); ok {
				return true
			}
		}
	case shapePair:
		for d := range c.dispatchers {
			for b := range c.brokers {
				if _, ok := a.pair(s, d, b); ok {
					return true
				}
			}
		}
	case shapeVersion:
		for _, v := range c.versions {
			if _, ok := a.version(s, v); ok {
				return true
			}
		}
	case shapeRecv, shapeMsg:
		for i := 0; i < int(s.NetLen); i++ {
			if a.shape == shapeMsg {
				if _, ok := a.msg(s, s.Net[i]); ok {
					return true
				}
			} else if _, ok := a.recv(s, s.Net[i], false); ok {
				return true
			}
		}
	}
	return false
}

func (c *Checker) stateVars(s *spec.State) []Var {
	var out []Var
	for _, kv := range c.m.Vars(*s) {
		if kv[0] == "registrations" {
			continue
		}
		out = append(out, Var{kv[0], kv[1]})
	}
	return out
}

func (c *Checker) disagreements(t *spec.State, checks []check) []Disagreement {
	out := []Disagreement{}
	for _, ck := range checks {
		if got := getVar(t, ck.v, int(ck.idx)); got != ck.want {
			out = append(out, Disagreement{Var: c.checkName(ck), Trace: c.checkValue(ck, ck.want), Model: c.checkValue(ck, got)})
		}
	}
	return out
}

// checkName spells the observed variable: count[b1], pc[d1], cache.epoch.
func (c *Checker) checkName(ck check) string {
	vd := &varTable[ck.v]
	switch vd.dom {
	case domDisp:
		return fmt.Sprintf("%s[%s]", vd.name, c.dispatchers[ck.idx])
	case domBroker:
		return fmt.Sprintf("%s[%s]", vd.name, c.brokers[ck.idx])
	case domRecord:
		return vd.name + "." + vd.fields[ck.idx].name
	}
	return vd.name
}

// checkValue spells value v of the observed variable as a trace does.
func (c *Checker) checkValue(ck check, v int8) string {
	kind, names := varTable[ck.v].elem(int(ck.idx))
	b, err := json.Marshal(renderValue(kind, names, v, c.brokers))
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
