package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
