package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/spec"
	"github.com/stretchr/testify/require"
)

// The lasso of DrainCompletes says the same in its three forms: the text
// ends with "Back to state N: <label>", the JSON report has that step as
// loop_back, and the page has it as its last row, with a note that names
// the steps of the loop without suggesting the last action repeats.
func TestLassoClosingStepInEveryForm(t *testing.T) {
	cfg := "../../tla/MCDrainRegistrationBugDoubleIncrementLive.cfg"
	code, text, errOut := runCLI(t, "check", "--config", cfg, "--progress", "0", "--workers", "1")
	require.Equal(t, exitViolation, code, errOut)
	var back string
	for _, l := range strings.Split(text, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[1] == "Back" {
			back = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), f[0]))
		}
	}
	require.NotEmpty(t, back, "the text closes the loop:\n%s", text)

	page := filepath.Join(t.TempDir(), "lasso.html")
	code, out, errOut := runCLI(t, "check", "--config", cfg, "--progress", "0", "--workers", "1", "--json", "--html", page)
	require.Equal(t, exitViolation, code, errOut)
	r := decodeReport(t, out, "check")
	require.NotNil(t, r.LoopStart)
	require.NotNil(t, r.LoopBack, "the JSON report has the closing step")
	require.Equal(t, back, r.LoopBack.Label)
	require.Equal(t, *r.LoopStart+1, r.LoopBack.ToState)
	require.Equal(t, r.Trace[*r.LoopStart].Action, r.LoopBack.Action, "on this model the loop is entered and closed by the same action")
	require.True(t, strings.HasPrefix(back, fmt.Sprintf("Back to state %d: %s", *r.LoopStart+1, r.LoopBack.Action)), back)

	b, err := os.ReadFile(page)
	require.NoError(t, err)
	html := string(b)
	n, k := r.Steps, *r.LoopStart+1
	require.Contains(t, html, fmt.Sprintf(`<td class="n">%d</td><td class="step">%s</td>`, n+1, htmlEscape(back)), "the page's last row is the closing step")
	require.Contains(t, html, fmt.Sprintf("steps %d–%d, the last of which (%s) leads back to state %d", k+1, n+1, htmlEscape(strings.TrimPrefix(back, fmt.Sprintf("Back to state %d: ", k))), k))
	require.NotContains(t, html, "repeat forever", "no note that reads as if the last action repeats")
}

// htmlEscape is what html/template makes of s in a text node.
func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

// SYMMETRY with a liveness property is refused with the remedy; asking
// for the safety part alone (--liveness=false) is not refused, and checks
// it under the symmetry.
func TestSymmetryLivenessRemedy(t *testing.T) {
	b, err := os.ReadFile("../../tla/MCDrainRegistration.cfg")
	require.NoError(t, err)
	require.NotContains(t, string(b), "SYMMETRY")
	path := filepath.Join(t.TempDir(), "sym.cfg")
	require.NoError(t, os.WriteFile(path, append(b, "\nSYMMETRY OrdinarySymmetry\nPROPERTY DrainCompletes\n"...), 0o644))
	code, out, errOut := runCLI(t, "check", "--config", path, "--progress", "0")
	require.Equal(t, exitUsage, code, out)
	oneLine(t, errOut, nil, "liveness property DrainCompletes cannot be checked under a SYMMETRY",
		"remove the SYMMETRY OrdinarySymmetry line", "--liveness=false")

	code, out, errOut = runCLI(t, "check", "--config", path, "--progress", "0", "--liveness=false", "--json")
	require.Equal(t, exitOK, code, errOut)
	r := decodeReport(t, out, "check")
	require.Empty(t, r.Check.Properties.Temporal)
	require.NotEmpty(t, r.Check.Properties.Invariants)
}

// Random walks stopped by Ctrl-C, or by --timeout before the --walks
// asked for, are incomplete (exit 3, as docs/checker.md's table of exit codes
// says); with no --walks the timeout is the run's length, and it passes.
func TestSimulateWalksStoppedEarlyExitThree(t *testing.T) {
	walks := []string{"check", "--model", "twophase", "--rms", "7", "--simulate", "--progress", "0"}
	code, out, errOut := runCLICtx(t, 150*time.Millisecond, append(walks, "--timeout", "1h")...)
	require.Equal(t, exitIncomplete, code, errOut)
	require.Contains(t, out, "Simulation stopped early: interrupted after")
	code, out, errOut = runCLICtx(t, 150*time.Millisecond, append(walks, "--walks", "1000000000", "--json")...)
	require.Equal(t, exitIncomplete, code, errOut)
	r := decodeReport(t, out, "check")
	require.Equal(t, outcomeIncomplete, r.Outcome)
	require.Contains(t, r.Reason, "interrupted: ")
	require.Contains(t, r.Reason, "of 1,000,000,000 walks run")

	code, out, errOut = runCLI(t, append(walks, "--walks", "1000000000", "--timeout", "100ms")...)
	require.Equal(t, exitIncomplete, code, errOut)
	require.Contains(t, out, "Simulation stopped early: timeout (100ms)")
	code, out, errOut = runCLI(t, append(walks, "--timeout", "100ms")...)
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "Simulation found no error")
}

// A flag that the rest of the command line makes meaningless is refused
// with one line naming it, instead of being ignored.
func TestConflictingFlagsRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"check", "--model", "twophase", "--simulate", "--walks", "5", "--max-states", "10"}, []string{"--max-states", "--simulate"}},
		{[]string{"check", "--model", "twophase", "--simulate", "--walks", "5", "--checkpoint", t.TempDir()}, []string{"--checkpoint", "--simulate"}},
		{[]string{"check", "--model", "twophase", "--simulate", "--walks", "5", "--continue", "--coverage"}, []string{"--continue, --coverage", "--simulate"}},
		{[]string{"check", "--model", "twophase", "--walks", "5"}, []string{"--walks", "exhaustive"}},
		{[]string{"check", "--model", "twophase", "--seed", "3", "--depth", "9"}, []string{"--depth, --seed", "exhaustive"}},
		{[]string{"check", "--config", "../../tla/MCDrainRegistration.cfg", "--rms", "4"}, []string{"--rms", "twophase"}},
		{[]string{"check", "--model", "twophase", "--checkpoint-every", "1m"}, []string{"--checkpoint-every", "no --checkpoint"}},
		{[]string{"lincheck", "--history", "x.json", "--ops", "10"}, []string{"--ops", "--history"}},
		{[]string{"lincheck", "--history", "x.json", "--clients", "2", "--seed", "4", "--round", "3"}, []string{"--clients, --seed, --round", "--history"}},
		{[]string{"tlc", "--only", "MCDrainRegistration.cfg", "--all"}, []string{"--all", "--only"}},
		{[]string{"bugs", "--list", "--only", "NoReReport"}, []string{"--only", "--list"}},
	} {
		code, out, errOut := runCLI(t, tc.args...)
		require.Equal(t, exitUsage, code, "%v: %s", tc.args, out)
		require.Empty(t, out, "%v", tc.args)
		oneLine(t, errOut, tc.args, tc.want...)
	}
}

// make test ends with one line saying that the browser tests were skipped,
// with the install command, when no chromium is on PATH outside CI; not
// when one is, nor in CI (where they fail instead), and the suite's exit
// status is kept. The test runs the Makefile's recipe with a stand-in go
// and a PATH of only that.
func TestMakeTestSaysBrowserTestsSkipped(t *testing.T) {
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make on this machine")
	}
	sh, err := exec.LookPath("sh")
	require.NoError(t, err)
	bin := t.TempDir()
	fakeGo := filepath.Join(bin, "go")
	require.NoError(t, os.WriteFile(fakeGo, []byte("#!"+sh+"\necho ok fake suite\nexit ${FAKE_GO_STATUS:-0}\n"), 0o755))
	makeTest := func(env ...string) (string, int) {
		cmd := exec.Command(mk, "--no-print-directory", "-C", "../..", "test", "GO="+fakeGo)
		cmd.Env = append([]string{"PATH=" + bin, "HOME=" + t.TempDir()}, env...)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return string(out), code
	}
	const note = "make test: the browser tests of cmd/checker were skipped: no chromium on this machine (install it: apt-get install -y chromium)\n"
	out, code := makeTest()
	require.Zero(t, code, out)
	require.Regexp(t, "ok fake suite\nmake test: passed in [0-9]+ s\n"+regexp.QuoteMeta(note)+"$", out, "the time, then the note as the last line")
	out, code = makeTest("FAKE_GO_STATUS=1")
	require.NotZero(t, code, "a failing suite still fails make test")
	require.Regexp(t, "ok fake suite\nmake test: FAILED after [0-9]+ s\n"+regexp.QuoteMeta(note)+"make: \\*\\*\\*", out, "the time, the note, then make's own error line")
	out, _ = makeTest("CI=1")
	require.NotContains(t, out, "skipped", "in CI the browser tests fail instead")
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		require.NoError(t, os.WriteFile(filepath.Join(bin, name), []byte("#!"+sh+"\n"), 0o755))
		out, _ = makeTest()
		require.NotContains(t, out, "skipped", name)
		require.NoError(t, os.Remove(filepath.Join(bin, name)))
	}
}

// checker traceparity's corpus holds the two cases where checker trace
// and TLC once differed, and compares them: a send line without its
// message (an input error for checker trace, a rejection for TLC: they
// agree when TLC rejects that line) and an epoch past the header's
// MaxEpoch (a rejection for both). TLC is a stand-in here that answers
// what TLC answers (make trace-parity runs the real one).
func TestTraceParityComparesUnnamedSends(t *testing.T) {
	dir := t.TempDir()
	good := tracecheck.TraceConfig(spec.DefaultConfig())
	gm, err := spec.New(good)
	require.NoError(t, err)
	b, err := walkBatch(dir, spec.TransportHeartbeat, good, gm, rand.New(rand.NewPCG(1, 2)), 6, 60)
	require.NoError(t, err)
	// The line each mutant changed, from its walk: TLC rejects there.
	changed := func(file string) int {
		walk := regexp.MustCompile(`(nomsg|pastepoch)-`).ReplaceAllString(file, "walk-")
		x, err := os.ReadFile(walk)
		require.NoError(t, err)
		y, err := os.ReadFile(file)
		require.NoError(t, err)
		xs, ys := strings.Split(string(x), "\n"), strings.Split(string(y), "\n")
		require.Equal(t, len(xs), len(ys))
		for i := range xs {
			if xs[i] != ys[i] {
				return i + 1
			}
		}
		t.Fatalf("%s is its walk", file)
		return 0
	}
	kinds := map[string]int{}
	var batch parityBatch
	for _, f := range b.files {
		kind := strings.SplitN(filepath.Base(f), "-", 2)[0]
		if kind != "nomsg" && kind != "pastepoch" {
			continue
		}
		kinds[kind]++
		line := changed(f)
		res, err := tracecheck.CheckFile(f, nil, tracecheck.Options{})
		if kind == "nomsg" {
			require.ErrorIs(t, err, tracecheck.ErrUnnamedSend, f)
		} else {
			require.NoError(t, err)
			require.Equal(t, tracecheck.Rejected, res.Verdict, "%s: %+v", f, res)
			require.Contains(t, res.Reason, "MaxEpoch")
		}
		require.Equal(t, line-2, res.Lines, "%s: the lines before the changed one are explained", f)
		require.NoError(t, os.WriteFile(f+".tlc", []byte(fmt.Sprintf("rejected %d", line-2)), 0o644))
		batch.files = append(batch.files, f)
	}
	require.Positive(t, kinds["nomsg"], "the corpus has sends without their message")
	require.Positive(t, kinds["pastepoch"], "the corpus has epochs past MaxEpoch")

	bin := t.TempDir()
	java := "#!/bin/sh\nsed 's/^{\"file\":\"\\(.*\\)\"}$/\\1/' \"$TRACES\" | while read f; do echo \"\\\"TRACE $f $(cat \"$f.tlc\")\\\"\"; done\n"
	require.NoError(t, os.WriteFile(filepath.Join(bin, "java"), []byte(java), 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	batch.name = "unnamed"
	var out parityOutput
	var errb strings.Builder
	f := parityFlags{jar: "x.jar", mods: "y.jar", dir: dir, tlaDir: dir}
	require.NoError(t, out.check(context.Background(), &f, batch, &errb))
	require.Zero(t, out.Disagree, errb.String())
	require.Equal(t, kinds["nomsg"], out.UnnamedSend)
	require.Equal(t, len(batch.files), out.Rejected)
}
