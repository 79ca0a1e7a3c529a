package tracecheck_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/spec"
)

// A line cut off inside true or false is an input error naming the line,
// whatever the bytes past the end of the data are: none (the data's
// capacity ends with it) or the rest of the literal (the data a prefix of
// a larger buffer).
func TestALiteralCutOffAtTheEndIsAnInputError(t *testing.T) {
	for _, cut := range []string{`tr`, `tru`, `fals`} {
		line := `{"action":"NodeStartHeartbeat","vars":{"closing":` + cut
		whole := header + "\n" + line + map[bool]string{true: "ue}}\n", false: "e}}\n"}[strings.HasPrefix(cut, "t")]
		n := len(header) + 1 + len(line)
		for what, data := range map[string][]byte{
			"no capacity past the data": bytes.Clone([]byte(whole))[:n:n],
			"the literal past the data": []byte(whole)[:n],
		} {
			_, err := tracecheck.CheckBytes(data, "t.ndjson", nil, tracecheck.Options{})
			var ie *tracecheck.InputError
			require.True(t, errors.As(err, &ie), "%s, %s: want an input error, got %v", cut, what, err)
			require.Equal(t, 2, ie.Line, "%s, %s", cut, what)
			require.Contains(t, err.Error(), "want true or false", "%s, %s", cut, what)
		}
	}
}

// A stamped line after lines without a stamp is an input error naming
// that line: a trace is stamped on every line or on none.
func TestAStampedLineAfterUnstampedOnesIsAnInputError(t *testing.T) {
	plain := `{"action":"CoordLearnVersion","vars":{"coordEpoch":1}}`
	stamped := `{"p":"coord","c":2,"action":"MaintainerReportProgress","vars":{"work":1}}`
	for _, lines := range [][]string{{plain, stamped}, {plain, plain, stamped}} {
		_, err := checkText(t, header+"\n"+strings.Join(lines, "\n")+"\n")
		var ie *tracecheck.InputError
		require.True(t, errors.As(err, &ie), "want an input error, got %v", err)
		require.Equal(t, len(lines)+1, ie.Line)
		require.Contains(t, err.Error(), "earlier lines have no stamp")
	}
}

// A walk of a model with two brokers at its smallest bound on messages
// in flight is accepted: a collector's REGISTER in flight (the first
// dispatcher's to the second broker among them) is not a message of
// that bound.
func TestRegistersInFlightAreNotMessagesOfTheBound(t *testing.T) {
	cfg := spec.DefaultConfig()
	cfg.Brokers, cfg.MaxMsgs = []string{"b1", "b2"}, 1
	regs := 0
	for seed := uint64(1); seed <= 6; seed++ {
		lines, _ := traceOf(t, cfg, seed, 200)
		for _, l := range lines {
			if l.Action == "CollectorSendRegister" && l.Params["d"] == "d1" && l.Params["b"] == "b2" {
				regs++
			}
		}
		res := check(t, encode(t, cfg, lines))
		require.Equal(t, tracecheck.OK, res.Verdict, "seed %d: %+v", seed, res)
	}
	require.Positive(t, regs, "no walk sent REGISTER(d1, b2)")
}

// runLine is a line of a run's process trace, with where it is.
type runLine struct {
	file  string
	index int // in the file, from 0 (the header)
	clock uint64
	line  map[string]any
}

// A receive that says it keeps no copy of its message ("keep": false) is
// taken at its word in a run as in a single trace: a later receive of
// the same message, with no send of it between, is then rejected.
func TestAReceiveThatKeepsNoCopyIsTakenAtItsWordInARun(t *testing.T) {
	m, err := spec.New(configs()["heartbeat"])
	require.NoError(t, err)
	tried := 0
	for seed := uint64(1); seed <= 8 && tried < 4; seed++ {
		dir := t.TempDir()
		files, err := tracecheck.WriteRun(dir, m, seed, 300, "test")
		require.NoError(t, err)
		var all []runLine
		text := map[string][]string{}
		for _, f := range files {
			fh, err := os.Open(f)
			require.NoError(t, err)
			sc := bufio.NewScanner(fh)
			sc.Buffer(nil, 1<<20)
			for i := 0; sc.Scan(); i++ {
				text[f] = append(text[f], sc.Text())
				if i == 0 {
					continue
				}
				var l map[string]any
				d := json.NewDecoder(strings.NewReader(sc.Text()))
				d.UseNumber()
				require.NoError(t, d.Decode(&l))
				c, err := l["c"].(json.Number).Int64()
				require.NoError(t, err)
				all = append(all, runLine{f, i, uint64(c), l})
			}
			require.NoError(t, fh.Close())
		}
		sort.Slice(all, func(i, j int) bool { return all[i].clock < all[j].clock })
		// kept: the first of two receives of a message with no send of it
		// between them.
		key := func(v any) string { b, _ := json.Marshal(v); return string(b) }
		lastRecv := map[string]*runLine{}
		var kept *runLine
		for i := range all {
			l := &all[i]
			a, _ := l.line["action"].(string)
			params, _ := l.line["params"].(map[string]any)
			recv := strings.Contains(a, "Recv") && a != "ServiceRecvRegister" || strings.HasPrefix(a, "LogCoordAnswer")
			if mp, ok := params["m"]; ok && recv {
				if p := lastRecv[key(mp)]; p != nil && kept == nil {
					kept = p
				}
				lastRecv[key(mp)] = l
			}
			for _, k := range []string{"m", "reply"} {
				if mp, ok := params[k]; ok && (k == "reply" || !recv) {
					delete(lastRecv, key(mp))
				}
			}
		}
		if kept == nil {
			continue
		}
		res, err := tracecheck.CheckRun(files, "run", nil, tracecheck.Options{})
		require.NoError(t, err)
		require.Equal(t, tracecheck.OK, res.Verdict, "seed %d: %+v", seed, res)
		lines := text[kept.file]
		at := strings.Index(lines[kept.index], `"params":{`)
		require.Positive(t, at, lines[kept.index])
		at += len(`"params":{`)
		lines[kept.index] = lines[kept.index][:at] + `"keep":false,` + lines[kept.index][at:]
		require.NoError(t, os.WriteFile(kept.file, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
		res, err = tracecheck.CheckRun(files, "run", nil, tracecheck.Options{})
		require.NoError(t, err)
		require.Equal(t, tracecheck.Rejected, res.Verdict, "seed %d: %s line %d said keep false: %+v", seed, filepath.Base(kept.file), kept.index+1, res)
		tried++
	}
	require.Positive(t, tried, "no run received a message twice")
}
