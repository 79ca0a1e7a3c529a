package tracecheck_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/spec"
)

// guided is a walk of cfg's model that never crash-restarts T, so that
// the coordinator's drain completes and T is upgraded.
func guided(t *testing.T, cfg spec.Config, seed uint64, steps int) []tracecheck.Line {
	t.Helper()
	m, err := spec.New(cfg)
	require.NoError(t, err)
	var lines []tracecheck.Line
	require.NoError(t, tracecheck.GenerateWithout(m, seed, steps, []string{"NodeCrashRestart"}, func(l tracecheck.Line) error {
		lines = append(lines, l)
		return nil
	}))
	return lines
}

// upgradeAt is the index of the first UpgradeRestart of lines, or -1.
func upgradeAt(lines []tracecheck.Line) int {
	for i, l := range lines {
		if l.Action == "UpgradeRestart" {
			return i
		}
	}
	return -1
}

// A walk without crash restarts drains T and upgrades it: every seed's
// walk of each model reaches an UpgradeRestart after the drain completes,
// takes no skipped action, goes on past the restart, and is accepted.
func TestAWalkWithoutCrashRestartsReachesAnUpgradeRestart(t *testing.T) {
	for name, cfg := range configs() {
		t.Run(name, func(t *testing.T) {
			for seed := uint64(1); seed <= 4; seed++ {
				lines := guided(t, cfg, seed, 500)
				require.Len(t, lines, 500, "seed %d", seed)
				up := upgradeAt(lines)
				require.GreaterOrEqual(t, up, 0, "seed %d: no UpgradeRestart", seed)
				require.Less(t, up, len(lines)-1, "seed %d: nothing after the restart", seed)
				drained := false
				for _, l := range lines[:up] {
					drained = drained || l.Action == "CoordCompleteDrain"
				}
				require.True(t, drained, "seed %d: an upgrade restart before the drain completed", seed)
				for _, l := range lines {
					require.NotEqual(t, "NodeCrashRestart", l.Action, "seed %d", seed)
				}
				res := check(t, encode(t, cfg, lines))
				require.Equal(t, tracecheck.OK, res.Verdict, "seed %d: %+v", seed, res)
				require.Equal(t, len(lines), res.Lines)
			}
		})
	}
}

// With nothing skipped the guided walk is Generate's; a name that is not
// an action is an error, not a walk that skips nothing.
func TestGenerateWithoutNothingIsGenerate(t *testing.T) {
	cfg := configs()["heartbeat"]
	want, m := traceOf(t, cfg, 3, 200)
	var got []tracecheck.Line
	require.NoError(t, tracecheck.GenerateWithout(m, 3, 200, nil, func(l tracecheck.Line) error {
		got = append(got, l)
		return nil
	}))
	require.Equal(t, want, got)
	err := tracecheck.GenerateWithout(m, 3, 200, []string{"NodeCrashRestarts"}, func(tracecheck.Line) error { return nil })
	require.ErrorContains(t, err, `"NodeCrashRestarts"`)
}

// A value changed on the upgrade restart's line, or on the first line of
// T after it, is rejected at that line: the checker follows T across the
// upgrade, it does not take whatever a restarted process writes.
func TestACorruptedFieldAfterTheUpgradeRestartIsRejected(t *testing.T) {
	livenessNext := map[string]string{"ALIVE": "DRAINING", "DRAINING": "STOPPING", "STOPPING": "ALIVE"}
	for name, cfg := range configs() {
		t.Run(name, func(t *testing.T) {
			for seed := uint64(1); seed <= 3; seed++ {
				lines := guided(t, cfg, seed, 500)
				up := upgradeAt(lines)
				require.GreaterOrEqual(t, up, 0, "seed %d: no UpgradeRestart", seed)
				next := -1 // the first line after the restart that observes T's liveness
				for i := up + 1; i < len(lines) && next < 0; i++ {
					if _, ok := lines[i].Vars["liveness"]; ok {
						next = i
					}
				}
				require.Positive(t, next, "seed %d: no line of T after the restart", seed)
				cases := map[string]struct {
					at  int
					v   string
					bad func(any) any
				}{
					"the restart's epoch":      {up, "epoch", func(v any) any { return v.(int) + 1 }},
					"the restart's liveness":   {up, "liveness", func(v any) any { return livenessNext[v.(string)] }},
					"the next line's liveness": {next, "liveness", func(v any) any { return livenessNext[v.(string)] }},
					"the restart's admission":  {up, "admissionClosed", func(v any) any { return !v.(bool) }},
				}
				for what, c := range cases {
					bad := clone(lines)
					require.Contains(t, bad[c.at].Vars, c.v, "seed %d: %s", seed, what)
					bad[c.at].Vars[c.v] = c.bad(bad[c.at].Vars[c.v])
					res := check(t, encode(t, cfg, bad))
					require.Equal(t, tracecheck.Rejected, res.Verdict, "seed %d, %s: %+v", seed, what, res)
					require.Equal(t, c.at+2, res.Line, "seed %d, %s", seed, what)
				}
			}
		})
	}
}
