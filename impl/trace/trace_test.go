package trace_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/impl/trace"
)

func TestAppendLine(t *testing.T) {
	l := trace.Line{Action: "NodeRecvCommand",
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
	require.Equal(t, `{"action":"CollectorRegister","params":{"d":"d1"}}`,
		string(trace.AppendLine(nil, &trace.Line{Action: "CollectorRegister", D: "d1"})))
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
				w.Trace(&trace.Line{Action: "A", Vars: []trace.Var{trace.Int("g", int64(g)), trace.Int("i", int64(i))}})
			}
		}()
	}
	wg.Wait()
	require.Equal(t, 400, w.Lines())
	require.NoError(t, w.Close())
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 401)
	require.Equal(t, `{"drainproof_trace":1,"model":{"MaxEpoch":2},"source":"test"}`, lines[0])
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
	tr.Trace(&trace.Line{Action: "X", Vars: []trace.Var{trace.Int("count", 1)}})
	require.Len(t, a.All(), 1)
	require.Equal(t, a.All(), b.All())
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
