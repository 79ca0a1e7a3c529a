package trace

import (
	"encoding/json"
	"io"
	"strconv"
	"sync"

	"github.com/drainproof/drainproof/tla/names"
)

// SchemaVersion is the version of the trace format (docs/trace.md): 2
// adds the process and the logical clock of every line of a
// multi-process run. The checker (harness/tracecheck) reads versions 1
// and 2 and refuses any other.
const SchemaVersion = 2

// Tracer receives the implementation's steps as model actions, one Line
// per action. The emitter calls Trace while it holds the lock, or inside
// the serial section, that orders the effect the line describes, so that
// lines from several goroutines come in the order the effects happened;
// Trace must therefore be quick and must not call back into the emitter.
// A nil Tracer means no tracing: every emitter checks for nil first, and
// builds no Line then.
type Tracer interface {
	Trace(l *Line)
}

// Line is one action: its TLA+ name, parameters and the model variables
// the emitter observed after it.
type Line struct {
	Action names.Action
	// D is the dispatcher parameter d, B the broker parameter b, V the
	// version parameter v ("" if the action has none).
	D, B, V string
	// M is the message taken (a receive) or sent (a send); Reply the
	// message a receive answers with.
	M, Reply *Msg
	// Vars are the observed variables, in order; a function's elements
	// and a record's fields are one Var each (Key set).
	Vars []Var
	// From are the lines of other processes this line depends on (the
	// send of the message it receives, the state it read): set by the
	// emitter, or by Writer.Receive, in a multi-process run.
	From []Stamp
	// At is the line's own stamp, set by a process Writer (Header.Process)
	// when it traces the line, so that a sender can put it on the message
	// the line sends.
	At Stamp
}

// Msg is a message as the model's record (TLA+ Messages); None is -1.
type Msg struct {
	Kind     string // cmd, resp, hb, report, ans (node.Kind.String)
	Epoch    int64
	Liveness string // ALIVE, DRAINING, STOPPING or NONE (node.Liveness.String)
	Count    int64
	Closed   bool
}

// None is the model's None for an epoch or a count that is not there.
const None = -1

// Var is one observed value: variable Name, or its element or field Key;
// Value is an int64, a string or a bool.
type Var struct {
	Name  string
	Key   string
	Value any
}

// Int is a Var holding an integer.
func Int(name string, v int64) Var { return Var{Name: name, Value: v} }

// Str is a Var holding a string (a liveness, a pc).
func Str(name, v string) Var { return Var{Name: name, Value: v} }

// Bool is a Var holding a boolean.
func Bool(name string, v bool) Var { return Var{Name: name, Value: v} }

// At is a Var of element (or field) key of a function (or record).
func At(name, key string, v any) Var { return Var{Name: name, Key: key, Value: v} }

// Header is a trace's first line: the model's constants (TLA+ names, TLC
// values) and where the trace comes from.
type Header struct {
	Model  map[string]any
	Source string
	// Process names the process whose lines this trace holds (one file per
	// process of a run, docs/trace.md); empty for a single trace of a run
	// that one lock orders.
	Process string
	// After names the process this one succeeds (T's next process after a
	// restart): every line of After comes before this process's first.
	After string
	// Clock is the Lamport clock the process starts from: a successor
	// starts past its predecessor's last line.
	Clock uint64
	// Mapping names the refinement mapping the validator applies to the
	// trace ("" none: the run stays within the model's scope). MappingSessions
	// is the only one (docs/trace.md, "Every run").
	Mapping string
}

// MappingSessions is the refinement mapping of a full run's trace: the
// run is cut into drain sessions at each CoordRejoin, the maintainers'
// units of work are abstracted to the model's one, and what a line of
// the coordinator or a stale LogCoordinator does outside the model's
// session is projected away (docs/trace.md, "Every run").
const MappingSessions = "sessions"

// Writer is a Tracer that writes NDJSON (docs/trace.md): the header, then
// one line per Trace call, in the order of the calls (one mutex). It is
// safe for concurrent use; call Close to flush.
//
// With Header.Process set it writes one process's trace of a
// multi-process run: it stamps every line with the process and its
// Lamport clock (Line.At), writes the lines the line depends on
// (Line.From, and those given by Receive), and writes a line that sends
// a message through to the underlying writer before Trace returns, so
// that a process killed afterwards loses only lines no other process has
// seen (Crash).
type Writer struct {
	h      Header // the header it wrote
	mu     sync.Mutex
	w      io.Writer
	c      io.Closer
	buf    []byte // lines not yet written to w
	starts []int  // process mode: where each line of buf starts
	line   []byte
	n      int
	err    error
	closed bool

	proc    string
	after   string
	clock   uint64
	pending []Stamp
	from    []Stamp
}

// flushAt is the size at which the buffered lines are written out.
const flushAt = 1 << 16

// NewWriter writes h to w and returns a Writer for the lines. If w is an
// io.Closer, Close closes it.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	tw := &Writer{h: h, w: w, proc: h.Process, after: h.After, clock: h.Clock}
	if c, ok := w.(io.Closer); ok {
		tw.c = c
	}
	hb, err := json.Marshal(struct {
		Trace   int            `json:"drainproof_trace"`
		Model   map[string]any `json:"model"`
		Source  string         `json:"source,omitempty"`
		Process string         `json:"process,omitempty"`
		After   string         `json:"after,omitempty"`
		Mapping string         `json:"mapping,omitempty"`
	}{SchemaVersion, h.Model, h.Source, h.Process, h.After, h.Mapping})
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(append(hb, '\n')); err != nil {
		return nil, err
	}
	return tw, nil
}

// Header returns the header w wrote: an emitter whose lines go over the
// model's constants (the event service's close and report go over every
// model broker, created or not) reads them from it.
func (w *Writer) Header() Header { return w.h }

// Trace appends l; a process Writer stamps it first (l.At).
func (w *Writer) Trace(l *Line) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil || w.closed {
		return
	}
	if w.proc == "" {
		w.line = AppendLine(w.line[:0], l)
		w.buf = append(append(w.buf, w.line...), '\n')
		w.n++
		if len(w.buf) >= flushAt {
			w.flush()
		}
		return
	}
	w.from = append(append(w.from[:0], l.From...), w.pending...)
	w.pending = w.pending[:0]
	for _, f := range w.from {
		w.clock = max(w.clock, f.Clock)
	}
	w.clock++
	l.At = Stamp{Proc: w.proc, Clock: w.clock}
	w.line = appendStamped(w.line[:0], l, w.from, w.n == 0, w.after)
	w.starts = append(w.starts, len(w.buf))
	w.buf = append(append(w.buf, w.line...), '\n')
	w.n++
	if w.n == 1 || sends(l) || len(w.buf) >= flushAt {
		w.flush()
	}
}

// sends reports whether l sends a message: a reply, or a message that
// the line does not receive. Such a line is written through before the
// message can leave.
func sends(l *Line) bool {
	if l.Reply != nil {
		return true
	}
	if l.M == nil {
		return false
	}
	switch l.Action {
	case names.NodeRecvCommand, names.CoordRecvHeartbeat, names.CoordRecvResponse, names.CoordRecvAnswer,
		names.LogCoordRecvReport:
		return false
	}
	return true
}

// flush writes the buffered lines to w (w.mu held).
func (w *Writer) flush() {
	if len(w.buf) > 0 && w.err == nil {
		_, w.err = w.w.Write(w.buf)
	}
	w.buf, w.starts = w.buf[:0], w.starts[:0]
}

// Receive makes the next line traced depend on from (a process Writer):
// the transport calls it with the sender's stamp of a message just
// before it hands the message to the component, when the component does
// not set Line.From itself.
func (w *Writer) Receive(from Stamp) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if from.Proc != "" {
		w.pending = append(w.pending, from)
	}
}

// Pending returns, and forgets, the dependencies Receive gave that no
// line has taken yet (a process about to be killed hands them to its
// successor's first line).
func (w *Writer) Pending() []Stamp {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := append([]Stamp(nil), w.pending...)
	w.pending = w.pending[:0]
	return p
}

// Last returns the stamp of the last line traced (a process Writer), the
// zero Stamp before the first.
func (w *Writer) Last() Stamp {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == 0 {
		return Stamp{}
	}
	return Stamp{Proc: w.proc, Clock: w.clock}
}

// Stamp writes every buffered line through and returns the stamp of the
// last line (the zero Stamp before the first): what a transport puts on
// a message leaving the process. The line it names, and every line
// before it, then survive a kill of the process, so no other process can
// depend on a line a kill loses.
func (w *Writer) Stamp() Stamp {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == 0 {
		return Stamp{}
	}
	if !w.closed {
		w.flush()
	}
	return Stamp{Proc: w.proc, Clock: w.clock}
}

// Clock returns the process's Lamport clock: the clock of its last line,
// or the one it started from.
func (w *Writer) Clock() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.clock
}

// Lines returns the number of lines traced so far.
func (w *Writer) Lines() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// Crash ends a process Writer as a killed process ends: of the lines not
// yet written through (none of which sends a message), the first keep
// reach the underlying writer and the rest are lost. It closes the
// underlying writer if it is a Closer and returns the number of lines
// lost and the first error of any write.
func (w *Writer) Crash(keep int) (lost int, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, w.err
	}
	if keep < len(w.starts) {
		lost = len(w.starts) - keep
		w.buf = w.buf[:w.starts[keep]]
	}
	return lost, w.closeLocked()
}

// Unwritten returns the number of lines a crash now may lose.
func (w *Writer) Unwritten() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.starts)
}

// Close flushes the lines and closes the underlying writer if it is a
// Closer; it returns the first error of any write.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return w.err
	}
	return w.closeLocked()
}

func (w *Writer) closeLocked() error {
	w.flush()
	w.closed = true
	if w.c != nil {
		if err := w.c.Close(); w.err == nil {
			w.err = err
		}
	}
	return w.err
}

// AppendLine appends l as one JSON object (without a newline), with its
// dependencies (l.From) but without a stamp.
func AppendLine(b []byte, l *Line) []byte {
	b = append(b, '{')
	if len(l.From) > 0 {
		b = appendFrom(b, l.From)
		b = append(b, ',')
	}
	return appendBody(b, l)
}

// appendStamped appends l stamped with l.At, its dependencies from and,
// on a successor's first line, the process it succeeds. The stamp comes
// first, so that the checker's merge reads it without parsing the rest.
func appendStamped(b []byte, l *Line, from []Stamp, first bool, after string) []byte {
	b = append(b, `{"p":`...)
	b = strconv.AppendQuote(b, l.At.Proc)
	b = append(b, `,"c":`...)
	b = strconv.AppendUint(b, l.At.Clock, 10)
	b = append(b, ',')
	if first && after != "" {
		b = append(b, `"after":`...)
		b = strconv.AppendQuote(b, after)
		b = append(b, ',')
	}
	if len(from) > 0 {
		b = appendFrom(b, from)
		b = append(b, ',')
	}
	return appendBody(b, l)
}

func appendFrom(b []byte, from []Stamp) []byte {
	b = append(b, `"from":[`...)
	for i, f := range from {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"p":`...)
		b = strconv.AppendQuote(b, f.Proc)
		b = append(b, `,"c":`...)
		b = strconv.AppendUint(b, f.Clock, 10)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendBody appends the action, its parameters and vars, and the
// closing brace.
func appendBody(b []byte, l *Line) []byte {
	b = append(b, `"action":`...)
	b = strconv.AppendQuote(b, l.Action.String())
	if l.D != "" || l.B != "" || l.V != "" || l.M != nil || l.Reply != nil {
		b = append(b, `,"params":{`...)
		sep := ""
		for _, p := range [...]struct{ k, v string }{{"d", l.D}, {"b", l.B}, {"v", l.V}} {
			if p.v != "" {
				b = append(append(b, sep...), '"')
				b = append(append(b, p.k...), `":`...)
				b = strconv.AppendQuote(b, p.v)
				sep = ","
			}
		}
		if l.M != nil {
			b = append(append(b, sep...), `"m":`...)
			b = appendMsg(b, l.M)
			sep = ","
		}
		if l.Reply != nil {
			b = append(append(b, sep...), `"reply":`...)
			b = appendMsg(b, l.Reply)
		}
		b = append(b, '}')
	}
	if len(l.Vars) > 0 {
		b = append(b, `,"vars":{`...)
		for i := 0; i < len(l.Vars); {
			if i > 0 {
				b = append(b, ',')
			}
			v := l.Vars[i]
			b = strconv.AppendQuote(b, v.Name)
			b = append(b, ':')
			if v.Key == "" {
				b = appendValue(b, v.Value)
				i++
				continue
			}
			// A function or record: its consecutive keyed Vars.
			b = append(b, '{')
			start := i
			for j := start; j < len(l.Vars) && l.Vars[j].Name == v.Name && l.Vars[j].Key != ""; j++ {
				if j > start {
					b = append(b, ',')
				}
				b = strconv.AppendQuote(b, l.Vars[j].Key)
				b = append(b, ':')
				b = appendValue(b, l.Vars[j].Value)
				i = j + 1
			}
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

func appendMsg(b []byte, m *Msg) []byte {
	b = append(b, `{"kind":`...)
	b = strconv.AppendQuote(b, m.Kind)
	b = append(b, `,"epoch":`...)
	b = strconv.AppendInt(b, m.Epoch, 10)
	b = append(b, `,"liveness":`...)
	b = strconv.AppendQuote(b, m.Liveness)
	b = append(b, `,"count":`...)
	b = strconv.AppendInt(b, m.Count, 10)
	b = append(b, `,"closed":`...)
	b = strconv.AppendBool(b, m.Closed)
	return append(b, '}')
}

func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case int64:
		return strconv.AppendInt(b, x, 10)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case string:
		return strconv.AppendQuote(b, x)
	case bool:
		return strconv.AppendBool(b, x)
	}
	return append(b, "null"...)
}

// Stamp names one line of a multi-process run: the process that wrote
// it and the process's Lamport clock at that line. A message carries the
// stamp of the line that sent it (the simulator's bus, a transport's
// wire message), and the line that receives it names that stamp in
// Line.From: the happens-before edge the checker's merge respects.
type Stamp struct {
	Proc  string
	Clock uint64
}

// Lines is a Tracer that keeps the lines in memory, in order (tests).
type Lines struct {
	mu sync.Mutex
	l  []Line
}

// Trace appends a copy of l.
func (r *Lines) Trace(l *Line) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := *l
	c.Vars = append([]Var(nil), l.Vars...)
	c.From = append([]Stamp(nil), l.From...)
	r.l = append(r.l, c)
}

// All returns the lines traced so far.
func (r *Lines) All() []Line {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Line(nil), r.l...)
}

// Tee is a Tracer that passes each line to every non-nil tracer of ts.
func Tee(ts ...Tracer) Tracer {
	var out tee
	for _, t := range ts {
		if t != nil {
			out = append(out, t)
		}
	}
	return out
}

type tee []Tracer

// Trace passes l to every tracer of t.
func (t tee) Trace(l *Line) {
	for _, x := range t {
		x.Trace(l)
	}
}
