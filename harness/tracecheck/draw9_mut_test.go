package tracecheck_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/tracecheck"
)

// A line that is not JSON is an input error whose column is the 1-based
// position of the byte the scanner stopped at: the first byte of the line
// is column 1.
func TestAnInputErrorsColumnIsTheBadBytes(t *testing.T) {
	for _, tc := range []struct {
		line string
		bad  int // 0-based index of the offending byte
	}{
		{`}`, 0},
		{`{"action":}`, 10},
		{`{"action":"NodeStartHeartbeat",}`, 31},
		{`{"action" "NodeStartHeartbeat"}`, 10},
	} {
		_, err := tracecheck.CheckBytes([]byte(header+"\n"+tc.line+"\n"), "t.ndjson", nil, tracecheck.Options{})
		var ie *tracecheck.InputError
		require.True(t, errors.As(err, &ie), "%s: want an input error, got %v", tc.line, err)
		require.Equal(t, 2, ie.Line, tc.line)
		require.Contains(t, err.Error(), fmt.Sprintf("column %d:", tc.bad+1), tc.line)
	}
}

// A line cut off right after an escape inside a string (the escape's two
// bytes are the last of the line) is an unterminated string, in memory
// and streamed, whether a newline follows or not.
func TestAStringCutOffAfterAnEscapeIsAnInputError(t *testing.T) {
	for _, line := range []string{
		`{"action":"NodeStart\"`,
		`{"action":"NodeStartHeartbeat","vars":{"liveness":"AL\n`,
		`{"act\\`,
	} {
		for _, end := range []string{"", "\n"} {
			data := header + "\n" + line + end
			_, err := tracecheck.CheckBytes([]byte(data), "t.ndjson", nil, tracecheck.Options{})
			var ie *tracecheck.InputError
			require.True(t, errors.As(err, &ie), "%s: want an input error, got %v", line, err)
			require.Equal(t, 2, ie.Line, line)
			require.Contains(t, err.Error(), "unterminated string", line)
			_, err = checkText(t, data)
			require.True(t, errors.As(err, &ie), "%s, streamed: want an input error, got %v", line, err)
			require.Contains(t, err.Error(), "unterminated string", "%s, streamed", line)
		}
	}
}

// The first line of a successor whose header names its predecessor says
// which process it succeeds the same way, or the run is an input error
// that tells the two apart: a line that names none, and a line that names
// another process.
func TestAFirstLinesPredecessorMustBeItsHeaders(t *testing.T) {
	restart := `"action":"NodeCrashRestart","params":{"v":"new"},"vars":{"epoch":2}}`
	tLines := []string{`{"p":"T","c":1,` + hbStart}
	for _, tc := range []struct {
		name  string
		first string
		msg   string
	}{
		{"names none", `{"p":"T2","c":2,` + restart,
			"the first line of T2 names no process it succeeds (after), and its header says it succeeds T"},
		{"names another", `{"p":"T2","c":2,"after":"coord",` + restart,
			"the first line of T2 succeeds coord (after), and its header says it succeeds T"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			procs := map[string][]string{"T": tLines, "T2": {tc.first}, "coord": {`{"p":"coord","c":1,` + hbStart}}
			_, err := tracecheck.CheckRun(run(t, procs, map[string]string{"T2": "T"}), "run", nil, tracecheck.Options{})
			var ie *tracecheck.InputError
			require.ErrorAs(t, err, &ie)
			require.Contains(t, err.Error(), tc.msg)
			require.True(t, strings.HasSuffix(ie.File, "T2.ndjson"), ie.File)
		})
	}
}
