package main

import (
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
