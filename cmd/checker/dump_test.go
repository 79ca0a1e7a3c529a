package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// dumpModel is one model of the state-set parity test: our checker's
// arguments, and TLC's folder, module and cfg.
type dumpModel struct {
	name           string
	ours           []string
	dir, mod, conf string
}

// dumpModels are small models (TwoPhase's 288 states; the protocol with
// one epoch, one REGISTER and one message in flight under both transports
// and with the bug CountAfterPublish: 5,591 to 9,335 states).
func dumpModels(t *testing.T) []dumpModel {
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		require.NoError(t, err)
		return a
	}
	out := []dumpModel{{"TwoPhase, 3 RMs", []string{"--model", "twophase", "--rms", "3"}, abs("../../tla/twophase"), "MCTwoPhase.tla", "MCTwoPhase3.cfg"}}
	for _, c := range []string{"Heartbeat", "LogCoord", "BugCountAfterPublish"} {
		cfg := abs("testdata/dump/Dump" + c + ".cfg")
		out = append(out, dumpModel{"Dump" + c, []string{"--config", cfg}, abs("../../tla"), "MCDrainRegistration.tla", cfg})
	}
	return out
}

// diffDumps lists the states only in a and only in b, sorted.
func diffDumps(a, b map[string]struct{}) (onlyA, onlyB []string) {
	for s := range a {
		if _, ok := b[s]; !ok {
			onlyA = append(onlyA, s)
		}
	}
	for s := range b {
		if _, ok := a[s]; !ok {
			onlyB = append(onlyB, s)
		}
	}
	slices.Sort(onlyA)
	slices.Sort(onlyB)
	return onlyA, onlyB
}

// ourDump writes m's dump with checker check --dump and reads it.
func ourDump(t *testing.T, m dumpModel) (string, map[string]struct{}) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ours.dump")
	code, _, errOut := runCLI(t, append([]string{"check", "--progress", "0", "--dump", path}, m.ours...)...)
	require.Equal(t, exitOK, code, errOut)
	set, err := readDump(path)
	require.NoError(t, err)
	return path, set
}

// The state-set parity test: checker check --dump writes the same set of
// distinct states as TLC's -dump (the same states, not only as many), on
// four small models. It runs TLC when TLA2TOOLS names tla2tools.jar (CI
// sets it).
func TestDumpEqualsTLCDump(t *testing.T) {
	jar := os.Getenv("TLA2TOOLS")
	if jar == "" {
		t.Skip("TLA2TOOLS is not set: the state-set parity test needs TLC (tla2tools.jar); CI sets it")
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("no java: the state-set parity test needs TLC")
	}
	for _, m := range dumpModels(t) {
		t.Run(m.name, func(t *testing.T) {
			_, ours := ourDump(t, m)
			tmp := t.TempDir()
			tlcPath := filepath.Join(tmp, "tlc")
			cmd := exec.Command("java", "-XX:+UseParallelGC", "-Djava.io.tmpdir="+tmp, "-cp", jar, "tlc2.TLC", "-workers", "1",
				"-noGenerateSpecTE", "-metadir", filepath.Join(tmp, "meta"), "-config", m.conf, "-dump", tlcPath, m.mod)
			cmd.Dir = m.dir
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "TLC: %s", out)
			require.Contains(t, string(out), "No error has been found", "TLC: %s", out)
			tlc, err := readDump(tlcPath + ".dump")
			require.NoError(t, err)
			onlyOurs, onlyTLC := diffDumps(ours, tlc)
			require.Empty(t, onlyOurs, "states only in checker check --dump (TLC has %d, we %d)", len(tlc), len(ours))
			require.Empty(t, onlyTLC, "states only in TLC's -dump (TLC has %d, we %d)", len(tlc), len(ours))
			require.NotEmpty(t, ours)
			t.Logf("%s: the same %d states", m.name, len(ours))
		})
	}
}

// The comparison is of sets: it fails when one state of a dump differs,
// though the counts are equal; and it does not care how a dump orders
// states, variables, set elements or fields, or breaks its lines.
func TestDumpComparisonCatchesOneState(t *testing.T) {
	path, ours := ourDump(t, dumpModels(t)[0])
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	// Change one state: State 2's tmState, to a value no state of TwoPhase with
	// those other variables has.
	blocks := strings.Split(string(b), "\n\n")
	require.Contains(t, blocks[1], `/\ tmState = "aborted"`)
	blocks[1] = strings.Replace(blocks[1], `/\ tmState = "aborted"`, `/\ tmState = "committed"`, 1)
	changed := filepath.Join(t.TempDir(), "changed.dump")
	require.NoError(t, os.WriteFile(changed, []byte(strings.Join(blocks, "\n\n")), 0o600))
	other, err := readDump(changed)
	require.NoError(t, err)
	require.Len(t, other, len(ours), "equal counts")
	onlyOurs, onlyOther := diffDumps(ours, other)
	require.Len(t, onlyOurs, 1, "one state differs")
	require.Len(t, onlyOther, 1, "one state differs")

	// TLC's spelling of one state against ours: other order, fields,
	// line breaks and a record's spaces.
	tlcStyle := "State 1:\n/\\ msgs = {[type |-> \"Prepared\", rm |-> r2],\n  [rm |-> r1, type |-> \"Prepared\"]}\n/\\ rmState = ( r2 :> \"prepared\" @@\n  r1 :> \"prepared\" @@ r3 :> \"working\" )\n/\\ tmState = \"init\"\n/\\ tmPrepared = {r2, r1}\n\n"
	oursStyle := "State 7:\n/\\ rmState = (r1 :> \"prepared\" @@ r2 :> \"prepared\" @@ r3 :> \"working\")\n/\\ tmState = \"init\"\n/\\ tmPrepared = {r1, r2}\n/\\ msgs = {[type |-> \"Prepared\", rm |-> r1], [type |-> \"Prepared\", rm |-> r2]}\n\n"
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a"), []byte(tlcStyle), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b"), []byte(oursStyle), 0o600))
	a, err := readDump(filepath.Join(dir, "a"))
	require.NoError(t, err)
	bb, err := readDump(filepath.Join(dir, "b"))
	require.NoError(t, err)
	require.Equal(t, a, bb)
}

// --dump is refused, with one line and before the run, where TLC's
// stored states depend on its search order, and with --simulate.
func TestDumpRefusals(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.dump")
	code, _, errOut := runCLI(t, "check", "--config", "../../tla/MCDrainRegistrationSymmetry.cfg", "--dump", path)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "--dump: under a VIEW or SYMMETRY")
	code, _, errOut = runCLI(t, "check", "--model", "twophase", "--simulate", "--walks", "2", "--dump", path)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "--dump")
	code, _, errOut = runCLI(t, "check", "--model", "twophase", "--dump", filepath.Join(path, "no", "such", "dir"))
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "--dump")
	_, err := readDump(filepath.Join(t.TempDir(), "missing"))
	require.Error(t, err)
}
