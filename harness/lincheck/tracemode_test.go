package lincheck

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/impl/trace"
)

// tracedRecording records seed in trace mode and returns the history and
// the trace's lines (the header first).
func tracedRecording(t *testing.T, seed int64, ops int) (*History, [][]byte) {
	t.Helper()
	cfg := Config{Clients: 8, Ops: ops, Seed: seed}
	var buf bytes.Buffer
	tw, err := trace.NewWriter(&buf, TraceHeader(cfg))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tracer = tw
	h, err := Record(context.Background(), cfg)
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return h, bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
}

// checkTrace validates lines with `checker trace`'s checker.
func checkTrace(t *testing.T, name string, lines [][]byte) tracecheck.Result {
	t.Helper()
	res, err := tracecheck.CheckBytes(append(bytes.Join(lines, []byte("\n")), '\n'), name, nil, tracecheck.Options{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// TestTracedRecording: a recording in trace mode is linearizable and its
// trace is a behaviour of the model (docs/trace.md): 8 dispatchers, one
// reporter through the node's heartbeat, the node driven to STOPPING by
// the coordinator before the close. Under each event-service bug of the
// zoo (-tags bugs, DRAINPROOF_BUG) but SampleBeforeClose the check or the
// trace fails (SampleBeforeClose needs a report that straddles the one
// close; the event service's granularity tests catch it).
func TestTracedRecording(t *testing.T) {
	for seed := range int64(3) {
		h, lines := tracedRecording(t, seed, 800)
		if res := Check(h, time.Minute); res.Outcome != Linearizable {
			t.Errorf("seed %d (bug %q): %s", seed, h.Bug, res.Outcome)
		}
		res := checkTrace(t, fmt.Sprintf("seed%d", seed), lines)
		if res.Verdict != tracecheck.OK {
			t.Errorf("seed %d (bug %q): trace %s at line %d: %s\n%s", seed, h.Bug, res.Verdict, res.Line, res.Reason, res.Text)
			continue
		}
		for _, a := range []string{"CoordSendStopping", "ServiceCloseBroker", "ServiceFinishClose", "NodeSendHeartbeat", "BrokerRegisterTableFails", "BrokerSubscribeRefused"} {
			if !containsAction(lines, a) {
				t.Errorf("seed %d: no %s in the trace", seed, a)
			}
		}
	}
}

// countVar matches an observed broker count in a trace line.
var countVar = regexp.MustCompile(`"count":\{"(c[0-9])":([0-9]+)`)

func containsAction(lines [][]byte, a string) bool {
	for _, l := range lines {
		if bytes.Contains(l, []byte(`"action":"`+a+`"`)) {
			return true
		}
	}
	return false
}

// TestMutatedTraceRejected: a traced recording's trace with one line
// dropped (a BrokerAdmit), two lines swapped (a REGISTER received before
// it is sent) or one count changed is rejected.
func TestMutatedTraceRejected(t *testing.T) {
	_, lines := tracedRecording(t, 0, 400)
	if res := checkTrace(t, "original", lines); res.Verdict != tracecheck.OK {
		t.Fatalf("the original trace: %s at line %d: %s", res.Verdict, res.Line, res.Reason)
	}
	find := func(action string) int {
		for i, l := range lines[1:] {
			if bytes.Contains(l, []byte(`"action":"`+action+`"`)) {
				return i + 1
			}
		}
		t.Fatalf("no %s", action)
		return 0
	}
	mutate := func(f func([][]byte) [][]byte) [][]byte {
		return f(append([][]byte(nil), lines...))
	}
	admit, send := find("BrokerAdmit"), find("CollectorSendRegister")
	count := -1 // the first line observing a broker's count
	for i, l := range lines[1:] {
		if countVar.Match(l) {
			count = i + 1
			break
		}
	}
	if count < 0 {
		t.Fatal("no count observed")
	}
	for name, m := range map[string][][]byte{
		"dropped BrokerAdmit": mutate(func(ls [][]byte) [][]byte { return append(ls[:admit], ls[admit+1:]...) }),
		"swapped CollectorSendRegister and ServiceRecvRegister": mutate(func(ls [][]byte) [][]byte {
			ls[send], ls[send+1] = ls[send+1], ls[send]
			return ls
		}),
		"count changed": mutate(func(ls [][]byte) [][]byte {
			ls[count] = countVar.ReplaceAllFunc(ls[count], func(m []byte) []byte {
				sm := countVar.FindSubmatch(m)
				n, _ := strconv.Atoi(string(sm[2]))
				return fmt.Appendf(nil, `"count":{"%s":%d`, sm[1], n+1)
			})
			return ls
		}),
	} {
		if slices.EqualFunc(m, lines, bytes.Equal) {
			t.Fatalf("%s: the mutation changed nothing", name)
		}
		if res := checkTrace(t, name, m); res.Verdict != tracecheck.Rejected {
			t.Errorf("%s: %s, want rejected", name, res.Verdict)
		}
	}
}
