package main

import (
	"strings"
	"testing"

	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/stretchr/testify/require"
)

func TestSimulateIsDeterministic(t *testing.T) {
	for _, transport := range []string{"heartbeat", "logcoord"} {
		code, out1, errOut := runCLI(t, "simulate", "--seed", "7", "--seeds", "3", "--steps", "500", "--transport", transport, "--json")
		require.Equal(t, exitOK, code, errOut)
		_, out2, _ := runCLI(t, "simulate", "--seed", "7", "--seeds", "3", "--steps", "500", "--transport", transport, "--json")
		r1, r2 := decodeReport(t, out1, "simulate"), decodeReport(t, out2, "simulate")
		require.Equal(t, *r1.Simulate, *r2.Simulate, "the same seed gives the same run")
		require.Equal(t, "ok", r1.Outcome)
		require.Equal(t, 0, r1.Simulate.BrokenStreams)
		require.Positive(t, r1.Simulate.DrainsCompleted)
		require.Equal(t, transport, r1.Simulate.Transport)
	}
}

// TestSimulateDrainFigures: the drain lengths and the drains left open,
// and with --settle the open drains completing once the faults stop.
func TestSimulateDrainFigures(t *testing.T) {
	code, out, errOut := runCLI(t, "simulate", "--seed", "1", "--seeds", "5", "--steps", "1000", "--transport", "logcoord", "--settle", "3000", "--json")
	require.Equal(t, exitOK, code, errOut)
	r := decodeReport(t, out, "simulate").Simulate
	require.Equal(t, r.DrainsCompleted, r.DrainEvents.N)
	require.Positive(t, r.DrainEvents.Median)
	require.LessOrEqual(t, r.DrainEvents.Median, r.DrainEvents.P99)
	require.LessOrEqual(t, r.DrainEvents.P99, r.DrainEvents.Max)
	require.Positive(t, r.OpenDrains)
	require.Equal(t, r.OpenDrains, r.SettledDrains, "every open drain completes without faults")
	require.Zero(t, r.StalledDrains)
	require.Equal(t, r.SettledDrains, r.SettleEvents.N)
	code, text, _ := runCLI(t, "simulate", "--seed", "1", "--seeds", "5", "--steps", "1000", "--transport", "logcoord", "--settle", "3000")
	require.Equal(t, exitOK, code)
	require.Contains(t, text, "drain length in events: median")
	require.Contains(t, text, "0 stalled")
}

func TestSimulateUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"simulate", "--transport", "pigeon"},
		{"simulate", "--steps", "-1"},
		{"simulate", "--settle", "-1"},
		{"simulate", "--bogus"},
	} {
		code, _, errOut := runCLI(t, args...)
		require.Equal(t, exitUsage, code, "%v", args)
		require.NotEmpty(t, errOut)
	}
	if !bugs.Built {
		code, _, errOut := runCLI(t, "simulate", "--bug", "IgnoreBrokerCount")
		require.Equal(t, exitUsage, code)
		require.Contains(t, errOut, "bugs")
	}
}

// TestBugsList: `checker bugs --list` prints every bug of the zoo, one a
// line, in any build (make bugs reads it).
func TestBugsList(t *testing.T) {
	code, out, _ := runCLI(t, "bugs", "--list")
	require.Equal(t, exitOK, code)
	require.Equal(t, strings.Join(bugs.Names(), "\n")+"\n", out)
}
