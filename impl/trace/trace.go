package trace

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"
	"sync"
)

// SchemaVersion is the version of the trace format (docs/trace.md); the
// checker (harness/tracecheck) refuses a trace of another version.
const SchemaVersion = 1

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
	Action string
	// D is the dispatcher parameter d, B the broker parameter b, V the
	// version parameter v ("" if the action has none).
	D, B, V string
	// M is the message taken (a receive) or sent (a send); Reply the
	// message a receive answers with.
	M, Reply *Msg
	// Vars are the observed variables, in order; a function's elements
	// and a record's fields are one Var each (Key set).
	Vars []Var
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
}

// Writer is a Tracer that writes NDJSON (docs/trace.md): the header, then
// one line per Trace call, in the order of the calls (one mutex). It is
// safe for concurrent use; call Close to flush.
type Writer struct {
	h   Header
	mu  sync.Mutex
	w   *bufio.Writer
	c   io.Closer
	buf []byte
	n   int
	err error
}

// NewWriter writes h to w and returns a Writer for the lines. If w is an
// io.Closer, Close closes it.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	tw := &Writer{h: h, w: bufio.NewWriterSize(w, 1<<16)}
	if c, ok := w.(io.Closer); ok {
		tw.c = c
	}
	hb, err := json.Marshal(struct {
		Trace  int            `json:"drainproof_trace"`
		Model  map[string]any `json:"model"`
		Source string         `json:"source,omitempty"`
	}{SchemaVersion, h.Model, h.Source})
	if err != nil {
		return nil, err
	}
	if _, err := tw.w.Write(append(hb, '\n')); err != nil {
		return nil, err
	}
	return tw, nil
}

// Header returns the header w wrote: an emitter whose lines go over the
// model's constants (the event service's close and report go over every
// model broker, created or not) reads them from it.
func (w *Writer) Header() Header { return w.h }

// Trace appends l.
func (w *Writer) Trace(l *Line) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	w.buf = AppendLine(w.buf[:0], l)
	w.buf = append(w.buf, '\n')
	_, w.err = w.w.Write(w.buf)
	w.n++
}

// Lines returns the number of lines traced so far.
func (w *Writer) Lines() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// Close flushes the lines and closes the underlying writer if it is a
// Closer; it returns the first error of any write.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.w.Flush(); w.err == nil {
		w.err = err
	}
	if w.c != nil {
		if err := w.c.Close(); w.err == nil {
			w.err = err
		}
	}
	return w.err
}

// AppendLine appends l as one JSON object (without a newline).
func AppendLine(b []byte, l *Line) []byte {
	b = append(b, `{"action":`...)
	b = strconv.AppendQuote(b, l.Action)
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
