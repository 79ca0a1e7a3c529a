package tracecheck_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/impl/trace"
	"github.com/drainproof/drainproof/spec"
)

// A blank line in a process's trace of a run is skipped, as in a single
// trace, whether the trace is held in memory or read line by line: the
// lines after it are read one by one, and a line's number in its
// process's trace counts the blank lines before it.
func TestBlankLinesInAProcessTraceAreSkipped(t *testing.T) {
	tLines := []string{`{"p":"T","c":1,` + hbStart, "", `{"p":"T","c":2,` + hbRep, "",
		`{"p":"T","c":3,` + hbRead, `{"p":"T","c":4,` + hbSend}
	recv := `{"p":"coord","c":5,"from":[{"p":"T","c":4}],` + hbRecv
	learn := `{"p":"coord","c":6,"action":"CoordLearnVersion","vars":{"coordEpoch":14}}`
	for _, small := range []int{1 << 20, 0} {
		restore := tracecheck.SetSmallTrace(small)
		res, err := tracecheck.CheckRun(run(t, map[string][]string{"T": tLines, "coord": {recv}}, nil), "run", nil, tracecheck.Options{})
		require.NoError(t, err, "small trace %d", small)
		require.Equal(t, tracecheck.OK, res.Verdict, "small trace %d: %+v", small, res)
		require.Equal(t, 5, res.Lines, "small trace %d", small)

		res, err = tracecheck.CheckRun(run(t, map[string][]string{"T": tLines, "coord": {recv, "", learn}}, nil), "run", nil, tracecheck.Options{})
		restore()
		require.NoError(t, err, "small trace %d", small)
		require.Equal(t, tracecheck.Rejected, res.Verdict, "small trace %d: %+v", small, res)
		require.Equal(t, 5, res.Lines, "small trace %d", small)
		require.Equal(t, "coord", res.Process)
		require.Equal(t, 4, res.ProcessLine, "small trace %d: the header, the receive, the blank line, the rejected line", small)
	}
}

// WriteRun names the lines a line depends on (its stamp's from) only on a
// line that depends on some: a receive (the send of its message, which
// every receive of a walk has), an upgrade restart. No line carries an
// empty from.
func TestWriteRunWritesFromOnlyWhereALineDependsOnOne(t *testing.T) {
	m, err := spec.New(configs()["heartbeat"])
	require.NoError(t, err)
	with, without := 0, 0
	for seed := uint64(1); seed <= 3; seed++ {
		files, err := tracecheck.WriteRun(t.TempDir(), m, seed, 300, "test")
		require.NoError(t, err)
		for _, f := range files {
			fh, err := os.Open(f)
			require.NoError(t, err)
			sc := bufio.NewScanner(fh)
			sc.Buffer(nil, 1<<20)
			for i := 0; sc.Scan(); i++ {
				if i == 0 {
					continue // the header
				}
				var l struct {
					From   *[]json.RawMessage `json:"from"`
					Action string             `json:"action"`
				}
				require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
				if strings.Contains(l.Action, "Recv") && l.Action != "ServiceRecvRegister" {
					require.NotNil(t, l.From, "seed %d: %s line %d: a receive names its message's send: %s", seed, filepath.Base(f), i+1, sc.Text())
				}
				if l.From == nil {
					without++
					continue
				}
				require.NotEmpty(t, *l.From, "seed %d: %s line %d: %s", seed, filepath.Base(f), i+1, sc.Text())
				with++
			}
			require.NoError(t, sc.Err())
			require.NoError(t, fh.Close())
		}
	}
	require.Positive(t, with, "no line depends on another")
	require.Positive(t, without, "every line depends on another")
}

// A receive that says it keeps no copy of its message ("keep": false) is
// taken at its word in a single trace: a later receive of the same
// message, with no send of it between, is rejected there, where the walk
// without the word is accepted (the lookahead keeps the copy the later
// receive needs).
func TestAReceiveThatKeepsNoCopyIsTakenAtItsWord(t *testing.T) {
	cfg := configs()["heartbeat"]
	key := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	tried := 0
	for seed := uint64(1); seed <= 8 && tried < 4; seed++ {
		lines, _ := traceOf(t, cfg, seed, 300)
		// first, again: two receives of one message with no send of it
		// between them.
		first, again := -1, -1
		lastRecv := map[string]int{}
		for i, l := range lines {
			recv := strings.Contains(l.Action, "Recv") && l.Action != "ServiceRecvRegister" || strings.HasPrefix(l.Action, "LogCoordAnswer")
			if mp, ok := l.Params["m"]; ok && recv {
				if j, ok := lastRecv[key(mp)]; ok {
					first, again = j, i
					break
				}
				lastRecv[key(mp)] = i
			}
			for _, k := range []string{"m", "reply"} {
				if mp, ok := l.Params[k]; ok && (k == "reply" || !recv) {
					delete(lastRecv, key(mp))
				}
			}
		}
		if first < 0 {
			continue
		}
		lines = lines[:again+1]
		res := check(t, encode(t, cfg, lines))
		require.Equal(t, tracecheck.OK, res.Verdict, "seed %d: %+v", seed, res)
		params := map[string]any{"keep": false}
		for k, v := range lines[first].Params {
			params[k] = v
		}
		lines[first].Params = params
		res = check(t, encode(t, cfg, lines))
		require.Equal(t, tracecheck.Rejected, res.Verdict, "seed %d: line %d said keep false: %+v", seed, first+2, res)
		require.Equal(t, again+2, res.Line, "seed %d: the receive again", seed)
		tried++
	}
	require.Positive(t, tried, "no walk received a message twice")
}

// CheckFile checks the trace in a file as CheckBytes checks its bytes,
// and a file that cannot be read is an input error naming it.
func TestCheckFileChecksTheFilesTrace(t *testing.T) {
	cfg := configs()["heartbeat"]
	lines, _ := traceOf(t, cfg, 3, 200)
	lines = append(lines, tracecheck.Line{Action: "CoordLearnVersion", Vars: map[string]any{"coordEpoch": 14}})
	data := encode(t, cfg, lines)
	path := filepath.Join(t.TempDir(), "t.ndjson")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	got, err := tracecheck.CheckFile(path, nil, tracecheck.Options{})
	require.NoError(t, err)
	want, err := tracecheck.CheckBytes(data, path, nil, tracecheck.Options{})
	require.NoError(t, err)
	require.Equal(t, tracecheck.Rejected, want.Verdict, "%+v", want)
	require.Equal(t, path, got.File)
	got.Seconds, want.Seconds = 0, 0
	require.Equal(t, want, got)

	missing := filepath.Join(t.TempDir(), "none.ndjson")
	_, err = tracecheck.CheckFile(missing, nil, tracecheck.Options{})
	var ie *tracecheck.InputError
	require.True(t, errors.As(err, &ie), "want an input error, got %v", err)
	require.Equal(t, missing, ie.File)
}

// A line cut off right after a value (a boolean or an integer, the last
// bytes of the line) is an input error past the value: the object wants
// a ',' or a '}' at the column after the line's last byte.
func TestALineCutOffAfterAValueWantsTheObjectsEnd(t *testing.T) {
	for _, line := range []string{
		`{"action":"ServiceStartReport","vars":{"closing":true`,
		`{"action":"ServiceStartReport","vars":{"closing":false`,
		`{"action":"NodeSendHeartbeat","params":{"m":{"kind":"hb","epoch":1,"liveness":"ALIVE","count":0,"closed":false`,
		`{"action":"BrokerAdmit","vars":{"count":{"b1":1`,
		`{"action":"NodeSendHeartbeat","params":{"m":{"kind":"hb","epoch":12`,
	} {
		_, err := tracecheck.CheckBytes([]byte(header+"\n"+line+"\n"), "t.ndjson", nil, tracecheck.Options{})
		var ie *tracecheck.InputError
		require.True(t, errors.As(err, &ie), "%s: want an input error, got %v", line, err)
		require.Equal(t, 2, ie.Line, line)
		require.Contains(t, err.Error(), fmt.Sprintf("column %d: want ',' or '}'", len(line)+1), line)
	}
}

// A string is read whole, to its closing quote, whatever it holds: one
// that opens with an escaped quote is that quote and the rest (an action
// no model has), and a raw control character in it is an input error
// that says so.
func TestAStringIsReadToItsClosingQuote(t *testing.T) {
	_, err := checkText(t, header+"\n"+`{"action":"\"NodeStartHeartbeat"}`+"\n")
	var ie *tracecheck.InputError
	require.True(t, errors.As(err, &ie), "want an input error, got %v", err)
	require.Equal(t, 2, ie.Line)
	require.Contains(t, err.Error(), `unknown action "\"NodeStartHeartbeat"`)

	for _, line := range []string{"{\"action\":\"Node\tStartHeartbeat\"}", "{\"action\":\"\x01\"}"} {
		_, err := checkText(t, header+"\n"+line+"\n")
		require.True(t, errors.As(err, &ie), "%q: want an input error, got %v", line, err)
		require.Equal(t, 2, ie.Line, "%q", line)
		require.Contains(t, err.Error(), "control character in a string", "%q", line)
	}
}

// A run read line by line (its traces too large to hold in memory)
// closes every trace it opened: when it is checked, merged, or refused
// (here for two traces of one process).
func TestARunClosesItsTraces(t *testing.T) {
	if _, err := os.ReadDir("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd to count the open files")
	}
	defer tracecheck.SetSmallTrace(0)()
	m, err := spec.New(configs()["heartbeat"])
	require.NoError(t, err)
	files, err := tracecheck.WriteRun(t.TempDir(), m, 1, 100, "test")
	require.NoError(t, err)
	openFiles := func() int {
		fds, err := os.ReadDir("/proc/self/fd")
		require.NoError(t, err)
		return len(fds)
	}
	res, err := tracecheck.CheckRun(files, "run", nil, tracecheck.Options{})
	require.NoError(t, err)
	require.Equal(t, tracecheck.OK, res.Verdict, "%+v", res)
	before := openFiles()
	for i := 0; i < 3; i++ {
		res, err = tracecheck.CheckRun(files, "run", nil, tracecheck.Options{})
		require.NoError(t, err)
		require.Equal(t, tracecheck.OK, res.Verdict, "%+v", res)
		require.Equal(t, before, openFiles(), "after CheckRun")
		_, err = tracecheck.Merge(files)
		require.NoError(t, err)
		require.Equal(t, before, openFiles(), "after Merge")
		_, err = tracecheck.CheckRun(append(files[:len(files):len(files)], files[0]), "run", nil, tracecheck.Options{})
		require.ErrorContains(t, err, "a second trace of process")
		require.Equal(t, before, openFiles(), "after a refused run")
	}
}

// The line of a run that no order can place (it depends on a line that
// comes after it) is reported as the merged trace's next line: the line
// after the header and every line placed before it, as Merge writes them.
func TestACutRunsLineIsTheMergedTracesNextLine(t *testing.T) {
	tLines := []string{`{"p":"T","c":1,` + hbStart, `{"p":"T","c":2,` + hbRep, `{"p":"T","c":3,` + hbRead, `{"p":"T","c":4,` + hbSend}
	files := run(t, map[string][]string{"T": tLines, "coord": {`{"p":"coord","c":2,"from":[{"p":"T","c":4}],` + hbRecv}}, nil)
	res, err := tracecheck.CheckRun(files, "run", nil, tracecheck.Options{})
	require.NoError(t, err)
	require.Equal(t, tracecheck.Rejected, res.Verdict, "%+v", res)
	mg, err := tracecheck.Merge(files)
	require.NoError(t, err)
	require.NotNil(t, mg.Cut)
	placed := strings.Count(string(mg.Data), "\n") - 1 // the header aside
	require.Equal(t, placed, res.Lines, "the lines placed before the cut are explained")
	require.Equal(t, placed+2, res.Line, "the header, the lines placed, then the cut line")
	require.Equal(t, "coord", res.Process)
	require.Equal(t, 2, res.ProcessLine)
}

// A rejection's candidates list the observable variables of each state
// (epoch, coordEpoch, …) as TLA+ values, and leave out registrations, the
// collectors' budget a trace abstracts away.
func TestARejectionsCandidatesListTheStatesVariables(t *testing.T) {
	res, err := checkText(t, header+"\n"+`{"action":"NodeStartHeartbeat"}`+"\n"+`{"action":"CoordLearnVersion","vars":{"coordEpoch":14}}`+"\n")
	require.NoError(t, err)
	require.Equal(t, tracecheck.Rejected, res.Verdict, "%+v", res)
	require.NotEmpty(t, res.Candidates)
	for _, c := range res.Candidates {
		names := map[string]bool{}
		for _, v := range c.State {
			names[v.Name] = true
		}
		for _, want := range []string{"epoch", "liveness", "coordEpoch", "pc", "count", "sample"} {
			require.True(t, names[want], "%s not among the candidate's variables %v", want, c.State)
		}
		require.False(t, names["registrations"], "registrations among the candidate's variables %v", c.State)
	}
}

// A run has the bound on messages in flight a single trace has: two
// heartbeats in flight, each received by a later line, are past
// MaxMsgs = 1 at the second send (rejected there) and within MaxMsgs = 2;
// so are one in flight and one that no line receives, which the network
// holds at its send before it is lost.
func TestARunsMessagesInFlightAreBoundedByMaxMsgs(t *testing.T) {
	hb := func(count int) (send, recv string) {
		m := fmt.Sprintf(`{"kind":"hb","epoch":1,"liveness":"ALIVE","count":%d,"closed":false}`, count)
		return `{"action":"NodeStartHeartbeat"}` + "\n" + `{"action":"ServiceStartReport"}` + "\n" +
				`{"action":"ServiceReadBroker","params":{"b":"b1"}}` + "\n" + `{"action":"NodeSendHeartbeat","params":{"m":` + m + `}}` + "\n",
			`{"action":"CoordRecvHeartbeat","params":{"m":` + m + `}}` + "\n"
	}
	send0, recv0 := hb(0)
	send1, recv1 := hb(1)
	for _, body := range []string{send0 + register("d1", 1) + send1 + recv0 + recv1, send0 + register("d1", 1) + send1 + recv0} {
		for maxMsgs, want := range map[int]tracecheck.Verdict{1: tracecheck.Rejected, 2: tracecheck.OK} {
			h := strings.Replace(strings.Replace(header, `"MaxMsgs":8`, fmt.Sprintf(`"MaxMsgs":%d`, maxMsgs), 1),
				`"drainproof_trace":1`, `"drainproof_trace":2`, 1)
			single, err := checkText(t, h+"\n"+body)
			require.NoError(t, err)
			res, err := tracecheck.CheckRun(asRun(t, []byte(h+"\n"+body)), "run", nil, tracecheck.Options{})
			require.NoError(t, err)
			for what, res := range map[string]tracecheck.Result{"single": single, "run": res} {
				require.Equal(t, want, res.Verdict, "%s, MaxMsgs %d: %+v", what, maxMsgs, res)
				if want == tracecheck.Rejected {
					require.Equal(t, 12, res.Line, "%s: the second send", what)
					require.Contains(t, res.Reason, "2 messages are in flight at this line", what)
					require.Contains(t, res.Reason, "past the header's MaxMsgs = 1", what)
				}
			}
		}
	}
}

// A name one byte longer than the longest action's, or the longest
// variable's, is unknown (an input error), as any other name no action
// or variable has.
func TestANameJustLongerThanEveryNameIsUnknown(t *testing.T) {
	m, err := spec.New(configs()["heartbeat"])
	require.NoError(t, err)
	longest := func(names []string) string {
		return slices.MaxFunc(names, func(a, b string) int { return len(a) - len(b) })
	}
	action := longest(spec.ActionNames()) + "X"
	var vars []string
	for _, kv := range m.Vars(m.InitState()) {
		vars = append(vars, kv[0])
	}
	variable := longest(vars) + "X"
	for _, tc := range []struct{ line, msg string }{
		{`{"action":"` + action + `"}`, fmt.Sprintf("unknown action %q", action)},
		{`{"action":"NodeStartHeartbeat","vars":{"` + variable + `":1}}`, fmt.Sprintf("unknown variable %q", variable)},
	} {
		_, err := checkText(t, header+"\n"+tc.line+"\n")
		var ie *tracecheck.InputError
		require.True(t, errors.As(err, &ie), "%s: want an input error, got %v", tc.line, err)
		require.Equal(t, 2, ie.Line)
		require.Contains(t, err.Error(), tc.msg)
	}
}

// keep (whether the network keeps a copy of a message received) is a
// parameter of a receive only: on an action that receives nothing it is an
// input error, keep false as much as keep true.
func TestKeepIsAParameterOfAReceiveOnly(t *testing.T) {
	for _, keep := range []string{"false", "true"} {
		_, err := checkText(t, header+"\n"+`{"action":"ServiceReadBroker","params":{"b":"b1","keep":`+keep+`}}`+"\n")
		var ie *tracecheck.InputError
		require.True(t, errors.As(err, &ie), "keep %s: want an input error, got %v", keep, err)
		require.Equal(t, 2, ie.Line)
		require.Contains(t, err.Error(), "ServiceReadBroker takes no parameter keep or reply", "keep %s", keep)
	}
}

// A rejection's disagreements spell each value as a trace line does (JSON:
// a name in quotes, a number, a boolean), the line's and the model's.
func TestADisagreementSpellsValuesAsATraceDoes(t *testing.T) {
	res, err := checkText(t, header+"\n"+`{"action":"NodeStartHeartbeat","vars":{"liveness":"DRAINING","epoch":1}}`+"\n")
	require.NoError(t, err)
	require.Equal(t, tracecheck.Rejected, res.Verdict, "%+v", res)
	require.NotEmpty(t, res.Candidates)
	var got []tracecheck.Disagreement
	for _, c := range res.Candidates {
		for _, s := range c.Successors {
			got = append(got, s.Disagree...)
		}
	}
	require.Contains(t, got, tracecheck.Disagreement{Var: "liveness", Trace: `"DRAINING"`, Model: `"ALIVE"`}, "%+v", res.Candidates)
}

// An empty after names no process: it is refused where it can stand,
// at the line's start (an empty process name), and after the body (a
// stamp key out of place), so no line is read as a restarted
// coordinator's first line, nor as any other, on its word.
func TestAnEmptyAfterIsRefused(t *testing.T) {
	cfg := configs()["heartbeat"]
	lines, _ := traceOf(t, cfg, 1, 300)
	data := encodeMapped(t, cfg, trace.MappingSessions, lines)
	text := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	at := slices.IndexFunc(text[1:], func(l string) bool { return strings.HasPrefix(l, `{"action":"Coord`) }) + 1
	require.Positive(t, at, "the walk has no coordinator line")
	for _, l := range []string{`{"after":"",` + strings.TrimPrefix(text[at], "{"), strings.TrimSuffix(text[at], "}") + `,"after":""}`} {
		bad := append([]string(nil), text...)
		bad[at] = l
		_, err := tracecheck.Check(strings.NewReader(strings.Join(bad, "\n")+"\n"), "t.ndjson", nil, tracecheck.Options{})
		var ie *tracecheck.InputError
		require.ErrorAs(t, err, &ie, l)
		require.Equal(t, at+1, ie.Line, l)
	}
}

// A Line's String is its JSON line, as Write writes it; a line whose
// values JSON cannot encode is spelt as the error, in angle brackets.
func TestALinesStringIsItsJSONLine(t *testing.T) {
	l := tracecheck.Line{Action: "CoordLearnVersion", Vars: map[string]any{"coordEpoch": 1}}
	require.Equal(t, `{"action":"CoordLearnVersion","vars":{"coordEpoch":1}}`, l.String())
	bad := tracecheck.Line{Action: "CoordLearnVersion", Vars: map[string]any{"coordEpoch": make(chan int)}}
	require.True(t, strings.HasPrefix(bad.String(), "<"), bad.String())
	require.Contains(t, bad.String(), "unsupported type")
}

// A stamp key after a line's body is refused: the merge reads the stamp
// (p, c, after, from) at the line's start only, so an after that came
// later would mark no first line and skip the check of its predecessor.
func TestAStampKeyAfterTheBodyIsRefused(t *testing.T) {
	cfg := configs()["heartbeat"]
	lines, _ := traceOf(t, cfg, 1, 20)
	data := encodeMapped(t, cfg, trace.MappingSessions, lines)
	text := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for _, key := range []string{`"p":"T.1"`, `"c":3`, `"after":"T.0"`, `"from":[]`} {
		bad := append([]string(nil), text...)
		bad[2] = strings.TrimSuffix(bad[2], "}") + "," + key + "}"
		_, err := tracecheck.Check(strings.NewReader(strings.Join(bad, "\n")+"\n"), "t.ndjson", nil, tracecheck.Options{})
		var ie *tracecheck.InputError
		require.ErrorAs(t, err, &ie, "%s after the body", key)
		require.Equal(t, 3, ie.Line, "%s after the body", key)
		require.Contains(t, ie.Msg, "the stamp (p, c, after, from) comes first")
	}
}
