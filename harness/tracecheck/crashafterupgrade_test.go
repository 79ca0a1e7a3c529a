package tracecheck_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/spec"
)

// upgradeThenCrash guides a walk to drain and upgrade T, then to crash
// it as an unguided walk does.
var upgradeThenCrash = tracecheck.Guide{Skip: []string{"NodeCrashRestart"}, Until: "UpgradeRestart"}

// A run guided to skip crash restarts until the upgrade restart crosses
// the upgrade (T.2) and then crash restarts (T.3 on): each restarted
// process's header and first line name the process before it, every
// crash restart comes after the upgrade, and CheckRun accepts the whole
// run, one line a step of the walk.
func TestARunCrossesAnUpgradeThenACrashRestart(t *testing.T) {
	for name, cfg := range configs() {
		t.Run(name, func(t *testing.T) {
			m, err := spec.New(cfg)
			require.NoError(t, err)
			for seed := uint64(1); seed <= 3; seed++ {
				var walk []tracecheck.Line
				require.NoError(t, tracecheck.GenerateGuided(m, seed, 800, upgradeThenCrash, func(l tracecheck.Line) error {
					walk = append(walk, l)
					return nil
				}))
				up := upgradeAt(walk)
				require.GreaterOrEqual(t, up, 0, "seed %d: no UpgradeRestart", seed)
				restarts := []string{"UpgradeRestart"} // the restarts of the walk, in order
				for i, l := range walk {
					if l.Action == "NodeCrashRestart" {
						require.Greater(t, i, up, "seed %d: a crash restart before the upgrade", seed)
						restarts = append(restarts, l.Action)
					}
				}
				require.Greater(t, len(restarts), 1, "seed %d: no crash restart after the upgrade", seed)

				dir := t.TempDir()
				files, err := tracecheck.WriteRunGuided(dir, m, seed, 800, upgradeThenCrash, "test")
				require.NoError(t, err)
				for i, action := range restarts {
					n := i + 2 // T.2 is the upgrade's process, T.3 the first crash restart's
					path := filepath.Join(dir, fmt.Sprintf("T.%d.ndjson", n))
					require.Contains(t, files, path, "seed %d", seed)
					lines := procLines(t, path)
					h, first := readStamped(t, lines[0]), readStamped(t, lines[1])
					prev := fmt.Sprintf("T.%d", n-1)
					require.Equal(t, prev, h.After, "seed %d: T.%d's header", seed, n)
					require.Equal(t, action, first.Action, "seed %d: T.%d's first line", seed, n)
					require.Equal(t, prev, first.After, "seed %d: T.%d's first line", seed, n)
				}
				require.NotContains(t, files, filepath.Join(dir, fmt.Sprintf("T.%d.ndjson", len(restarts)+2)), "seed %d", seed)

				res, err := tracecheck.CheckRun(files, "run", nil, tracecheck.Options{})
				require.NoError(t, err)
				require.Equal(t, tracecheck.OK, res.Verdict, "seed %d: %+v", seed, res)
				require.Equal(t, len(walk), res.Lines, "seed %d", seed)
			}
		})
	}
}

// In a run past the upgrade, the first crash restart's process (T.3)
// succeeds T.2: its first line naming T.1 (the process before the
// upgrade) or T.3 itself instead is an input error at that line, and a
// value changed on the crash restart's line is rejected there.
func TestACrashRestartAfterTheUpgradeSucceedsTheUpgradedProcess(t *testing.T) {
	for name, cfg := range configs() {
		t.Run(name, func(t *testing.T) {
			m, err := spec.New(cfg)
			require.NoError(t, err)
			dir := t.TempDir()
			files, err := tracecheck.WriteRunGuided(dir, m, 1, 800, upgradeThenCrash, "test")
			require.NoError(t, err)
			t3 := filepath.Join(dir, "T.3.ndjson")
			require.Contains(t, files, t3)
			lines := procLines(t, t3)
			for _, to := range []string{`"after":"T.1",`, `"after":"T.3",`} {
				bad := slices.Clone(lines)
				bad[1] = strings.Replace(lines[1], `"after":"T.2",`, to, 1)
				require.NotEqual(t, lines[1], bad[1])
				writeLines(t, t3, bad)
				_, err := tracecheck.CheckRun(files, "run", nil, tracecheck.Options{})
				var ie *tracecheck.InputError
				require.True(t, errors.As(err, &ie), "%s accepted: %v", bad[1], err)
				require.Equal(t, t3, ie.File)
				require.Equal(t, 2, ie.Line, ie.Error())
				require.Contains(t, ie.Msg, "the first line of T.3", ie.Error())
			}
			bad := slices.Clone(lines)
			bad[1] = withVar(t, lines[1], "liveness", func(v any) any {
				return map[string]string{"ALIVE": "DRAINING", "DRAINING": "STOPPING", "STOPPING": "ALIVE"}[v.(string)]
			})
			writeLines(t, t3, bad)
			res, err := tracecheck.CheckRun(files, "run", nil, tracecheck.Options{})
			require.NoError(t, err)
			require.Equal(t, tracecheck.Rejected, res.Verdict, "%+v", res)
			require.Equal(t, "T.3", res.Process)
			require.Equal(t, 2, res.ProcessLine)
			writeLines(t, t3, lines)
			res, err = tracecheck.CheckRun(files, "run", nil, tracecheck.Options{})
			require.NoError(t, err)
			require.Equal(t, tracecheck.OK, res.Verdict, "%+v", res)
		})
	}
}

// An empty guide walks as GenerateFunc does; a guide naming an action
// the model has not, to skip or to skip until, is an error naming it.
func TestGuidesWalkAsTheyAreMeant(t *testing.T) {
	m, err := spec.New(configs()["heartbeat"])
	require.NoError(t, err)
	var want, got []tracecheck.Line
	require.NoError(t, tracecheck.GenerateFunc(m, 5, 300, func(l tracecheck.Line) error { want = append(want, l); return nil }))
	require.NoError(t, tracecheck.GenerateGuided(m, 5, 300, tracecheck.Guide{}, func(l tracecheck.Line) error { got = append(got, l); return nil }))
	require.Equal(t, want, got)
	// Until alone skips nothing: the walk is GenerateFunc's.
	got = nil
	require.NoError(t, tracecheck.GenerateGuided(m, 5, 300, tracecheck.Guide{Until: "UpgradeRestart"}, func(l tracecheck.Line) error { got = append(got, l); return nil }))
	require.Equal(t, want, got)
	none := func(tracecheck.Line) error { return nil }
	require.ErrorContains(t, tracecheck.GenerateGuided(m, 5, 10, tracecheck.Guide{Skip: []string{"NodeCrash"}}, none), `"NodeCrash"`)
	require.ErrorContains(t, tracecheck.GenerateGuided(m, 5, 10, tracecheck.Guide{Skip: []string{"NodeCrashRestart"}, Until: "Upgrade"}, none), `"Upgrade"`)
}
