package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drainproof/drainproof/harness/drainmodel"
	"github.com/stretchr/testify/require"
)

// decodeReport decodes out as the one JSON shape of every subcommand,
// refusing any field the schema does not have, and checks what every
// report means the same way.
func decodeReport(t *testing.T, out, command string) report {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	var r report
	require.NoError(t, dec.Decode(&r), "%s output:\n%s", command, out)
	require.False(t, dec.More(), "one JSON object")
	require.Equal(t, command, r.Command)
	require.Contains(t, []string{outcomeOK, outcomeViolated, outcomeDeadlock, outcomeIncomplete, outcomeUnexpected, outcomeError}, r.Outcome)
	require.Equal(t, r.Outcome == outcomeError, r.Error != "", "error says what went wrong exactly when the outcome is error")
	if r.Outcome == outcomeError {
		return r // whatever figures the run reported before it failed
	}
	require.Equal(t, r.Outcome == outcomeViolated, r.Violated != "", "violated names the property exactly when the outcome is violated")
	require.Equal(t, r.Outcome == outcomeIncomplete && command != "check", r.Reason != "" && command != "check", "reason")
	if r.Outcome == outcomeViolated {
		require.Contains(t, []string{"invariant", "action", "liveness", "linearizability", "stream", "cluster"}, r.Kind)
	}
	if r.Trace != nil {
		require.Equal(t, len(r.Trace), r.Steps, "steps counts the counterexample's states")
	}
	require.Equal(t, command == "verify" || command == "tlc", r.Summary != nil, "summary for verify and tlc")
	require.Equal(t, command == "check", r.Check != nil)
	require.Equal(t, command == "simulate", r.Simulate != nil)
	require.Equal(t, command == "lincheck", r.Lincheck != nil)
	require.Equal(t, command == "trace", r.Traces != nil)
	require.Equal(t, command == "tracegen", r.Tracegen != nil)
	require.Equal(t, command == "traceparity", r.Parity != nil)
	require.Equal(t, command == "models", r.Builtin != nil)
	require.Equal(t, command == "version", r.Version != nil)
	require.Equal(t, command == "bugs", r.Bugs != nil || r.BugNames != nil)
	if r.Coverage != nil {
		require.Equal(t, "check", command)
	}
	if r.Summary != nil {
		require.Len(t, r.Models, r.Summary.Models)
	}
	return r
}

// fakeJava puts on PATH a `java` that prints what TLC prints for the
// default model (after sleeping, if asked), so that checker tlc runs
// without TLC.
func fakeJava(t *testing.T, sleep ...string) string {
	t.Helper()
	pause := ""
	if len(sleep) > 0 {
		pause = sleep[0]
	}
	return fakeJavaFigures(t, pause, "6,767,729", "834,474", 52)
}

// fakeJavaFigures is fakeJava printing the given figures of a model that
// holds, after sleeping pause (a sleep(1) argument) if it is not empty.
func fakeJavaFigures(t *testing.T, pause, generated, distinct string, depth int) string {
	t.Helper()
	dir := t.TempDir()
	if pause != "" {
		pause = "sleep " + pause + "\n"
	}
	// Run on the trace spec (checker traceparity: $TRACES names the
	// manifest), it accepts every trace with no line explained.
	script := `#!/bin/sh
if [ -n "$TRACES" ]; then sed 's/^{"file":"\(.*\)"}$/\1/' "$TRACES" | while read f; do echo "\"TRACE $f accepted 0\""; done; exit 0; fi
` + pause + `echo "TLC2 Version 2026.11.29.194305 (rev: cc6b616cf)"
echo "Progress(10) at 2026-11-29 20:00:00: 50,000 states generated, 8,000 distinct states found, 900 states left on queue."
echo "Model checking completed. No error has been found."
echo "` + generated + ` states generated, ` + distinct + ` distinct states found, 0 states left on queue."
echo "The depth of the complete state graph search is ` + strconv.Itoa(depth) + `."
echo "Finished in 04s at (2026-11-29 20:00:04)"
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "java"), []byte(script), 0o755))
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	jar := filepath.Join(dir, "tla2tools.jar")
	require.NoError(t, os.WriteFile(jar, nil, 0o644))
	return jar
}

// checker tlc --versus runs our checker after TLC on a model that holds,
// with TLC's worker count, and reports both times and TLC's over ours; a
// model our checker does not find as recorded counts as unexpected.
func TestTLCVersus(t *testing.T) {
	var man drainmodel.Manifest
	b, err := os.ReadFile("../../tla/models.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &man))
	i := slices.IndexFunc(man.Models, func(e drainmodel.Entry) bool { return e.Config == smallModel })
	require.GreaterOrEqual(t, i, 0)
	f := man.Models[i].TLC
	jar := fakeJavaFigures(t, "", strconv.FormatInt(f.Generated, 10), strconv.FormatInt(f.Distinct, 10), f.Depth)
	models := oneModelManifest(t, 0, smallModel)

	code, out, errOut := runCLI(t, "tlc", "--models", models, "--jar", jar, "--workers", "2", "--versus")
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, errOut, "running our checker with 2 worker(s)")
	require.Regexp(t, `ours [0-9.]+s with 2 worker\(s\), TLC 4s: [0-9.]+x`, out)

	code, out, errOut = runCLI(t, "tlc", "--models", models, "--jar", jar, "--workers", "1", "--versus", "--json")
	require.Equal(t, exitOK, code, errOut)
	r := decodeReport(t, out, "tlc")
	row := r.Models[0]
	require.True(t, row.AsRecorded)
	require.Equal(t, 1, row.Workers)
	require.Positive(t, row.OursSeconds)
	require.InDelta(t, 4/row.OursSeconds, row.Speedup, 1e-9)

	// Without --versus, no time of ours.
	code, out, errOut = runCLI(t, "tlc", "--models", models, "--jar", jar, "--json")
	require.Equal(t, exitOK, code, errOut)
	require.Zero(t, decodeReport(t, out, "tlc").Models[0].OursSeconds)

	// A manifest whose distinct count TLC prints (the fake) but ours
	// does not find: TLC's figures are as recorded, the model is not.
	jar = fakeJavaFigures(t, "", strconv.FormatInt(f.Generated, 10), strconv.FormatInt(f.Distinct+1, 10), f.Depth)
	code, out, errOut = runCLI(t, "tlc", "--models", oneModelManifest(t, 1, smallModel), "--jar", jar, "--versus", "--json")
	require.Equal(t, exitViolation, code, errOut)
	r = decodeReport(t, out, "tlc")
	require.Equal(t, summary{Models: 1, Unexpected: 1}, *r.Summary)
	require.Contains(t, r.Models[0].Problems, "ours: distinct")
	require.NotContains(t, r.Models[0].Problems, "TLC counts")
}

// Every subcommand's --json output decodes with the one schema, and its
// common fields mean the same thing.
func TestEverySubcommandSpeaksOneJSON(t *testing.T) {
	dir := t.TempDir()
	bad := illegalHistory(t, dir)
	jar := fakeJava(t)
	seen := map[string]bool{}
	for _, tc := range []struct {
		args    []string
		outcome string
		check   func(t *testing.T, r report)
	}{
		{[]string{"check", "--model", "twophase"}, "ok", func(t *testing.T, r report) {
			require.Equal(t, 0, r.Steps)
			require.Equal(t, []string{"TCConsistent", "TPTypeOK"}, sorted(r.Check.Properties.Invariants))
		}},
		{[]string{"check", "--model", "twophase-bug"}, "violated", func(t *testing.T, r report) {
			require.Equal(t, "TCConsistent", r.Violated)
			require.Equal(t, 6, r.Steps)
		}},
		{[]string{"check", "--config", "../../tla/MCDrainRegistrationBugDoubleIncrementLive.cfg"}, "violated", func(t *testing.T, r report) {
			require.Equal(t, "DrainCompletes", r.Violated, "the property's name, whatever its kind")
			require.Equal(t, "liveness", r.Kind)
			require.Equal(t, len(r.Trace), r.Steps)
			require.NotNil(t, r.LoopStart)
			require.Less(t, *r.LoopStart, r.Steps)
			require.Equal(t, []string{"DrainCompletes"}, r.Check.Properties.Temporal)
		}},
		{[]string{"check", "--model", "twophase", "--rms", "6", "--max-states", "100"}, "incomplete", nil},
		{[]string{"check", "--model", "twophase-bug", "--simulate", "--walks", "200", "--depth", "20"}, "violated", func(t *testing.T, r report) {
			require.Equal(t, "simulate", r.Check.Mode)
			require.NotNil(t, r.Check.Walk)
		}},
		{[]string{"verify", "--models", oneModelManifest(t, 0, smallModel)}, "ok", func(t *testing.T, r report) {
			require.Equal(t, summary{Models: 1, AsRecorded: 1}, *r.Summary)
		}},
		{[]string{"verify", "--models", oneModelManifest(t, 1, smallModel)}, "unexpected", func(t *testing.T, r report) {
			require.Equal(t, summary{Models: 1, Unexpected: 1}, *r.Summary)
			require.NotEmpty(t, r.Models[0].Problems)
		}},
		{[]string{"tlc", "--models", oneModelManifest(t, 0), "--jar", jar}, "ok", func(t *testing.T, r report) {
			require.Equal(t, summary{Models: 1, AsRecorded: 1}, *r.Summary)
			require.EqualValues(t, 834474, r.Models[0].Distinct, "the figure the fake TLC prints")
		}},
		{[]string{"tlc", "--models", oneModelManifest(t, 1), "--jar", jar}, "unexpected", nil},
		{[]string{"simulate", "--seeds", "2", "--steps", "300", "--settle", "3000"}, "ok", func(t *testing.T, r report) {
			require.Equal(t, 2, r.Simulate.Seeds)
			require.Equal(t, 300, r.Simulate.EventsPerSeed)
			require.Equal(t, "memory", r.Simulate.Store)
			require.Equal(t, r.Simulate.DrainsCompleted, r.Simulate.DrainEvents.N)
			require.Equal(t, r.Simulate.OpenDrains, r.Simulate.SettledDrains+r.Simulate.StalledDrains)
			require.Equal(t, r.Simulate.SettledDrains, r.Simulate.SettleEvents.N)
			require.Positive(t, r.Simulate.Committed)
		}},
		{[]string{"lincheck", "--clients", "2", "--ops", "100"}, "ok", nil},
		{[]string{"check", "--model", "twophase", "--coverage"}, "ok", func(t *testing.T, r report) {
			require.NotNil(t, r.Coverage, "the run and its coverage in one object")
			require.NotEmpty(t, r.Coverage.Actions)
			require.Positive(t, r.Check.Distinct)
		}},
		{[]string{"models"}, "ok", func(t *testing.T, r report) {
			require.Equal(t, "drain", r.Builtin[0].Name)
		}},
		{[]string{"version"}, "ok", func(t *testing.T, r report) {
			require.Equal(t, "github.com/drainproof/drainproof", r.Version.Module)
		}},
		{[]string{"tracegen", "--config", "../../tla/MCDrainRegistration.cfg", "--out", filepath.Join(dir, "traces"), "--seeds", "2", "--steps", "20"}, "ok", func(t *testing.T, r report) {
			require.Len(t, r.Tracegen.Files, 2)
		}},
		{[]string{"trace", filepath.Join(dir, "traces")}, "ok", func(t *testing.T, r report) {
			require.Equal(t, 2, r.Traces.OK)
		}},
		{[]string{"traceparity", "--jar", jar, "--modules", jar, "--tla", dir, "--out", filepath.Join(dir, "parity"), "--n", "1", "--steps", "5", "--free", "0"}, "unexpected", func(t *testing.T, r report) {
			require.Positive(t, r.Parity.Disagree, "the stand-in TLC accepts every trace with no line explained")
		}},
		{[]string{"bugs", "--list"}, "ok", func(t *testing.T, r report) {
			require.Contains(t, r.BugNames, "IgnoreBrokerCount")
		}},
		// Errors are one object too: outcome error, the message, exit 2.
		{[]string{"check", "--model", "twophase", "--rms", "0"}, "error", func(t *testing.T, r report) {
			require.Contains(t, r.Error, "--rms must be in")
		}},
		{[]string{"check", "--config", "no-such.cfg"}, "error", nil},
		{[]string{"verify", "--models", filepath.Join(dir, "none.json")}, "error", nil},
		{[]string{"tlc", "--models", filepath.Join(dir, "none.json"), "--jar", jar}, "error", nil},
		{[]string{"simulate", "--transport", "pigeon"}, "error", nil},
		{[]string{"lincheck", "--history", filepath.Join(dir, "none.json")}, "error", nil},
		{[]string{"trace", filepath.Join(dir, "none.ndjson")}, "error", nil},
		{[]string{"tracegen"}, "error", nil},
		{[]string{"traceparity", "--n", "0", "--jar", jar, "--modules", jar}, "error", nil},
		{[]string{"bugs"}, "error", func(t *testing.T, r report) {
			require.Contains(t, r.Error, "-tags bugs")
		}},
		{[]string{"models", "extra"}, "error", nil},
		{[]string{"report", "merge", filepath.Join(dir, "none.json")}, "error", nil},
		{[]string{"report", "merge", shardDir(t)}, "ok", nil},
		{[]string{"report", "merge", shardDir(t, 2)}, "violated", func(t *testing.T, r report) {
			require.Equal(t, "cluster", r.Kind)
			require.Equal(t, "seed 2: table t1: lost event ts 2", r.Violated)
			require.Equal(t, []uint64{1, 2, 3}, r.Merge.Ran)
		}},
		{[]string{"cluster", "--nodes", "2"}, "error", nil},
		{[]string{"version", "--nope"}, "error", func(t *testing.T, r report) {
			require.Contains(t, r.Error, "flag provided but not defined")
		}},
		{[]string{"lincheck", "--history", bad, "--html", filepath.Join(dir, "r.html")}, "violated", func(t *testing.T, r report) {
			require.Equal(t, "linearizability", r.Kind)
			require.NotNil(t, r.Lincheck.FirstIllegal)
		}},
	} {
		var out, errb bytes.Buffer
		code := run(t.Context(), append([]string{tc.args[0], "--json"}, tc.args[1:]...), &out, &errb)
		require.Equal(t, tc.outcome == outcomeError, code == exitUsage, "%v: exit %d: %s", tc.args, code, errb.String())
		r := decodeReport(t, out.String(), tc.args[0])
		require.Equal(t, tc.outcome, r.Outcome, "%v: %s", tc.args, errb.String())
		if r.Outcome == outcomeError {
			require.Equal(t, strings.TrimSpace(errb.String()), r.Error, "the message printed on stderr")
		}
		if tc.check != nil {
			tc.check(t, r)
		}
		seen[tc.args[0]+" "+tc.outcome] = true
	}
	for name := range commands {
		require.True(t, seen[name+" error"], "%s: an error case", name)
		// A bugs run needs -tags bugs (its report is TestBugsReportIsOneObject's);
		// a cluster run starts processes (TestClusterReportIsOneObject's).
		if name != "bugs" && name != "cluster" {
			require.True(t, seen[name+" ok"] || seen[name+" unexpected"], "%s: a run", name)
		}
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// The text output of tlc and verify: progress on stderr, a summary line.
func TestTableProgressAndSummary(t *testing.T) {
	jar := fakeJava(t)
	code, out, errOut := runCLI(t, "tlc", "--models", oneModelManifest(t, 0), "--jar", jar)
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, errOut, "[1/1] ")
	require.Contains(t, errOut, "  Progress(10) at")
	require.Regexp(t, `(?m)^1 models, 1 as recorded, 0 unexpected, in [0-9.]+s\.$`, out)
	code, out, errOut = runCLI(t, "verify", "--models", oneModelManifest(t, 0, smallModel))
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, errOut, "[1/1] ")
	require.Regexp(t, `(?m)^1 models, 1 as recorded, 0 unexpected, in [0-9.]+s\.$`, out)
}

// Go conventions: help on stdout, checker help <command>, version.
func TestHelpAndVersion(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"help", "check"}, {"check", "-h"}, {"verify", "--help"}, {"tlc", "-h"},
		{"simulate", "-h"}, {"lincheck", "-h"}, {"models", "-h"}, {"version", "-h"}} {
		code, out, errOut := runCLI(t, args...)
		require.Equal(t, exitOK, code, "%v", args)
		require.Empty(t, errOut, "%v: help goes to stdout", args)
		require.Contains(t, out, "usage: checker", "%v", args)
		require.Contains(t, out, "exit codes:", "%v", args)
	}
	_, out, _ := runCLI(t, "help", "check")
	require.Contains(t, out, "-model string", "the flag's argument is named as Go names it")
	require.NotContains(t, out, "-model checker")
	code, _, errOut := runCLI(t, "help", "nope")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, `unknown command "nope"`)
	code, out, _ = runCLI(t, "version")
	require.Equal(t, exitOK, code)
	require.Contains(t, out, "github.com/drainproof/drainproof")
	require.Contains(t, out, "go1.")
}

// check says what it checks before it starts.
func TestCheckPrintsProperties(t *testing.T) {
	code, _, errOut := runCLI(t, "check", "--config", "../../tla/MCDrainRegistration.cfg", "--progress", "0")
	require.Equal(t, exitOK, code)
	require.Contains(t, errOut, "Invariants: TypeOK, DrainSafety, CountAccuracy, NoHiddenRegistration, FailureLeavesNoTrace, NoStaleObservation, StopAfterWorkMoved, VersionSafety. "+
		"Action properties: NoAdmissionAfterClose, MonotoneLiveness. Temporal properties: none. Deadlock: checked.")
}

// Ctrl-C during a TLC run: exit 3 and a summary, not an error.
func TestTLCInterrupted(t *testing.T) {
	jar := fakeJava(t, "5")
	code, out, errOut := runCLICtx(t, 300*time.Millisecond, "tlc", "--models", oneModelManifest(t, 0), "--jar", jar)
	require.Equal(t, exitIncomplete, code, out+errOut)
	require.Contains(t, errOut, "interrupted after 0 models")
	require.Contains(t, out, "0 models, 0 as recorded, 0 unexpected, 1 not run (interrupted)")
}

// bugs --json prints one object, the rows under bugs (it printed an
// array); a bug caught by fewer than two techniques makes it unexpected.
func TestBugsReportIsOneObject(t *testing.T) {
	rows := []bugRow{
		{Bug: "IgnoreBrokerCount", Cells: map[string]bugCell{"model checker": {Caught: true}, "simulator": {Caught: true}}, Caught: 2},
		{Bug: "NoReReport", Cells: map[string]bugCell{"model checker": {Caught: true}}, Caught: 1},
	}
	for _, tc := range []struct {
		rows    []bugRow
		outcome string
	}{{rows[:1], outcomeOK}, {rows, outcomeUnexpected}} {
		var b bytes.Buffer
		require.NoError(t, writeReport(&b, bugsReport(tc.rows, time.Second)))
		r := decodeReport(t, b.String(), "bugs")
		require.Equal(t, tc.outcome, r.Outcome)
		require.Equal(t, tc.rows, r.Bugs)
	}
}
