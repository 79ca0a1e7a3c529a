package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/spec"
	"github.com/stretchr/testify/require"
)

// TLC's trace spec reads a full run's merged trace through the refinement
// mapping, as checker trace does: a full simulation of 400 steps with a
// rejoin (CoordRejoin) is accepted by both after the same lines; the same
// trace with its header's mapping taken out is rejected by TLC before its
// end (the mapping is what explains it). It runs TLC when TLA2TOOLS and
// TLA_COMMUNITY_MODULES name the jars (CI sets them).
func TestTLCTraceSpecMapsFullRuns(t *testing.T) {
	jar, mods := os.Getenv("TLA2TOOLS"), os.Getenv("TLA_COMMUNITY_MODULES")
	if jar == "" || mods == "" {
		t.Skip("TLA2TOOLS or TLA_COMMUNITY_MODULES is not set: the test needs TLC; CI sets them")
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("no java: the test needs TLC")
	}
	if testing.Short() {
		t.Skip("runs TLC")
	}
	dir := t.TempDir()
	b, err := simBatch(context.Background(), dir, spec.TransportHeartbeat, 1, 100, true)
	require.NoError(t, err)
	require.Len(t, b.files, 2, "the run and its mutant")
	full := b.files[0]
	data, err := os.ReadFile(full)
	require.NoError(t, err)
	require.Contains(t, string(data), `"action":"CoordRejoin"`, "seed 1's 400 steps hold a rejoin")

	head, rest, _ := bytes.Cut(data, []byte("\n"))
	var h map[string]any
	require.NoError(t, json.Unmarshal(head, &h))
	require.Equal(t, "sessions", h["mapping"])
	delete(h, "mapping")
	bare, err := json.Marshal(h)
	require.NoError(t, err)
	nomap := filepath.Join(dir, "nomap.ndjson")
	require.NoError(t, os.WriteFile(nomap, append(append(bare, '\n'), rest...), 0o644))

	ours, err := tracecheck.CheckFile(full, nil, tracecheck.Options{})
	require.NoError(t, err)
	require.Equal(t, tracecheck.OK, ours.Verdict)

	tla, err := filepath.Abs("../../tla")
	require.NoError(t, err)
	for _, c := range []struct {
		file, verdict string
	}{{full, "accepted"}, {nomap, "rejected"}} {
		got, _, err := runTraceTLC(context.Background(), jar, mods, tla, dir, parityBatch{name: filepath.Base(c.file), files: []string{c.file}})
		require.NoError(t, err)
		v := got[c.file]
		require.Equal(t, c.verdict, v.verdict, "%s: TLC %+v", c.file, v)
		if c.verdict == "accepted" {
			require.Equal(t, ours.Lines, v.lines, "TLC and checker trace explain as many lines")
		} else {
			require.Less(t, v.lines, ours.Lines, "rejected before the end")
			t.Logf("without the mapping TLC explains %d of %d lines", v.lines, ours.Lines)
		}
	}
}
