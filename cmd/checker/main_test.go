package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drainproof/drainproof/harness/drainmodel"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// With DRAINPROOF_CHECKER_MAIN=1 the test binary is the checker: main,
	// with its signal handling (TestSpillFolderGoneAfterSIGTERM), on the
	// arguments after the binary (TestShardsUnderParallelEqualOneRun runs it
	// under GNU parallel).
	if os.Getenv("DRAINPROOF_CHECKER_MAIN") == "1" {
		main()
	}
	goleak.VerifyTestMain(m)
}

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestTwoPhaseCalibration(t *testing.T) {
	for _, tc := range []struct {
		rms                 string
		distinct, generated int64
		depth               int
	}{{"3", 288, 1146, 11}, {"5", 8832, 58146, 17}} {
		code, out, _ := runCLI(t, "check", "--model", "twophase", "--rms", tc.rms, "--json")
		require.Equal(t, exitOK, code)
		r := decodeReport(t, out, "check")
		require.Equal(t, "ok", r.Outcome)
		require.Equal(t, tc.distinct, r.Check.Distinct)
		require.Equal(t, tc.generated, r.Check.Generated)
		require.Equal(t, tc.depth, r.Check.Depth)
		require.Positive(t, r.Check.StatesPerSecond)
	}
}

func TestPlantedBugExitsOne(t *testing.T) {
	code, out, _ := runCLI(t, "check", "--model", "twophase-bug", "--json")
	require.Equal(t, exitViolation, code)
	r := decodeReport(t, out, "check")
	require.Equal(t, "violated", r.Outcome)
	require.Equal(t, "TCConsistent", r.Violated)
	require.Equal(t, "invariant", r.Kind)
	require.Equal(t, 6, r.Steps)
	require.Len(t, r.Trace, 6)
	require.Equal(t, "Init", r.Trace[0].Action)
	require.Contains(t, r.Trace[0].State, "rmState")

	code, out, _ = runCLI(t, "check", "--model", "twophase-bug")
	require.Equal(t, exitViolation, code)
	require.Contains(t, out, "Error: Invariant TCConsistent is violated.")
	require.Contains(t, out, "  6  RM")
}

func TestIncompleteExitsThree(t *testing.T) {
	code, out, _ := runCLI(t, "check", "--model", "twophase", "--rms", "6", "--max-states", "500", "--json")
	require.Equal(t, exitIncomplete, code)
	r := decodeReport(t, out, "check")
	require.Equal(t, "incomplete", r.Outcome)
	require.Contains(t, r.Reason, "state limit")
}

// --fp 128 counts the same states and prints the 128-bit estimate.
func TestWideFingerprints(t *testing.T) {
	code, out, _ := runCLI(t, "check", "--model", "twophase", "--fp", "128", "--json")
	require.Equal(t, exitOK, code)
	r := decodeReport(t, out, "check")
	require.EqualValues(t, 288, r.Check.Distinct)
	require.EqualValues(t, 1146, r.Check.Generated)
	require.InDelta(t, 288.0*858/(18446744073709551616.0*18446744073709551616.0), r.Check.Collision, 1e-45)
}

// A small --memory budget ends the run incomplete (exit 3) with its
// figures; sizes parse in binary units.
func TestMemoryBudgetFlag(t *testing.T) {
	code, out, _ := runCLI(t, "check", "--model", "twophase", "--rms", "9", "--memory", "1MiB", "--json", "--progress", "0")
	require.Equal(t, exitIncomplete, code)
	r := decodeReport(t, out, "check")
	require.Contains(t, r.Reason, "memory budget of 1.0 MiB reached")
	require.Positive(t, r.Check.Distinct)
	for in, want := range map[string]int64{"0": 0, "512MiB": 512 << 20, "1.5G": 3 << 29, "2048": 2048, "4 GiB": 4 << 30} {
		got, err := memoryBudget(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	def, err := memoryBudget("")
	require.NoError(t, err)
	require.Positive(t, def)
}

// Past half of --memory the seen-set moves to the --spill folder (and the
// queue past a quarter), and the run completes with the figures of a run in memory; its files are gone
// at the end. With --spill off the same budget ends the run incomplete.
func TestSpillFlag(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "check", "--model", "twophase", "--rms", "7", "--memory", "2MiB", "--spill", dir, "--json", "--progress", "0")
	require.Equal(t, exitOK, code, errOut)
	r := decodeReport(t, out, "check")
	require.EqualValues(t, 296_448, r.Check.Distinct)
	require.EqualValues(t, 2_744_706, r.Check.Generated)
	require.Positive(t, r.Check.SpillBytes)
	require.Positive(t, r.Check.QueueSpillBytes, "the queue moved to disk too")
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, left)
	code, _, _ = runCLI(t, "check", "--model", "twophase", "--rms", "7", "--memory", "2MiB", "--spill", "off", "--json", "--progress", "0")
	require.Equal(t, exitIncomplete, code)
}

// --checkpoint then --recover: the resumed run ends with the same figures.
func TestCheckpointFlags(t *testing.T) {
	dir := t.TempDir()
	code, out, _ := runCLI(t, "check", "--model", "twophase", "--rms", "4", "--checkpoint", dir, "--checkpoint-every", "1ns", "--json")
	require.Equal(t, exitOK, code)
	first := decodeReport(t, out, "check")
	code, out, errOut := runCLI(t, "check", "--model", "twophase", "--rms", "4", "--recover", dir, "--json")
	require.Equal(t, exitOK, code, errOut)
	again := decodeReport(t, out, "check")
	require.Equal(t, first.Check.Distinct, again.Check.Distinct)
	require.Equal(t, first.Check.Generated, again.Check.Generated)
	require.Equal(t, first.Check.Depth, again.Check.Depth)
	code, _, errOut = runCLI(t, "check", "--model", "twophase", "--rms", "5", "--recover", dir)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "unusable checkpoint")
}

func TestUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"check", "--model", "nope"},
		{"check", "--workers", "-1"},
		{"check", "--bogus"},
		{"check", "--model", "twophase", "--rms", "0"},
		{"check", "--model", "twophase", "--rms", "99"},
		{"check", "extra"},
		{"check", "--config", "does-not-exist.cfg"},
		{"check", "--config", "x.cfg", "--model", "twophase"},
		{"check", "--fp", "96"},
		{"check", "--config", "../../tla/MCDrainRegistrationConstraint.cfg", "--simulate", "--walks", "1"},
		{"check", "--memory", "lots"},
		{"check", "--recover", "no-such-folder"},
		{"check", "--checkpoint-every", "0s"},
		{"check", "--memory", "-1GiB"},
		{"check", "--lookup", "fastest"},
		{"check", "--spill", "main_test.go"},
		{"check", "--spill", "no-such-folder/below"},
		{"check", "--spill", ""},
		{"verify", "--models", "does-not-exist.json"},
	} {
		code, _, errOut := runCLI(t, args...)
		require.Equal(t, exitUsage, code, "%v", args)
		require.NotEmpty(t, errOut, "%v", args)
		require.Less(t, strings.Count(strings.TrimSpace(errOut), "\n"), 40, "a short message: %v", args)
	}
}

// Bad configs name the file and the line.
func TestBadConfigs(t *testing.T) {
	good := "CONSTANTS\n  d1 = d1\n  d2 = d2\n  d3 = d3  b2 = b2  b3 = b3\n  b1 = b1\n  Dispatchers = {d1, d2}\n  TableTriggers = {d2}\n  Brokers = {b1}\n  Versions = {\"new\"}\n  MaxEpoch = 2\n  MaxReg = 2\n  MaxMsgs = 2\n  Transport = \"heartbeat\"\n  Bugs = {}\nSPECIFICATION Spec\nINVARIANTS TypeOK\n"
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	code, _, errOut := runCLI(t, "check", "--config", write("good.cfg", good), "--json", "--progress", "0")
	require.Equal(t, exitOK, code, errOut)
	for _, tc := range []struct{ name, text, want string }{
		{"unknown-constant", strings.Replace(good, "MaxReg = 2", "MaxRegs = 2", 1), ":11: "},
		{"wrong-type", strings.Replace(good, "MaxEpoch = 2", "MaxEpoch = \"two\"", 1), ":10: "},
		{"bad-transport", strings.Replace(good, `"heartbeat"`, `"carrier pigeon"`, 1), ":13: "},
		{"unknown-bug", strings.Replace(good, "Bugs = {}", "Bugs = {\"Gremlins\"}", 1), ":14: "},
		{"missing-invariant", good + "INVARIANT NoSuchInvariant\n", ":17: unknown invariant"},
		{"unknown-property", good + "PROPERTY Eventually\n", ":17: unknown property"},
		{"malformed", strings.Replace(good, "{d1, d2}", "{d1 d2}", 1), ":6: expected , or }"},
		{"symmetry", good + "SYMMETRY Perms\n", ":17: SYMMETRY Perms is not defined"},
		{"constraint", good + "CONSTRAINT Bound\n", ":17: CONSTRAINT Bound is not defined"},
		{"action-constraint", good + "ACTION_CONSTRAINT Step\n", ":17: ACTION_CONSTRAINT Step is not defined"},
		{"view", good + "VIEW V\n", ":17: VIEW V is not defined"},
		{"alias", good + "ALIAS A\n", ":17: ALIAS is not supported"},
		{"symmetry-liveness", good + "SYMMETRY OrdinarySymmetry\nPROPERTY DrainCompletes\n", ":18: liveness property DrainCompletes cannot be checked under a SYMMETRY"},
		{"spec-name", strings.Replace(good, "SPECIFICATION Spec", "SPECIFICATION Spek", 1), ":15: unknown specification"},
		{"negative-epoch", strings.Replace(good, "MaxEpoch = 2", "MaxEpoch = -1", 1), ":10: spec: bad constant: MaxEpoch"},
		{"messages", strings.Replace(good, "MaxMsgs = 2", "MaxMsgs = 0", 1), ":12: spec: bad constant: MaxMsgs"},
		{"triggers", strings.Replace(good, "TableTriggers = {d2}", "TableTriggers = {d3}", 1), ":7: spec: bad constant: TableTriggers"},
		// TLC refuses a cfg that leaves a constant of the module unassigned.
		{"no-bugs", strings.Replace(good, "  Bugs = {}\n", "", 1), ":1: the constant Bugs is not assigned a value; TLC refuses"},
		{"no-model-value", strings.Replace(good, "  d1 = d1\n", "", 1), ":1: the constant d1 is not assigned a value (a model value: d1 = d1)"},
		{"no-max-epoch", strings.Replace(good, "  MaxEpoch = 2\n", "", 1), ":1: the constant MaxEpoch is not assigned a value"},
		{"constants-later", "\\* a comment\n\n" + strings.Replace(good, "  MaxReg = 2\n", "", 1), ":3: the constant MaxReg is not assigned a value"},
		{"erases-needs-logcoord", strings.Replace(good, "Bugs = {}", "Bugs = {\"UnknownErasesCount\"}", 1), ":14: spec: bad constant: UnknownErasesCount"},
	} {
		path := write(tc.name+".cfg", tc.text)
		code, _, errOut := runCLI(t, "check", "--config", path)
		require.Equal(t, exitUsage, code, tc.name)
		require.Contains(t, errOut, path+tc.want, tc.name)
	}
}

func TestCommas(t *testing.T) {
	for in, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1146: "1,146", -1234567: "-1,234,567"} {
		require.Equal(t, want, commas(in))
	}
}

func TestParseTLC(t *testing.T) {
	out := `TLC2 Version 2026.11.29.194305 (rev: cc6b616cf)
Error: Invariant DrainSafety is violated.
Error: The behavior up to this point is:
State 1: <Initial predicate>
State 2: <Next line 1>
State 3: <Next line 2>
1,234 states generated, 567 distinct states found, 89 states left on queue.
The depth of the complete state graph search is 3.
Finished in 01min 02s at (2026-11-29 20:00:00)
`
	r, err := parseTLC(out, "")
	require.NoError(t, err)
	require.Equal(t, tlcRun{Outcome: "violated", Violated: "DrainSafety", Distinct: 567, Generated: 1234, Depth: 3, TraceLength: 3, Seconds: 62, Version: "2026.11.29.194305 (rev: cc6b616cf)"}, r)
	_, err = parseTLC("Exception in thread main", "")
	require.Error(t, err)
}

// oneModelManifest writes a manifest holding only the model of config
// (the default model if none is given), its TLC distinct count changed by
// delta, and returns its path.
// smallModel is the correct model the verify tests check in full: 82,599
// states, a tenth of the default model's, so that the race-detector build
// of these tests stays in seconds.
const smallModel = "MCDrainRegistrationConstraint.cfg"

func oneModelManifest(t *testing.T, delta int64, config ...string) string {
	t.Helper()
	b, err := os.ReadFile("../../tla/models.json")
	require.NoError(t, err)
	var man drainmodel.Manifest
	require.NoError(t, json.Unmarshal(b, &man))
	cfg := "MCDrainRegistration.cfg"
	if len(config) > 0 {
		cfg = config[0]
	}
	for i := range man.Models {
		if man.Models[i].Config == cfg {
			man.Models = man.Models[i : i+1]
			break
		}
	}
	require.Len(t, man.Models, 1)
	man.Models[0].TLC.Distinct += delta
	abs, err := filepath.Abs("../../tla")
	require.NoError(t, err)
	man.Models[0].Config = filepath.Join(abs, cfg)
	p := filepath.Join(t.TempDir(), "models.json")
	require.NoError(t, man.Write(p))
	return p
}

// The CLI's table: a model as recorded passes (all 17 models are checked
// by spec.TestModelsMatchTLC and by make check), a wrong record fails.
func TestVerify(t *testing.T) {
	code, out, errOut := runCLI(t, "verify", "--models", oneModelManifest(t, 0, smallModel))
	require.Equal(t, exitOK, code, out+errOut)
	require.Contains(t, out, "1 models, 1 as recorded, 0 unexpected")
	code, out, _ = runCLI(t, "verify", "--models", oneModelManifest(t, 1, smallModel))
	require.Equal(t, exitViolation, code)
	require.Contains(t, out, "FAIL")
}

func TestParseTLCTemporal(t *testing.T) {
	r, err := parseTLC("Error: Temporal property DrainCompletes was violated.\nState 1: <Init>\nState 2: <A>\nBack to state 1: <B>\n", "")
	require.NoError(t, err)
	require.Equal(t, "DrainCompletes", r.Violated)
	require.Equal(t, 2, r.TraceLength)
	r, err = parseTLC("Error: Temporal properties were violated.\n", "Live")
	require.NoError(t, err)
	require.Equal(t, "Live", r.Violated)
}

func TestHTMLCounterexample(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cex.html")
	code, _, errOut := runCLI(t, "check", "--config", "../../tla/MCDrainRegistrationVariantH.cfg", "--html", path, "--progress", "0")
	require.Equal(t, exitViolation, code, errOut)
	require.Contains(t, errOut, path)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(b), "DrainSafety violated")
	require.Contains(t, string(b), "CoordCompleteDrain")
	// A bad path is an operational error.
	code, _, _ = runCLI(t, "check", "--model", "twophase-bug", "--html", filepath.Join(t.TempDir(), "no", "such", "dir.html"))
	require.Equal(t, exitUsage, code)
}

func TestSimulateMode(t *testing.T) {
	code, out, errOut := runCLI(t, "check", "--model", "twophase-bug", "--simulate", "--walks", "500", "--depth", "20", "--json")
	require.Equal(t, exitViolation, code, errOut)
	r := decodeReport(t, out, "check")
	require.Equal(t, "violated", r.Outcome)
	require.Equal(t, "TCConsistent", r.Violated)
	require.Equal(t, "simulate", r.Check.Mode)
	require.NotNil(t, r.Check.Walk)
	require.NotEmpty(t, r.Trace)
	// The same seed finds the same walk.
	_, out2, _ := runCLI(t, "check", "--model", "twophase-bug", "--simulate", "--walks", "500", "--depth", "20", "--json", "--workers", "1")
	r2 := decodeReport(t, out2, "check")
	require.Equal(t, *r.Check.Walk, *r2.Check.Walk)
	require.Equal(t, r.Trace, r2.Trace)

	code, out, _ = runCLI(t, "check", "--model", "twophase", "--simulate", "--walks", "50")
	require.Equal(t, exitOK, code)
	require.Contains(t, out, "prove nothing")
	code, _, _ = runCLI(t, "check", "--model", "twophase", "--simulate")
	require.Equal(t, exitUsage, code)
	code, _, _ = runCLI(t, "check", "--model", "twophase", "--simulate", "--walks", "5", "--depth", "0")
	require.Equal(t, exitUsage, code)
}
