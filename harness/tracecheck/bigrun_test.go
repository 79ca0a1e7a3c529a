package tracecheck_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/spec"
)

// writeHeartbeatRun writes a run of two processes, T.1 and coord, of n
// lines: T's heartbeat (start, report, one read per broker, send) and
// the coordinator's receive, again and again (the state after each round
// is the state before it), each receive depending on its send.
func writeHeartbeatRun(t testing.TB, dir string, n int) []string {
	t.Helper()
	cfg := tracecheck.TraceConfig(spec.DefaultConfig())
	h := tracecheck.HeaderFor(cfg, "heartbeat rounds")
	var files []string
	open := func(p string) (*bufio.Writer, func()) {
		path := filepath.Join(dir, p+".ndjson")
		f, err := os.Create(path)
		require.NoError(t, err)
		files = append(files, path)
		w := bufio.NewWriterSize(f, 1<<20)
		hh := h
		hh.Process = p
		require.NoError(t, tracecheck.Write(w, hh, nil))
		return w, func() { require.NoError(t, w.Flush()); require.NoError(t, f.Close()) }
	}
	tw, tclose := open("T.1")
	cw, cclose := open("coord")
	hb := `{"kind":"hb","epoch":1,"liveness":"ALIVE","count":0,"closed":false}`
	var round []string
	round = append(round, `"action":"NodeStartHeartbeat","vars":{"sample":{"phase":"liveness","liveness":"ALIVE"}}}`,
		`"action":"ServiceStartReport"}`)
	for _, b := range cfg.Brokers {
		round = append(round, `"action":"ServiceReadBroker","params":{"b":"`+b+`"}}`)
	}
	round = append(round, `"action":"NodeSendHeartbeat","params":{"m":`+hb+`},"vars":{"epoch":1,"sample":{"phase":"idle"}}}`)
	var clock uint64
	for written := 0; written < n; {
		var send uint64
		for _, l := range round {
			clock++
			send = clock
			fmt.Fprintf(tw, `{"p":"T.1","c":%d,%s`+"\n", clock, l)
			written++
		}
		clock++
		fmt.Fprintf(cw, `{"p":"coord","c":%d,"from":[{"p":"T.1","c":%d}],"action":"CoordRecvHeartbeat","params":{"m":%s},"vars":{"coordEpoch":1,"coordLiveness":"ALIVE","coordCount":-1}}`+"\n",
			clock, send, hb)
		written++
	}
	tclose()
	cclose()
	return files
}

// TestLongRun checks a long run of heartbeat rounds; its length is
// DRAINPROOF_RUN_LINES (skipped when unset): the memory figure of
// docs/perf.md, with DRAINPROOF_RUN_DIR keeping the run for
// `checker trace DIR` under /usr/bin/time.
func TestLongRun(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("DRAINPROOF_RUN_LINES"))
	if err != nil {
		t.Skip("DRAINPROOF_RUN_LINES not set")
	}
	dir := os.Getenv("DRAINPROOF_RUN_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	files := writeHeartbeatRun(t, dir, n)
	res, err := tracecheck.CheckRun(files, dir, nil, tracecheck.Options{})
	require.NoError(t, err)
	require.Equal(t, tracecheck.OK, res.Verdict, res.Reason)
	t.Logf("%d lines in %.2fs", res.Lines, res.Seconds)
}

// TestHeartbeatRounds: the rounds are a run the model explains (so the
// long run measures a run that is accepted to its end), and one round
// with its receive depending on the next round's send is not.
func TestHeartbeatRounds(t *testing.T) {
	dir := t.TempDir()
	files := writeHeartbeatRun(t, dir, 600)
	res, err := tracecheck.CheckRun(files, dir, nil, tracecheck.Options{})
	require.NoError(t, err)
	require.Equal(t, tracecheck.OK, res.Verdict, res.Reason)
	require.Equal(t, 600, res.Lines)
	data, err := os.ReadFile(files[1])
	require.NoError(t, err)
	// The first receive (clock 5) names the second round's send (clock 9).
	first := `"c":5,"from":[{"p":"T.1","c":4}]`
	require.True(t, strings.Contains(string(data), first))
	bad := strings.Replace(string(data), first, `"c":5,"from":[{"p":"T.1","c":9}]`, 1)
	require.NoError(t, os.WriteFile(files[1], []byte(bad), 0o644))
	res, err = tracecheck.CheckRun(files, dir, nil, tracecheck.Options{})
	require.NoError(t, err)
	require.Equal(t, tracecheck.Rejected, res.Verdict)
	require.Contains(t, res.Reason, "happens-before")
}
