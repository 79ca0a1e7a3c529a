package trace_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/drainproof/drainproof/tla/names"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/impl/trace"
)

func TestAppendLine(t *testing.T) {
	l := trace.Line{Action: names.NodeRecvCommand,
		M:     &trace.Msg{Kind: "cmd", Epoch: 1, Liveness: "DRAINING", Count: trace.None},
		Reply: &trace.Msg{Kind: "resp", Epoch: 1, Liveness: "DRAINING", Count: trace.None},
		Vars: []trace.Var{trace.Int("epoch", 1), trace.At("pc", "d1", "idle"), trace.At("pc", "d2", "admitted"),
			trace.Str("liveness", "DRAINING"), trace.At("cache", "closed", true), trace.Bool("admissionClosed", false)}}
	got := string(trace.AppendLine(nil, &l))
	require.Equal(t, `{"action":"NodeRecvCommand","params":{"m":{"kind":"cmd","epoch":1,"liveness":"DRAINING","count":-1,"closed":false},`+
		`"reply":{"kind":"resp","epoch":1,"liveness":"DRAINING","count":-1,"closed":false}},`+
		`"vars":{"epoch":1,"pc":{"d1":"idle","d2":"admitted"},"liveness":"DRAINING","cache":{"closed":true},"admissionClosed":false}}`, got)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(got), &v))
	require.Equal(t, `{"action":"CollectorSendRegister","params":{"d":"d1"}}`,
		string(trace.AppendLine(nil, &trace.Line{Action: names.CollectorSendRegister, D: "d1"})))
}

func TestWriterOrdersConcurrentLines(t *testing.T) {
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, trace.Header{Model: map[string]any{"MaxEpoch": 2}, Source: "test"})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				w.Trace(&trace.Line{Action: names.BrokerAdmit, Vars: []trace.Var{trace.Int("g", int64(g)), trace.Int("i", int64(i))}})
			}
		}()
	}
	wg.Wait()
	require.Equal(t, 400, w.Lines())
	require.NoError(t, w.Close())
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 401)
	require.Equal(t, `{"drainproof_trace":2,"model":{"MaxEpoch":2},"source":"test"}`, lines[0])
	last := map[int64]int64{}
	for _, s := range lines[1:] {
		var v struct {
			Vars struct{ G, I int64 }
		}
		require.NoError(t, json.Unmarshal([]byte(s), &v), s)
		if prev, ok := last[v.Vars.G]; ok {
			require.Equal(t, prev+1, v.Vars.I, "one goroutine's lines stay in its order")
		}
		last[v.Vars.G] = v.Vars.I
	}
}

func TestTeeAndLines(t *testing.T) {
	var a, b trace.Lines
	tr := trace.Tee(&a, nil, &b)
	tr.Trace(&trace.Line{Action: names.BrokerRollback, Vars: []trace.Var{trace.Int("count", 1)}})
	require.Len(t, a.All(), 1)
	require.Equal(t, a.All(), b.All())
}

// countingWriter records what reached it, write by write.
type countingWriter struct{ bytes.Buffer }

func lineCount(b *bytes.Buffer) int { return strings.Count(b.String(), "\n") }

// TestProcessWriterStamps: a process Writer stamps each line with its
// process and a Lamport clock that passes every dependency, writes the
// dependencies, and names its predecessor on its first line.
func TestProcessWriterStamps(t *testing.T) {
	var buf countingWriter
	w, err := trace.NewWriter(&buf, trace.Header{Model: map[string]any{}, Process: "T.2", After: "T.1", Clock: 10})
	require.NoError(t, err)
	require.Equal(t, trace.Stamp{}, w.Last())
	l := trace.Line{Action: names.NodeCrashRestart, V: "new"}
	w.Trace(&l)
	require.Equal(t, trace.Stamp{Proc: "T.2", Clock: 11}, l.At)
	w.Receive(trace.Stamp{Proc: "coord", Clock: 40})
	l2 := trace.Line{Action: names.NodeRecvCommand, M: &trace.Msg{Kind: "cmd", Epoch: 2, Liveness: "DRAINING", Count: -1},
		Reply: &trace.Msg{Kind: "resp", Epoch: 2, Liveness: "DRAINING", Count: -1}}
	w.Trace(&l2)
	require.Equal(t, trace.Stamp{Proc: "T.2", Clock: 41}, l2.At, "a receive's clock passes its sender's")
	require.Equal(t, l2.At, w.Last())
	require.NoError(t, w.Close())
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 3)
	require.Equal(t, `{"drainproof_trace":2,"model":{},"process":"T.2","after":"T.1"}`, lines[0])
	require.Equal(t, `{"p":"T.2","c":11,"after":"T.1","action":"NodeCrashRestart","params":{"v":"new"}}`, lines[1])
	require.True(t, strings.HasPrefix(lines[2], `{"p":"T.2","c":41,"from":[{"p":"coord","c":40}],"action":"NodeRecvCommand",`), lines[2])
	for _, s := range lines {
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(s), &v), s)
	}
}

// TestCrashLosesOnlyUnsentLines: a line that sends a message is written
// through at once; a crash loses only (some of) the lines after the last
// such line, and the Writer says how many.
func TestCrashLosesOnlyUnsentLines(t *testing.T) {
	for keep := 0; keep <= 3; keep++ {
		var buf countingWriter
		w, err := trace.NewWriter(&buf, trace.Header{Model: map[string]any{}, Process: "T.1"})
		require.NoError(t, err)
		w.Trace(&trace.Line{Action: names.NodeStartHeartbeat}) // the first line is written through
		w.Trace(&trace.Line{Action: names.ServiceStartReport})
		require.Equal(t, 2, lineCount(&buf.Buffer), "header and first line")
		w.Trace(&trace.Line{Action: names.NodeSendHeartbeat, M: &trace.Msg{Kind: "hb", Epoch: 1, Liveness: "ALIVE"}})
		require.Equal(t, 4, lineCount(&buf.Buffer), "a send is written through")
		require.Zero(t, w.Unwritten())
		w.Trace(&trace.Line{Action: names.CoordRecvHeartbeat, M: &trace.Msg{Kind: "hb"}}) // a receive: not a send
		w.Trace(&trace.Line{Action: names.BrokerAdmit, D: "d1"})
		require.Equal(t, 2, w.Unwritten())
		lost, err := w.Crash(keep)
		require.NoError(t, err)
		require.Equal(t, max(0, 2-keep), lost)
		require.Equal(t, 4+min(keep, 2), lineCount(&buf.Buffer))
		w.Trace(&trace.Line{Action: names.BrokerAdmit, D: "d1"}) // a dead process writes nothing
		require.NoError(t, w.Close())
		require.Equal(t, 4+min(keep, 2), lineCount(&buf.Buffer))
	}
}

// TestStampWritesThrough: the stamp a transport puts on a message
// names a line that a kill cannot lose: Stamp writes the buffered lines
// through first.
func TestStampWritesThrough(t *testing.T) {
	var buf countingWriter
	w, err := trace.NewWriter(&buf, trace.Header{Model: map[string]any{}, Process: "coord"})
	require.NoError(t, err)
	require.Equal(t, trace.Stamp{}, w.Stamp(), "no line yet")
	w.Trace(&trace.Line{Action: names.CoordLearnVersion})                             // the first line: written through
	w.Trace(&trace.Line{Action: names.CoordRecvHeartbeat, M: &trace.Msg{Kind: "hb"}}) // buffered
	w.Trace(&trace.Line{Action: names.MaintainerReportProgress})                      // buffered
	require.Equal(t, 2, w.Unwritten())
	require.Equal(t, trace.Stamp{Proc: "coord", Clock: 3}, w.Stamp())
	require.Zero(t, w.Unwritten())
	lost, err := w.Crash(0)
	require.NoError(t, err)
	require.Zero(t, lost)
	require.Equal(t, 4, lineCount(&buf.Buffer), "header and the three lines")
}

// TestWriterHeader: a Writer gives back the header it wrote, so that an
// emitter reads the model's constants (the event service: the Brokers)
// from its tracer.
func TestWriterHeader(t *testing.T) {
	h := trace.Header{Model: map[string]any{"Brokers": []string{"c1", "c2"}}, Source: "test"}
	w, err := trace.NewWriter(&bytes.Buffer{}, h)
	require.NoError(t, err)
	require.Equal(t, h, w.Header())
}

// TestParamsAreTheOnesSet: a line has a "params" object exactly when it
// has a parameter, and the object holds the parameters set, in the
// order d, b, v, m, reply; a line with none has no "params" key, which
// the checker reads as an action without parameters.
func TestParamsAreTheOnesSet(t *testing.T) {
	m := &trace.Msg{Kind: "report", Epoch: 2, Liveness: "NONE", Count: 0, Closed: true}
	const msg = `{"kind":"report","epoch":2,"liveness":"NONE","count":0,"closed":true}`
	vars := []trace.Var{trace.Int("count", 1)}
	for _, tc := range []struct {
		line trace.Line
		want string
	}{
		{trace.Line{Action: names.BrokerAdmit, Vars: vars}, `{"action":"BrokerAdmit","vars":{"count":1}}`},
		{trace.Line{Action: names.BrokerAdmit}, `{"action":"BrokerAdmit"}`},
		{trace.Line{Action: names.BrokerAdmit, B: "b1", Vars: vars}, `{"action":"BrokerAdmit","params":{"b":"b1"},"vars":{"count":1}}`},
		{trace.Line{Action: names.CoordLearnVersion, V: "new"}, `{"action":"CoordLearnVersion","params":{"v":"new"}}`},
		{trace.Line{Action: names.ServiceSendReport, M: m}, `{"action":"ServiceSendReport","params":{"m":` + msg + `}}`},
		{trace.Line{Action: names.NodeRecvCommand, Reply: m}, `{"action":"NodeRecvCommand","params":{"reply":` + msg + `}}`},
		{trace.Line{Action: names.BrokerAdmit, D: "d1", B: "b2", V: "x", M: m, Reply: m},
			`{"action":"BrokerAdmit","params":{"d":"d1","b":"b2","v":"x","m":` + msg + `,"reply":` + msg + `}}`},
	} {
		require.Equal(t, tc.want, string(trace.AppendLine(nil, &tc.line)))
	}
}

// failing is a destination whose writes and close fail with the errors
// given (nil: they succeed); it records whether it was closed.
type failing struct {
	write, close error
	closed       bool
}

func (f *failing) Write(p []byte) (int, error) {
	if f.write != nil {
		return 0, f.write
	}
	return len(p), nil
}

func (f *failing) Close() error { f.closed = true; return f.close }

// TestCloseReportsTheFirstError: a destination that cannot be written
// fails the Writer where the write happens (NewWriter writes the header
// at once; later lines may be buffered until Close, which returns that
// error and still closes the destination); when only the close fails,
// Close returns the close's error. A trace that could not be written is
// never reported as written.
func TestCloseReportsTheFirstError(t *testing.T) {
	errWrite, errClose := errors.New("disk full"), errors.New("close failed")
	for _, tc := range []struct {
		name string
		dst  *failing
		want error
	}{
		{"write fails", &failing{write: errWrite}, errWrite},
		{"write and close fail: the write's error", &failing{write: errWrite, close: errClose}, errWrite},
		{"close fails", &failing{close: errClose}, errClose},
		{"nothing fails", &failing{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := trace.NewWriter(tc.dst, trace.Header{Source: "test"})
			if err != nil { // the header could not be written
				require.Equal(t, tc.want, err)
				return
			}
			w.Trace(&trace.Line{Action: names.BrokerAdmit})
			require.Equal(t, tc.want, w.Close())
			require.True(t, tc.dst.closed, "the destination was not closed")
		})
	}
}

// TestKeyedVarsAreOneObject: consecutive Vars of one name with keys are
// one JSON object (a function's elements, a record's fields), up to the
// next name, whether or not another variable follows; values are
// integers (int64 or int), strings or booleans, anything else null.
func TestKeyedVarsAreOneObject(t *testing.T) {
	l := trace.Line{Action: names.BrokerAdmit, Vars: []trace.Var{
		trace.At("pc", "d1", "idle"), trace.At("pc", "d2", "admitted"),
		trace.At("count", "b1", int64(1)), trace.At("count", "b2", 2),
		trace.At("gate", "b1", true), trace.At("gate", "b2", 1.5)}}
	require.Equal(t, `{"action":"BrokerAdmit","vars":{"pc":{"d1":"idle","d2":"admitted"},`+
		`"count":{"b1":1,"b2":2},"gate":{"b1":true,"b2":null}}}`, string(trace.AppendLine(nil, &l)))
}
