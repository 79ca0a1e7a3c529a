package tracecheck_test

import (
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
	"github.com/drainproof/drainproof/spec"
)

// checkText checks a trace held in a string.
func checkText(t *testing.T, trace string) (tracecheck.Result, error) {
	t.Helper()
	return tracecheck.Check(strings.NewReader(trace), "t.ndjson", nil, tracecheck.Options{})
}

// A string with an escape is read as the string it spells: an action
// named with a \u escape is that action; a bad escape is an input error
// naming the line.
func TestEscapedStringsAreUnquoted(t *testing.T) {
	res, err := checkText(t, header+"\n"+`{"action":"Coord\u004cearnVersion","vars":{"coordEpoch":1}}`+"\n")
	require.NoError(t, err)
	require.Equal(t, tracecheck.OK, res.Verdict, "%+v", res)
	require.Equal(t, 1, res.Lines)

	_, err = checkText(t, header+"\n"+`{"action":"Coord\qLearnVersion"}`+"\n")
	var ie *tracecheck.InputError
	require.True(t, errors.As(err, &ie), "want an input error, got %v", err)
	require.Equal(t, 2, ie.Line)
	require.Contains(t, err.Error(), "bad string")
}

// Each line a stamp's from names has a process: an empty name there is an
// input error, as an empty p of the line's own stamp is.
func TestFromWithoutAProcessIsAnInputError(t *testing.T) {
	for _, from := range []string{`{"p":"","c":1}`, `{"c":1}`} {
		_, err := checkText(t, header+"\n"+`{"p":"T.1","c":2,"from":[`+from+`],"action":"NodeStartHeartbeat"}`+"\n")
		var ie *tracecheck.InputError
		require.True(t, errors.As(err, &ie), "%s: want an input error, got %v", from, err)
		require.Equal(t, 2, ie.Line)
		require.Contains(t, err.Error(), `a line of from needs "p" and "c"`)
	}
}

// WriteRun writes each restart of T as the next process, T.2, T.3, …:
// its file, its header (process, and the process it succeeds) and its
// first line's stamp (after) name it and the one before.
func TestWriteRunNamesEachRestart(t *testing.T) {
	m, err := spec.New(configs()["heartbeat"])
	require.NoError(t, err)
	restarts := 0
	for seed := uint64(1); seed <= 5; seed++ {
		dir := t.TempDir()
		files, err := tracecheck.WriteRun(dir, m, seed, 400, "test")
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(files), 3)
		for k, f := range files[3:] {
			proc, after := fmt.Sprintf("T.%d", k+2), fmt.Sprintf("T.%d", k+1)
			require.Equal(t, filepath.Join(dir, proc+".ndjson"), f, "seed %d", seed)
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			lines := strings.SplitN(string(data), "\n", 3)
			require.Len(t, lines, 3, "%s: a header and a first line", f)
			var h tracecheck.Header
			require.NoError(t, json.Unmarshal([]byte(lines[0]), &h))
			require.Equal(t, proc, h.Process)
			require.Equal(t, after, h.After)
			require.Contains(t, lines[1], `"after":"`+after+`"`, "%s: its first line", f)
			restarts++
		}
	}
	require.Positive(t, restarts, "the walks restart T")
}

// A stamp whose from is empty ("from":[]) depends on no line: the line is
// read as one without from.
func TestEmptyFromDependsOnNothing(t *testing.T) {
	for _, l := range []string{`{"p":"T.1","c":1,"from":[],"action":"NodeStartHeartbeat"}`,
		`{"p":"T.1","c":1,"from":[ ],"action":"NodeStartHeartbeat"}`} {
		res, err := checkText(t, header+"\n"+l+"\n")
		require.NoError(t, err, l)
		require.Equal(t, tracecheck.OK, res.Verdict, "%s: %+v", l, res)
		require.Equal(t, 1, res.Lines)
	}
}

// The traces of one run may write the header's model with its keys in any
// order: a run whose processes write the same model differently is one run,
// checked as before; one whose model differs in a value is not one run.
func TestRunModelWithItsKeysInAnyOrder(t *testing.T) {
	m, err := spec.New(configs()["heartbeat"])
	require.NoError(t, err)
	files, err := tracecheck.WriteRun(t.TempDir(), m, 1, 100, "test")
	require.NoError(t, err)
	want, err := tracecheck.CheckRun(files, "run", nil, tracecheck.Options{})
	require.NoError(t, err)
	require.Equal(t, tracecheck.OK, want.Verdict, "%+v", want)

	data, err := os.ReadFile(files[1])
	require.NoError(t, err)
	head, rest, _ := strings.Cut(string(data), "\n")
	rewrite := func(edit func(key string, v json.RawMessage) json.RawMessage) {
		var h, model map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(head), &h))
		require.NoError(t, json.Unmarshal(h["model"], &model))
		keys := make([]string, 0, len(model))
		for k := range model {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		slices.Reverse(keys)
		var b strings.Builder
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, err := json.Marshal(k)
			require.NoError(t, err)
			b.Write(kb)
			b.WriteByte(':')
			b.Write(edit(k, model[k]))
		}
		h["model"] = json.RawMessage("{" + b.String() + "}")
		hb, err := json.Marshal(h)
		require.NoError(t, err)
		require.NotContains(t, head, string(h["model"]), "the model's text differs")
		require.NoError(t, os.WriteFile(files[1], []byte(string(hb)+"\n"+rest), 0o644))
	}

	rewrite(func(_ string, v json.RawMessage) json.RawMessage { return v })
	got, err := tracecheck.CheckRun(files, "run", nil, tracecheck.Options{})
	require.NoError(t, err, "the same model, its keys in another order")
	require.Equal(t, want.Verdict, got.Verdict)
	require.Equal(t, want.Lines, got.Lines)

	rewrite(func(k string, v json.RawMessage) json.RawMessage {
		if k == "MaxReg" {
			return json.RawMessage("1")
		}
		return v
	})
	_, err = tracecheck.CheckRun(files, "run", nil, tracecheck.Options{})
	var ie *tracecheck.InputError
	require.True(t, errors.As(err, &ie), "want an input error, got %v", err)
	require.Contains(t, err.Error(), "its model differs")
}
