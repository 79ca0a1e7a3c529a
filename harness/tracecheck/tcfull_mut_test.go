package tracecheck_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/tracecheck"
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
