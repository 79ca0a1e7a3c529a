package tracecheck_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/spec"
)

// guidedRun writes, as a run (WriteRunWithout), the walk of cfg's model
// that never crash-restarts T, and returns its files and the path of
// T.2's trace: the process the upgrade restart starts.
func guidedRun(t *testing.T, cfg spec.Config, seed uint64, steps int) (files []string, t2 string) {
	t.Helper()
	m, err := spec.New(cfg)
	require.NoError(t, err)
	dir := t.TempDir()
	files, err = tracecheck.WriteRunWithout(dir, m, seed, steps, []string{"NodeCrashRestart"}, "test")
	require.NoError(t, err)
	t2 = filepath.Join(dir, "T.2.ndjson")
	require.Contains(t, files, t2, "seed %d: no T.2", seed)
	return files, t2
}

// procLines reads a process's trace: its header and its lines, without
// their newlines.
func procLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// stampRef is a stamp's reference to a line: its process and clock.
type stampRef struct {
	P string `json:"p"`
	C uint64 `json:"c"`
}

// stamped is a run's line (or header: process and after) as its keys say.
type stamped struct {
	stampRef
	Process string     `json:"process"`
	After   string     `json:"after"`
	From    []stampRef `json:"from"`
	Action  string     `json:"action"`
}

func readStamped(t *testing.T, text string) stamped {
	t.Helper()
	var s stamped
	require.NoError(t, json.Unmarshal([]byte(text), &s), text)
	return s
}

// A run written from a walk without crash restarts crosses an upgrade
// restart: its lines are the walk's, the restart is T.2's first line,
// which, as T.2's header, names T.1 as the process it succeeds and
// depends on the coordinator's last line before it; T.2 goes on past it,
// and CheckRun accepts the whole run.
func TestARunWithoutCrashRestartsCrossesAnUpgradeRestart(t *testing.T) {
	for name, cfg := range configs() {
		t.Run(name, func(t *testing.T) {
			for seed := uint64(1); seed <= 3; seed++ {
				walk := guided(t, cfg, seed, 500)
				up := upgradeAt(walk)
				require.GreaterOrEqual(t, up, 0, "seed %d: no UpgradeRestart", seed)
				files, t2 := guidedRun(t, cfg, seed, 500)

				// The run's lines are the walk's, by clock.
				clocks := 0
				for _, f := range files {
					for _, text := range procLines(t, f)[1:] {
						s := readStamped(t, text)
						require.True(t, s.C >= 1 && s.C <= uint64(len(walk)), "seed %d: %s", seed, text)
						body, err := json.Marshal(walk[s.C-1])
						require.NoError(t, err)
						require.True(t, strings.HasSuffix(text, ","+string(body[1:])), "seed %d: %s is not walk line %d", seed, text, s.C)
						clocks++
					}
				}
				require.Equal(t, len(walk), clocks, "seed %d", seed)

				lines := procLines(t, t2)
				require.Greater(t, len(lines), 2, "seed %d: T.2 ends at its restart", seed)
				h, first := readStamped(t, lines[0]), readStamped(t, lines[1])
				require.Equal(t, "T.2", h.Process)
				require.Equal(t, "T.1", h.After, "seed %d: T.2's header", seed)
				require.Equal(t, "UpgradeRestart", first.Action, "seed %d", seed)
				require.Equal(t, uint64(up+1), first.C, "seed %d", seed)
				require.Equal(t, "T.1", first.After, "seed %d: T.2's first line", seed)
				coord := 0 // the clock of the coordinator's last line before the restart
				for i, l := range walk[:up] {
					if strings.HasPrefix(l.Action, "Coord") || strings.HasPrefix(l.Action, "Maintainer") {
						coord = i + 1
					}
				}
				require.Positive(t, coord)
				require.Contains(t, first.From, stampRef{"coord", uint64(coord)}, "seed %d: %s", seed, lines[1])

				res, err := tracecheck.CheckRun(files, "run", nil, tracecheck.Options{})
				require.NoError(t, err)
				require.Equal(t, tracecheck.OK, res.Verdict, "seed %d: %+v", seed, res)
				require.Equal(t, len(walk), res.Lines, "seed %d", seed)
			}
		})
	}
}

// bodyOf splits a run's line into its stamp (up to its action) and its
// body, decoded.
func bodyOf(t *testing.T, text string) (stamp string, l tracecheck.Line) {
	t.Helper()
	i := strings.Index(text, `"action":`)
	require.Positive(t, i, text)
	dec := json.NewDecoder(strings.NewReader("{" + text[i:]))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&l))
	return text[:i], l
}

// withVar is a run's line with one observed value changed by bad.
func withVar(t *testing.T, text, v string, bad func(any) any) string {
	t.Helper()
	stamp, l := bodyOf(t, text)
	require.Contains(t, l.Vars, v, text)
	l.Vars[v] = bad(l.Vars[v])
	body, err := json.Marshal(l)
	require.NoError(t, err)
	return stamp + string(body[1:])
}

// writeLines writes a process's trace back with its lines changed.
func writeLines(t *testing.T, path string, lines []string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
}

// In a run, a value changed on the upgrade restart's line (T.2's first)
// or on T.2's next line that observes T's liveness is rejected at that
// line: the merge hands the restarted process's lines to the checker,
// which follows T across the upgrade.
func TestACorruptedRunAcrossAnUpgradeRestartIsRejected(t *testing.T) {
	livenessNext := map[string]string{"ALIVE": "DRAINING", "DRAINING": "STOPPING", "STOPPING": "ALIVE"}
	nextLiveness := func(v any) any { return livenessNext[v.(string)] }
	for name, cfg := range configs() {
		t.Run(name, func(t *testing.T) {
			for seed := uint64(1); seed <= 2; seed++ {
				files, t2 := guidedRun(t, cfg, seed, 500)
				lines := procLines(t, t2)
				next := -1 // T.2's first line after the restart that observes T's liveness
				for i := 2; i < len(lines) && next < 0; i++ {
					if _, l := bodyOf(t, lines[i]); l.Vars["liveness"] != nil {
						next = i
					}
				}
				require.Positive(t, next, "seed %d: no line of T.2 observes liveness", seed)
				cases := map[string]struct {
					at  int
					v   string
					bad func(any) any
				}{
					"the restart's epoch": {1, "epoch", func(v any) any {
						n, err := strconv.Atoi(string(v.(json.Number)))
						require.NoError(t, err)
						return n + 1
					}},
					"the restart's liveness":   {1, "liveness", nextLiveness},
					"the restart's admission":  {1, "admissionClosed", func(v any) any { return !v.(bool) }},
					"the next line's liveness": {next, "liveness", nextLiveness},
				}
				for what, c := range cases {
					bad := slices.Clone(lines)
					bad[c.at] = withVar(t, lines[c.at], c.v, c.bad)
					writeLines(t, t2, bad)
					res, err := tracecheck.CheckRun(files, "run", nil, tracecheck.Options{})
					require.NoError(t, err)
					require.Equal(t, tracecheck.Rejected, res.Verdict, "seed %d, %s: %+v", seed, what, res)
					require.Equal(t, "T.2", res.Process, "seed %d, %s", seed, what)
					require.Equal(t, c.at+1, res.ProcessLine, "seed %d, %s", seed, what)
					require.Equal(t, int(readStamped(t, lines[c.at]).C)+1, res.Line, "seed %d, %s", seed, what)
				}
				writeLines(t, t2, lines)
				res, err := tracecheck.CheckRun(files, "run", nil, tracecheck.Options{})
				require.NoError(t, err)
				require.Equal(t, tracecheck.OK, res.Verdict, "seed %d: %+v", seed, res)
			}
		})
	}
}

// The first line of a process names the process it succeeds (after) as
// its header does, or names none when the header names none: a restarted
// T whose first line names another process than its header's (one not
// in the run, a process of the run, itself, or none) is an input error at
// that line, and so is T.1's first line naming a predecessor.
func TestAFirstLineSucceedsWhatItsHeaderSays(t *testing.T) {
	for name, cfg := range configs() {
		t.Run(name, func(t *testing.T) {
			files, t2 := guidedRun(t, cfg, 1, 500)
			t1 := filepath.Join(filepath.Dir(t2), "T.1.ndjson")
			for _, c := range []struct {
				path, from, to string
			}{
				{t2, `"after":"T.1",`, `"after":"T.0",`},
				{t2, `"after":"T.1",`, `"after":"T.3",`},
				{t2, `"after":"T.1",`, `"after":"T.2",`},
				{t2, `"after":"T.1",`, `"after":"coord",`},
				{t2, `"after":"T.1",`, `"after":"logcoord",`},
				{t2, `"after":"T.1",`, ``},
				{t1, `"c":`, `"after":"T.0","c":`},
			} {
				lines := procLines(t, c.path)
				require.Greater(t, len(lines), 1)
				bad := slices.Clone(lines)
				bad[1] = strings.Replace(lines[1], c.from, c.to, 1)
				require.NotEqual(t, lines[1], bad[1])
				writeLines(t, c.path, bad)
				_, err := tracecheck.CheckRun(files, "run", nil, tracecheck.Options{})
				writeLines(t, c.path, lines)
				var ie *tracecheck.InputError
				require.True(t, errors.As(err, &ie), "%s: %s accepted: %v", filepath.Base(c.path), bad[1], err)
				require.Equal(t, c.path, ie.File)
				require.Equal(t, 2, ie.Line, ie.Error())
				require.Contains(t, ie.Msg, "the first line of "+strings.TrimSuffix(filepath.Base(c.path), ".ndjson"), ie.Error())
			}
			res, err := tracecheck.CheckRun(files, "run", nil, tracecheck.Options{})
			require.NoError(t, err)
			require.Equal(t, tracecheck.OK, res.Verdict, "%+v", res)
		})
	}
}

// With nothing skipped WriteRunWithout writes WriteRun's run, byte for
// byte; a name that is not an action is an error.
func TestWriteRunWithoutNothingIsWriteRun(t *testing.T) {
	m, err := spec.New(configs()["heartbeat"])
	require.NoError(t, err)
	want, err := tracecheck.WriteRun(t.TempDir(), m, 2, 300, "test")
	require.NoError(t, err)
	got, err := tracecheck.WriteRunWithout(t.TempDir(), m, 2, 300, nil, "test")
	require.NoError(t, err)
	require.Equal(t, len(want), len(got))
	for i := range want {
		require.Equal(t, filepath.Base(want[i]), filepath.Base(got[i]))
		w, err := os.ReadFile(want[i])
		require.NoError(t, err)
		g, err := os.ReadFile(got[i])
		require.NoError(t, err)
		require.Equal(t, string(w), string(g), filepath.Base(want[i]))
	}
	_, err = tracecheck.WriteRunWithout(t.TempDir(), m, 2, 300, []string{"NodeCrashRestarts"}, "test")
	require.ErrorContains(t, err, `"NodeCrashRestarts"`)
}
