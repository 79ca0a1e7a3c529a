package tracecheck_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/tracecheck"
)

// A line that ends inside a string is an input error naming the line,
// in memory and streamed, wherever the string is (a key, the action's
// name, a value) and whatever follows the cut: nothing (a writer stopped
// mid-line; no capacity past the data, or the rest of the line past it),
// a newline, or a newline and another line.
func TestAStringCutOffIsAnInputError(t *testing.T) {
	next := `{"action":"NodeStartHeartbeat"}` + "\n"
	for _, line := range []string{
		`{"action":"NodeStartHe`,
		`{"action":"NodeStartHeartbeat","vars":{"clos`,
		`{"action":"NodeStartHeartbeat","vars":{"liveness":"ALI`,
	} {
		whole := header + "\n" + line
		n := len(whole)
		for what, data := range map[string][]byte{
			"at the end, no capacity past it": bytes.Clone([]byte(whole))[:n:n],
			"at the end, bytes past it":       []byte(whole + `ve"}}` + "\n")[:n],
			"a newline after it":              []byte(whole + "\n"),
			"another line after it":           []byte(whole + "\n" + next),
		} {
			_, err := tracecheck.CheckBytes(data, "t.ndjson", nil, tracecheck.Options{})
			var ie *tracecheck.InputError
			require.True(t, errors.As(err, &ie), "%s, %s: want an input error, got %v", line, what, err)
			require.Equal(t, 2, ie.Line, "%s, %s", line, what)
			require.Contains(t, err.Error(), "unterminated string", "%s, %s", line, what)
			_, err = checkText(t, string(data))
			require.True(t, errors.As(err, &ie), "%s, %s, streamed: want an input error, got %v", line, what, err)
			require.Equal(t, 2, ie.Line, "%s, %s, streamed", line, what)
			require.Contains(t, err.Error(), "unterminated string", "%s, %s, streamed", line, what)
		}
	}
}

// An empty object is no parameters or no observations: every line of a
// walk without params written with "params":{} checks to the same result
// as the walk, and so does a line without vars written with "vars":{}.
func TestEmptyParamsAndVarsCheckAlike(t *testing.T) {
	for name, cfg := range configs() {
		for seed := uint64(1); seed <= 3; seed++ {
			lines, _ := traceOf(t, cfg, seed, 200)
			data := encode(t, cfg, lines)
			rows := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
			empty := 0
			for i, l := range lines {
				if l.Params == nil {
					rows[i+1] = strings.Replace(rows[i+1], `"action":"`+l.Action+`"`, `"action":"`+l.Action+`","params":{}`, 1)
					empty++
				}
			}
			require.Positive(t, empty, "%s seed %d: every line has params", name, seed)
			got := check(t, []byte(strings.Join(rows, "\n")+"\n"))
			sameResult(t, check(t, data), got, fmt.Sprintf("%s seed %d", name, seed))
		}
	}
	reg := `{"action":"CollectorSendRegister","params":{"d":"d1","b":"b1"}`
	want, err := checkText(t, header+"\n"+reg+"}\n")
	require.NoError(t, err)
	require.Equal(t, tracecheck.OK, want.Verdict, "%+v", want)
	got, err := checkText(t, header+"\n"+reg+`,"vars":{}}`+"\n")
	require.NoError(t, err)
	sameResult(t, want, got, `"vars":{}`)
}
