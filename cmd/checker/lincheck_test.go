package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/stretchr/testify/require"
)

func TestLincheckRecordsAndPasses(t *testing.T) {
	dir := t.TempDir()
	saved := filepath.Join(dir, "h.json")
	code, out, errs := runCLI(t, "lincheck", "--clients", "4", "--ops", "300", "--seed", "3", "--json", "--save", saved)
	require.Equal(t, exitOK, code, errs)
	r := decodeReport(t, out, "lincheck")
	require.Equal(t, "ok", r.Outcome)
	require.Equal(t, 4, r.Lincheck.Clients)
	require.Greater(t, r.Lincheck.Ops, 300) // audits included
	require.Empty(t, r.Lincheck.HTML)
	require.Equal(t, saved, r.Lincheck.History)

	code, out, errs = runCLI(t, "lincheck", "--history", saved)
	require.Equal(t, exitOK, code, errs)
	require.Contains(t, out, "linearizable")
}

// illegalHistory writes, in dir, a history no order explains: a
// registration admitted after the admission closed.
func illegalHistory(t *testing.T, dir string) string {
	t.Helper()
	hist := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(hist, []byte(`{"version":2,"clients":2,"seed":0,"ops":[
		{"client":0,"call":1,"return":2,"kind":"close"},
		{"client":1,"call":3,"return":4,"kind":"register","id":"t0"}]}`), 0o644))
	return hist
}

func TestLincheckIllegalHistoryExitsOne(t *testing.T) {
	dir := t.TempDir()
	hist := illegalHistory(t, dir)
	html := filepath.Join(dir, "r.html")
	code, out, _ := runCLI(t, "lincheck", "--history", hist, "--html", html, "--json")
	require.Equal(t, exitViolation, code)
	r := decodeReport(t, out, "lincheck")
	require.Equal(t, "violated", r.Outcome)
	require.Equal(t, "Linearizability", r.Violated)
	require.Equal(t, html, r.Lincheck.HTML)
	il := r.Lincheck.FirstIllegal
	require.NotNil(t, il)
	require.Equal(t, 1, il.Client)
	require.Contains(t, il.Op, "Register(t0")
	require.Contains(t, il.Expected, "closed")
	st, err := os.Stat(html)
	require.NoError(t, err)
	require.Positive(t, st.Size())

	code, out, _ = runCLI(t, "lincheck", "--history", hist, "--html", html)
	require.Equal(t, exitViolation, code)
	require.Contains(t, out, "NOT linearizable")
	require.Contains(t, out, "first illegal operation: client 1: Register(t0)")
	require.Contains(t, out, "expected state count=0+0 closed")
	require.Contains(t, out, "report: "+html)
}

func TestLincheckUsageErrorsExitTwo(t *testing.T) {
	dir := t.TempDir()
	malformed := filepath.Join(dir, "m.json")
	require.NoError(t, os.WriteFile(malformed, []byte(`{"version":2,"clients":1,"ops":[{"client":0,"call":2,"return":1,"kind":"close"}]}`), 0o644))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--clients", "0"}, "--clients must be in 1..32"},
		{[]string{"--clients", "33"}, "--clients must be in 1..32"},
		{[]string{"--ops", "0"}, "--ops must be in 1..100,000,000"},
		{[]string{"--nope"}, "flag provided but not defined"},
		{[]string{"extra"}, "unexpected argument"},
		{[]string{"--history", malformed}, "malformed history: op 0: interval [2, 1]"},
		{[]string{"--history", filepath.Join(dir, "missing.json")}, "--history: open"},
		{[]string{"--history", malformed, "--bug", "DoubleIncrement"}, "do not apply"},
		{[]string{"--bug", "NoSuchBug"}, "unknown bug"},
	} {
		code, _, errs := runCLI(t, append([]string{"lincheck"}, tc.args...)...)
		require.Equal(t, exitUsage, code, tc.args)
		require.Contains(t, errs, tc.want, tc.args)
	}
	if !bugs.Built {
		code, _, errs := runCLI(t, "lincheck", "--bug", "DoubleIncrement")
		require.Equal(t, exitUsage, code)
		require.Contains(t, errs, "needs a binary built with -tags bugs")
	}
}

func TestLincheckBugExitsOne(t *testing.T) {
	if !bugs.Built {
		t.Skip("needs -tags bugs")
	}
	code, out, errs := runCLI(t, "lincheck", "--ops", "1000", "--bug", "DoubleIncrement", "--html", filepath.Join(t.TempDir(), "r.html"), "--json")
	require.Equal(t, exitViolation, code, errs)
	r := decodeReport(t, out, "lincheck")
	require.Equal(t, "violated", r.Outcome)
	require.Equal(t, "DoubleIncrement", r.Lincheck.Bug)
	require.NotNil(t, r.Lincheck.FirstIllegal)
}

// TestLincheckTraceValidates: `checker lincheck --trace` records in trace
// mode and `checker trace` accepts its trace (docs/trace.md).
func TestLincheckTraceValidates(t *testing.T) {
	f := filepath.Join(t.TempDir(), "lincheck.ndjson")
	code, out, errs := runCLI(t, "lincheck", "--clients", "4", "--ops", "300", "--seed", "2", "--trace", f)
	require.Equal(t, exitOK, code, errs)
	require.Contains(t, out, "trace (trace mode) written to "+f)
	code, out, errs = runCLI(t, "trace", f)
	require.Equal(t, exitOK, code, "%s\n%s", out, errs)
	require.Contains(t, out, "1 ok, 0 rejected")
}
