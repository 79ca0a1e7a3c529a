package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// runCLICtx is runCLI with a context that is cancelled after delay, as a
// Ctrl-C would (main's signal.NotifyContext).
func runCLICtx(t *testing.T, delay time.Duration, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	timer := time.AfterFunc(delay, cancel)
	defer timer.Stop()
	var out, errb bytes.Buffer
	code := run(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

// oneLine requires msg to be a single line containing every want.
func oneLine(t *testing.T, msg string, args []string, want ...string) {
	t.Helper()
	require.Equal(t, 1, strings.Count(msg, "\n"), "one line for %v, got %q", args, msg)
	for _, w := range want {
		require.Contains(t, msg, w, "%v", args)
	}
}

// Every numeric flag is bounded, and the message names the flag; nothing
// runs on a value the command cannot honour.
func TestNumericFlagsBounded(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"check", "--workers", "1000000000"}, "--workers"},
		{[]string{"check", "--workers", "20000000"}, "--workers"},
		{[]string{"check", "--workers", "-1"}, "--workers"},
		{[]string{"check", "--max-states", "-1"}, "--max-states"},
		{[]string{"check", "--max-depth", "-1"}, "--max-depth"},
		{[]string{"check", "--timeout", "-1s"}, "--timeout"},
		{[]string{"check", "--progress", "-1s"}, "--progress"},
		{[]string{"check", "--simulate", "--walks", "-1"}, "--walks"},
		{[]string{"check", "--simulate", "--walks", "5", "--depth", "0"}, "--depth"},
		{[]string{"check", "--simulate", "--walks", "5", "--depth", "100000000"}, "--depth"},
		{[]string{"check", "--model", "twophase", "--rms", "0"}, "--rms"},
		{[]string{"check", "--model", "twophase", "--rms", "99"}, "--rms"},
		{[]string{"verify", "--workers", "5000"}, "--workers"},
		{[]string{"tlc", "--workers", "0"}, "--workers"},
		{[]string{"tlc", "--versus", "--record"}, "--versus"},
		{[]string{"simulate", "--seeds", "0"}, "--seeds"},
		{[]string{"simulate", "--seeds", "100000000"}, "--seeds"},
		{[]string{"simulate", "--steps", "-1"}, "--steps"},
		{[]string{"simulate", "--steps", "2000000000"}, "--steps"},
		{[]string{"simulate", "--seed", "18446744073709551615", "--seeds", "2"}, "--seeds"},
		{[]string{"simulate", "--store", "disk"}, "--store"},
		{[]string{"lincheck", "--ops", "9223372036854775807"}, "--ops"},
		{[]string{"lincheck", "--ops", "0"}, "--ops"},
		{[]string{"lincheck", "--clients", "33"}, "--clients"},
		{[]string{"lincheck", "--round", "0"}, "--round"},
		{[]string{"lincheck", "--round", "9223372036854775807"}, "--round"},
		{[]string{"lincheck", "--timeout", "-1s"}, "--timeout"},
	} {
		code, out, errOut := runCLI(t, tc.args...)
		require.Equal(t, exitUsage, code, "%v", tc.args)
		require.Empty(t, out, "%v: nothing runs", tc.args)
		oneLine(t, errOut, tc.args, tc.flag)
	}
}

// --html writes a report whatever the verdict, and says where.
func TestHTMLWrittenWhenPassing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ok.html")
	code, _, errOut := runCLI(t, "check", "--model", "twophase", "--html", path, "--progress", "0")
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, errOut, "written to "+path)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(b), "No error has been found")

	path = filepath.Join(dir, "lin.html")
	code, out, errOut := runCLI(t, "lincheck", "--clients", "2", "--ops", "60", "--html", path)
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "report: "+path)
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Positive(t, st.Size())
}

// --cpuprofile writes the run's CPU profile (gzipped protocol buffers, as
// go tool pprof and PGO read them) and leaves the verdict as it was.
func TestCPUProfileWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.prof")
	code, out, errOut := runCLI(t, "check", "--model", "twophase", "--rms", "4", "--progress", "0", "--cpuprofile", path)
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "No error has been found")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Greater(t, len(b), 2)
	require.Equal(t, []byte{0x1f, 0x8b}, b[:2], "a gzipped profile")
}

// A bad output path is found before the run: one line, exit 2, no verdict
// printed and nothing recorded.
func TestOutputPathsCheckedFirst(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "no", "such", "dir", "x.html")
	// A folder cannot be made under a file (file modes would not stop the
	// tests when they run as root).
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	badDir := filepath.Join(file, "checkpoints")
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"check", "--model", "twophase-bug", "--html", bad}, "--html"},
		{[]string{"check", "--model", "twophase-bug", "--simulate", "--walks", "5", "--html", bad}, "--html"},
		{[]string{"check", "--model", "twophase-bug", "--cpuprofile", bad}, "--cpuprofile"},
		{[]string{"check", "--model", "twophase-bug", "--checkpoint", badDir}, "--checkpoint"},
		{[]string{"check", "--model", "twophase-bug", "--checkpoint", file}, "--checkpoint"},
		{[]string{"lincheck", "--ops", "50", "--html", bad}, "--html"},
		{[]string{"lincheck", "--ops", "50", "--save", bad}, "--save"},
		{[]string{"lincheck", "--history", bad}, "--history"},
	} {
		code, out, errOut := runCLI(t, tc.args...)
		require.Equal(t, exitUsage, code, "%v", tc.args)
		require.Empty(t, out, "%v", tc.args)
		oneLine(t, errOut, tc.args, tc.flag)
		require.NotContains(t, errOut, "Checking", "%v: the run did not start", tc.args)
	}
	// An existing file is not truncated by the check.
	keep := filepath.Join(t.TempDir(), "keep.html")
	require.NoError(t, os.WriteFile(keep, []byte("old"), 0o644))
	code, _, errOut := runCLI(t, "check", "--model", "twophase", "--rms", "0", "--html", keep)
	require.Equal(t, exitUsage, code, errOut)
	b, err := os.ReadFile(keep)
	require.NoError(t, err)
	require.Equal(t, "old", string(b))
}

func TestTLCOnlyUnknownModel(t *testing.T) {
	jar := filepath.Join(t.TempDir(), "tla2tools.jar")
	require.NoError(t, os.WriteFile(jar, nil, 0o644))
	code, out, errOut := runCLI(t, "tlc", "--models", "../../tla/models.json", "--jar", jar, "--only", "Nope.cfg")
	require.Equal(t, exitUsage, code)
	require.Empty(t, out)
	oneLine(t, errOut, nil, "--only", "Nope.cfg")
}

func TestModelsRefusesArguments(t *testing.T) {
	code, out, errOut := runCLI(t, "models", "extra")
	require.Equal(t, exitUsage, code)
	require.Empty(t, out)
	oneLine(t, errOut, nil, `"extra"`)
	code, out, _ = runCLI(t, "models")
	require.Equal(t, exitOK, code)
	require.Contains(t, out, "twophase")
}

// lincheck drives only the event service: a drain-controller bug would
// pass unexercised, so it is refused, with or without -tags bugs.
func TestLincheckRefusesBugsItCannotExercise(t *testing.T) {
	for _, b := range []string{"IgnoreBrokerCount", "TrustLivenessResponse", "AcceptStaleEpoch", "UnknownErasesCount"} {
		code, out, errOut := runCLI(t, "lincheck", "--ops", "50", "--bug", b)
		require.Equal(t, exitUsage, code, b)
		require.Empty(t, out, b)
		oneLine(t, errOut, []string{b}, "--bug "+b, "event service")
	}
}

// Ctrl-C is not a regression: every subcommand stops with its partial
// figures and exit 3, as check does.
func TestInterruptIsIncomplete(t *testing.T) {
	t.Run("check", func(t *testing.T) {
		code, out, _ := runCLICtx(t, 100*time.Millisecond, "check", "--model", "twophase", "--rms", "9", "--progress", "0")
		require.Equal(t, exitIncomplete, code)
		require.Contains(t, out, "partial")
	})
	t.Run("verify", func(t *testing.T) {
		code, out, errOut := runCLICtx(t, 150*time.Millisecond, "verify", "--models", oneModelManifest(t, 0, "MCDrainRegistrationLarge.cfg"), "--all")
		require.Equal(t, exitIncomplete, code, out+errOut)
		require.NotContains(t, out+errOut, "UNEXPECTED")
		require.NotContains(t, out+errOut, "FAIL")
		require.Contains(t, out+errOut, "interrupted")
	})
	t.Run("simulate", func(t *testing.T) {
		code, out, errOut := runCLICtx(t, 150*time.Millisecond, "simulate", "--seeds", "100000", "--steps", "2000")
		require.Equal(t, exitIncomplete, code, errOut)
		require.Contains(t, out, "interrupted")
		require.Contains(t, out, "broken streams 0")
		require.NotContains(t, errOut, "context canceled")
	})
	t.Run("json", func(t *testing.T) {
		for _, args := range [][]string{
			{"verify", "--models", oneModelManifest(t, 0, "MCDrainRegistrationLarge.cfg"), "--all"},
			{"simulate", "--seeds", "100000"},
			{"lincheck", "--ops", "5000000"},
		} {
			code, out, errOut := runCLICtx(t, 150*time.Millisecond, append(args, "--json")...)
			require.Equal(t, exitIncomplete, code, "%v: %s", args, errOut)
			r := decodeReport(t, out, args[0])
			require.Equal(t, "incomplete", r.Outcome)
			require.Contains(t, r.Reason, "interrupted")
		}
	})
	t.Run("lincheck", func(t *testing.T) {
		code, out, errOut := runCLICtx(t, 150*time.Millisecond, "lincheck", "--ops", "5000000")
		require.Equal(t, exitIncomplete, code, errOut)
		require.Contains(t, out, "interrupted")
		require.NotContains(t, errOut, "context canceled")
	})
}
