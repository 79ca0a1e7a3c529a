package tracecheck_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/tracecheck"
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
