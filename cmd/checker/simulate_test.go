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

func TestSimulateUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"simulate", "--transport", "pigeon"},
		{"simulate", "--steps", "-1"},
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
