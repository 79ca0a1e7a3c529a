package tracecheck_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/impl/trace"
)

const header = `{"drainproof_trace":1,"model":{"Dispatchers":["d1","d2"],"TableTriggers":["d2"],"Brokers":["b1"],"Versions":["new"],"MaxEpoch":15,"MaxReg":15,"MaxMsgs":8,"Transport":"heartbeat","Bugs":[]}}`

// TestMalformedTraces: every malformed trace is an *InputError naming the
// file and the line, never a panic or a verdict.
func TestMalformedTraces(t *testing.T) {
	reg := `{"action":"CollectorSendRegister","params":{"d":"d1","b":"b1"}}`
	cases := []struct {
		name, trace string
		line        int
		msg         string
	}{
		{"empty", "", 1, "no header"},
		{"header not json", "hello\n", 1, "bad header"},
		{"header version", `{"drainproof_trace":3,"model":{}}` + "\n", 1, "version 3"},
		{"header unknown key", `{"drainproof_trace":1,"model":{},"x":1}` + "\n", 1, "unknown field"},
		{"header bad constant", `{"drainproof_trace":1,"model":{"MaxEpoch":"two"}}` + "\n", 1, "MaxEpoch"},
		{"header unknown constant", `{"drainproof_trace":1,"model":{"Foo":1}}` + "\n", 1, "Foo"},
		{"header invalid model", `{"drainproof_trace":1,"model":{"Dispatchers":[]}}` + "\n", 1, "Dispatchers"},
		{"not json", header + "\n" + reg + "\n{\n", 3, "column"},
		{"trailing text", header + "\n" + reg + " x\n", 2, "trailing"},
		{"unknown action", header + "\n" + `{"action":"Foo"}` + "\n", 2, `unknown action "Foo"`},
		{"environment action", header + "\n" + `{"action":"NetLose"}` + "\n", 2, "environment step"},
		{"no action", header + "\n" + `{"vars":{"epoch":1}}` + "\n", 2, "no \"action\""},
		{"unknown key", header + "\n" + `{"action":"BrokerAdmit","foo":1}` + "\n", 2, `unknown key "foo"`},
		{"unknown variable", header + "\n" + `{"action":"BrokerAdmit","vars":{"cnt":1}}` + "\n", 2, `unknown variable "cnt"`},
		{"unobservable variable", header + "\n" + `{"action":"BrokerAdmit","vars":{"net":1}}` + "\n", 2, "not observable"},
		{"bad dispatcher", header + "\n" + `{"action":"BrokerAdmit","params":{"d":"d9"}}` + "\n", 2, "dispatcher"},
		{"bad pc", header + "\n" + `{"action":"BrokerAdmit","vars":{"pc":{"d1":"busy"}}}` + "\n", 2, "pc"},
		{"bad liveness", header + "\n" + `{"action":"NodeSendHeartbeat","vars":{"liveness":"DEAD"}}` + "\n", 2, "liveness"},
		{"count not an integer", header + "\n" + `{"action":"BrokerAdmit","vars":{"count":{"b1":1.5}}}` + "\n", 2, "fraction"},
		{"line cut off where an integer starts", header + "\n" + `{"action":"BrokerAdmit","vars":{"count":{"b1":` + "\n", 2, "want an integer"},
		{"unknown broker", header + "\n" + `{"action":"BrokerAdmit","vars":{"brk":{"d1":"b9"}}}` + "\n", 2, `unknown broker "b9"`},
		{"unknown action longer than every action", header + "\n" + `{"action":"` + strings.Repeat("X", 80) + `"}` + "\n", 2, "unknown action"},
		{"bad field of a record", header + "\n" + `{"action":"NodeStartHeartbeat","vars":{"sample":{"phase":"nap"}}}` + "\n", 2, `unknown sample.phase "nap"`},
		{"param of another action", header + "\n" + `{"action":"NodeSendHeartbeat","params":{"d":"d1"}}` + "\n", 2, "takes no parameter"},
		{"receive without message", header + "\n" + `{"action":"CoordRecvHeartbeat"}` + "\n", 2, "params.m"},
		{"partial message", header + "\n" + `{"action":"CoordRecvHeartbeat","params":{"m":{"kind":"hb"}}}` + "\n", 2, "must give kind"},
		{"send without message", header + "\n" + `{"action":"NodeStartHeartbeat"}` + "\n" + `{"action":"ServiceStartReport"}` + "\n" +
			`{"action":"ServiceReadBroker","params":{"b":"b1"}}` + "\n" + `{"action":"NodeSendHeartbeat"}` + "\n", 5, "does not name"},
		{"a REGISTER without its broker", header + "\n" + `{"action":"CollectorSendRegister","params":{"d":"d1"}}` + "\n", 2, "needs both"},
		{"a broker action with a dispatcher", header + "\n" + `{"action":"ServiceReadBroker","params":{"d":"d1"}}` + "\n", 2, "takes a broker"},
		{"bad version", header + "\n" + `{"action":"NodeCrashRestart","params":{"v":"old"}}` + "\n", 2, "version"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tracecheck.Check(strings.NewReader(tc.trace), "bad.ndjson", nil, tracecheck.Options{})
			var ie *tracecheck.InputError
			require.True(t, errors.As(err, &ie), "want an input error, got %v (verdict %s)", err, res.Verdict)
			require.Equal(t, "bad.ndjson", ie.File)
			require.Equal(t, tc.line, ie.Line, "%v", err)
			require.Contains(t, err.Error(), tc.msg)
			require.True(t, strings.HasPrefix(err.Error(), "bad.ndjson:"), err.Error())
		})
	}
}

// register is the lines of a registration of d at broker b1 whose
// admission leaves b1's count at count.
func register(d string, count int) string {
	p := fmt.Sprintf(`"params":{"d":%q,"b":"b1"}`, d)
	return `{"action":"CollectorSendRegister",` + p + "}\n" + `{"action":"ServiceRecvRegister",` + p + "}\n" +
		fmt.Sprintf(`{"action":"BrokerAdmit","params":{"d":%q},"vars":{"count":{"b1":%d}}}`, d, count) + "\n"
}

// TestBounds: a trace past the model's bounds is incomplete, not
// rejected: here a count past MaxReg in a message, an integer past the
// model's int8 values (-128..127: its ends are values the model judges)
// and an epoch past MaxEpoch. The collectors' budget
// MaxReg does not bound a trace's registrations.
func TestBounds(t *testing.T) {
	h := strings.Replace(header, `"MaxReg":15`, `"MaxReg":1`, 1)
	tr := h + "\n" + register("d2", 1) + register("d1", 2)
	res, err := tracecheck.Check(strings.NewReader(tr), "b", nil, tracecheck.Options{})
	require.NoError(t, err)
	require.Equal(t, tracecheck.OK, res.Verdict, "registrations are unbounded in a trace: %+v", res)
	tr += `{"action":"NodeStartHeartbeat"}` + "\n" + `{"action":"ServiceStartReport"}` + "\n" +
		`{"action":"ServiceReadBroker","params":{"b":"b1"}}` + "\n" +
		`{"action":"NodeSendHeartbeat","params":{"m":{"kind":"hb","epoch":1,"liveness":"ALIVE","count":2,"closed":false}}}` + "\n"
	res, err = tracecheck.Check(strings.NewReader(tr), "b", nil, tracecheck.Options{})
	require.NoError(t, err)
	require.Equal(t, tracecheck.Incomplete, res.Verdict, "%+v", res)
	require.Equal(t, 11, res.Line)
	require.Contains(t, res.Reason, "a larger MaxReg would explain the line", "the reason names the bound")

	// An integer past the model's int8 values: incomplete at that line,
	// and only once the lines before it are explained.
	tr = header + "\n" + register("d2", 1) + register("d1", 1000)
	res, err = tracecheck.Check(strings.NewReader(tr), "b", nil, tracecheck.Options{})
	require.NoError(t, err)
	require.Equal(t, tracecheck.Incomplete, res.Verdict, "%+v", res)
	require.Equal(t, 7, res.Line)
	require.Contains(t, res.Reason, "-128..127", "the reason names the bound")
	// The int8 range is -128..127 inclusive: its ends are values the
	// model is asked about (no state has them: rejected), one past them
	// is incomplete.
	for v, want := range map[int]tracecheck.Verdict{-128: tracecheck.Rejected, 127: tracecheck.Rejected,
		-129: tracecheck.Incomplete, 128: tracecheck.Incomplete} {
		res, err = tracecheck.Check(strings.NewReader(header+"\n"+register("d2", 1)+register("d1", v)), "b", nil, tracecheck.Options{})
		require.NoError(t, err)
		require.Equal(t, want, res.Verdict, "count %d: %+v", v, res)
		require.Equal(t, 7, res.Line, "count %d", v)
	}
	tr = header + "\n" + register("d2", 2) + register("d1", 1000)
	res, err = tracecheck.Check(strings.NewReader(tr), "b", nil, tracecheck.Options{})
	require.NoError(t, err)
	require.Equal(t, tracecheck.Rejected, res.Verdict, "%+v", res)
	require.Equal(t, 4, res.Line)
}

// TestOutsideTheHeaderRejected: a line that no bound could make valid is
// a rejection at that line, as under TLC's trace spec, with the constant
// it contradicts: an epoch past the header's MaxEpoch (the same wrong
// epoch, whether just under the Go transcription's limit of 15 or past
// it), more messages in flight than MaxMsgs. Incomplete stays for what a
// larger bound would explain, and names it (here --max-candidates).
func TestOutsideTheHeaderRejected(t *testing.T) {
	for _, tc := range []struct{ maxEpoch, epoch int }{{1, 2}, {2, 14}, {15, 16}, {15, 200}} {
		h := strings.Replace(header, `"MaxEpoch":15`, fmt.Sprintf(`"MaxEpoch":%d`, tc.maxEpoch), 1)
		for _, l := range []string{
			fmt.Sprintf(`{"action":"NodeCrashRestart","vars":{"epoch":%d}}`, tc.epoch),
			fmt.Sprintf(`{"action":"CoordLearnVersion","vars":{"coordEpoch":%d}}`, tc.epoch),
			fmt.Sprintf(`{"action":"NodeSendHeartbeat","params":{"m":{"kind":"hb","epoch":%d,"liveness":"ALIVE","count":0,"closed":false}}}`, tc.epoch),
		} {
			res, err := tracecheck.Check(strings.NewReader(h+"\n"+l+"\n"), "b", nil, tracecheck.Options{})
			require.NoError(t, err)
			require.Equal(t, tracecheck.Rejected, res.Verdict, "%d past %d: %s: %+v", tc.epoch, tc.maxEpoch, l, res)
			require.Equal(t, 2, res.Line)
			require.Contains(t, res.Reason, fmt.Sprintf("past the header's MaxEpoch = %d", tc.maxEpoch))
		}
	}
	// The LogCoordinator's cache names an epoch (its first field) and a
	// count: the epoch past MaxEpoch is outside, a count past it is not.
	lc := strings.Replace(strings.Replace(header, `"MaxEpoch":15`, `"MaxEpoch":2`, 1), `"Transport":"heartbeat"`, `"Transport":"logcoord"`, 1)
	for epoch, count := range map[int]int{3: 0, 1: 5} {
		l := fmt.Sprintf(`{"action":"LogCoordExpire","vars":{"cache":{"epoch":%d,"count":%d,"closed":false}}}`, epoch, count)
		res, err := tracecheck.Check(strings.NewReader(lc+"\n"+l+"\n"), "b", nil, tracecheck.Options{})
		require.NoError(t, err)
		require.Equal(t, tracecheck.Rejected, res.Verdict, "%s: %+v", l, res)
		if epoch > 2 {
			require.Contains(t, res.Reason, "past the header's MaxEpoch = 2", l)
		} else {
			require.NotContains(t, res.Reason, "MaxEpoch", l)
		}
	}

	// The same wrong epoch, within MaxEpoch: rejected too (CoordLearnVersion
	// learns epoch 1).
	res, err := tracecheck.Check(strings.NewReader(header+"\n"+`{"action":"CoordLearnVersion","vars":{"coordEpoch":14}}`+"\n"), "b", nil, tracecheck.Options{})
	require.NoError(t, err)
	require.Equal(t, tracecheck.Rejected, res.Verdict, "%+v", res)

	// Two heartbeats in flight, each received by a later line, with
	// MaxMsgs = 1: rejected at the second send; with MaxMsgs = 2 the
	// network holds them.
	hb := func(count int) (send, recv string) {
		m := fmt.Sprintf(`{"kind":"hb","epoch":1,"liveness":"ALIVE","count":%d,"closed":false}`, count)
		return `{"action":"NodeStartHeartbeat"}` + "\n" + `{"action":"ServiceStartReport"}` + "\n" +
				`{"action":"ServiceReadBroker","params":{"b":"b1"}}` + "\n" + `{"action":"NodeSendHeartbeat","params":{"m":` + m + `}}` + "\n",
			`{"action":"CoordRecvHeartbeat","params":{"m":` + m + `}}` + "\n"
	}
	send0, recv0 := hb(0)
	send1, recv1 := hb(1)
	body := send0 + register("d1", 1) + send1 + recv0 + recv1
	for maxMsgs, want := range map[int]tracecheck.Verdict{1: tracecheck.Rejected, 2: tracecheck.OK} {
		h := strings.Replace(header, `"MaxMsgs":8`, fmt.Sprintf(`"MaxMsgs":%d`, maxMsgs), 1)
		res, err := tracecheck.Check(strings.NewReader(h+"\n"+body), "b", nil, tracecheck.Options{})
		require.NoError(t, err)
		require.Equal(t, want, res.Verdict, "MaxMsgs %d: %+v", maxMsgs, res)
		if want == tracecheck.Rejected {
			require.Equal(t, 12, res.Line, "the second send")
			require.Contains(t, res.Reason, "2 messages are in flight at this line, each received by a later line, past the header's MaxMsgs = 1")
		}
	}
}

// FuzzCheck: no input makes Check panic; it returns a verdict or an
// input error.
func FuzzCheck(f *testing.F) {
	f.Add(header + "\n" + register("d1", 1))
	f.Add(header + "\n" + `{"action":"CoordRecvHeartbeat","params":{"m":{"kind":"hb","epoch":1,"liveness":"ALIVE","count":0,"closed":false}}}` + "\n")
	f.Add(header + "\n" + `{"p":"T.1","c":1,"action":"NodeStartHeartbeat"}` + "\n" +
		`{"p":"coord","c":3,"from":[{"p":"T.1","c":1}],"after":"x","action":"CoordLearnVersion"}` + "\n")
	f.Fuzz(func(t *testing.T, s string) {
		res, err := tracecheck.Check(strings.NewReader(s), "f", nil, tracecheck.Options{})
		if err == nil && res.Verdict == "" {
			t.Fatal("no verdict and no error")
		}
	})
}

// TestSchemaVersions: the implementation's writer and the checker speak
// the same schema version.
func TestSchemaVersions(t *testing.T) {
	require.Equal(t, tracecheck.SchemaVersion, trace.SchemaVersion)
}

// TestBlankLinesSkipped: a blank line (empty, spaces, a CR) between two
// action lines is skipped, and still counted in the line numbers.
func TestBlankLinesSkipped(t *testing.T) {
	body := `{"action":"NodeStartHeartbeat"}` + "\n\n  \n\r\n" + `{"action":"CoordLearnVersion","vars":{"coordEpoch":14}}` + "\n"
	res, err := tracecheck.Check(strings.NewReader(header+"\n"+body), "b", nil, tracecheck.Options{})
	require.NoError(t, err)
	require.Equal(t, tracecheck.Rejected, res.Verdict, "%+v", res)
	require.Equal(t, 1, res.Lines, "the blank lines are no actions")
	require.Equal(t, 6, res.Line, "the blank lines are counted")
}

// TestWhiteSpaceInALine: JSON white space between a line's tokens changes
// nothing: the line is the same action with the same values.
func TestWhiteSpaceInALine(t *testing.T) {
	for _, l := range []string{`{"action":"CoordLearnVersion","vars":{"coordEpoch":1}}`,
		"{ \"action\" :\t\"CoordLearnVersion\" , \"vars\" : { \"coordEpoch\" : 1 } }"} {
		res, err := tracecheck.Check(strings.NewReader(header+"\n"+l+"\n"), "w", nil, tracecheck.Options{})
		require.NoError(t, err, l)
		require.Equal(t, tracecheck.OK, res.Verdict, "%s: %+v", l, res)
		require.Equal(t, 1, res.Lines)
	}
}
