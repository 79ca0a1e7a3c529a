package main

import (
	"encoding/json"
	"testing"

	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/stretchr/testify/require"
)

func TestSimulateIsDeterministic(t *testing.T) {
	for _, transport := range []string{"heartbeat", "logcoord"} {
		code, out1, errOut := runCLI(t, "simulate", "--seed", "7", "--seeds", "3", "--steps", "500", "--transport", transport, "--json")
		require.Equal(t, exitOK, code, errOut)
		_, out2, _ := runCLI(t, "simulate", "--seed", "7", "--seeds", "3", "--steps", "500", "--transport", transport, "--json")
		require.JSONEq(t, out1, out2, "the same seed gives the same run")
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(out1), &r))
		for _, k := range []string{"seed", "steps", "transport", "drains_completed", "restarts", "broken_streams"} {
			require.Contains(t, r, k)
		}
		require.EqualValues(t, 0, r["broken_streams"])
		require.Equal(t, transport, r["transport"])
	}
}

// TestSimulateDrainFigures: the drain lengths and the drains left open,
// and with --settle the open drains completing once the faults stop.
func TestSimulateDrainFigures(t *testing.T) {
	code, out, errOut := runCLI(t, "simulate", "--seed", "1", "--seeds", "5", "--steps", "1000", "--transport", "logcoord", "--settle", "3000", "--json")
	require.Equal(t, exitOK, code, errOut)
	var r struct {
		Completed int `json:"drains_completed"`
		Open      int `json:"open_drains"`
		Settled   int `json:"settled_drains"`
		Stalled   int `json:"stalled_drains"`
		Drains    struct {
			N, Median, P99, Max int
		} `json:"drain_steps"`
		Settle struct{ N, Max int } `json:"settle_steps"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, r.Completed, r.Drains.N)
	require.Positive(t, r.Drains.Median)
	require.LessOrEqual(t, r.Drains.Median, r.Drains.P99)
	require.LessOrEqual(t, r.Drains.P99, r.Drains.Max)
	require.Positive(t, r.Open)
	require.Equal(t, r.Open, r.Settled, "every open drain completes without faults")
	require.Zero(t, r.Stalled)
	require.Equal(t, r.Settled, r.Settle.N)
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
