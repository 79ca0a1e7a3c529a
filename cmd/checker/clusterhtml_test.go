package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/drainproof/drainproof/harness/cluster"
	"github.com/stretchr/testify/require"
)

// loadClusterRun reads a recorded cluster run: testdata/cluster holds
// the result of `checker cluster --seed 1 --duration 8s --upgrade
// --faults kill,pause,partition,delay --json` (its "cluster" object).
func loadClusterRun(t *testing.T) *cluster.Result {
	t.Helper()
	b, err := os.ReadFile("testdata/cluster/seed1-8s.json")
	require.NoError(t, err)
	var r cluster.Result
	require.NoError(t, json.Unmarshal(b, &r))
	require.NotEmpty(t, r.Timeline)
	return &r
}

// TestClusterPageContent: the --html page of a recorded run has the
// verdict, one lane per process, a mark per fault, SIGTERM and drain
// done, a dispatcher line per node, a row per event, and nothing
// fetched from elsewhere; a run with a violation says FAIL and names it.
func TestClusterPageContent(t *testing.T) {
	r := loadClusterRun(t)
	var b bytes.Buffer
	require.NoError(t, writeClusterHTML(&b, []*cluster.Result{r}, "seed 1"))
	page := b.String()
	require.Contains(t, page, "<b>cluster PASS</b>")
	require.Contains(t, page, "seed 1: PASS")
	require.NotContains(t, page, `class="fail"`)
	for _, p := range []string{"logcoord", "coordinator", "n1", "n2", "n3"} {
		require.Contains(t, page, fmt.Sprintf(`data-process="%s"`, p))
	}
	kinds := map[string]int{}
	for _, e := range r.Timeline {
		kinds[e.Kind]++
	}
	require.Equal(t, len(r.Faults), strings.Count(page, `class="mark fault"`), "a mark per fault")
	require.Equal(t, kinds[cluster.EventSigterm], strings.Count(page, `class="mark sigterm"`))
	require.Equal(t, 3, kinds[cluster.EventSigterm], "the upgrade drains every node")
	require.Equal(t, len(r.Drains), strings.Count(page, `class="mark done"`)+strings.Count(page, `class="mark legacy"`), "a mark per drain done")
	require.Equal(t, kinds[cluster.EventRestart], strings.Count(page, `class="mark restart"`))
	require.Equal(t, 3, strings.Count(page, `<polyline class="disp"`), "a dispatcher line per node, none for the others")
	require.Contains(t, page, "faults stop")
	require.Equal(t, len(r.Timeline)-kinds[cluster.EventDispatchers]+len(r.Faults), strings.Count(page, "<tr")-1, "a row per event")
	for _, ext := range []string{"src=", "href=", "url(", "@import", "http:", "https:", "<script"} {
		require.NotContains(t, page, ext, "the page is self-contained")
	}

	r.Violations = []string{"drain of n2 (epoch 3) completed while dispatcher disp-t2 was registered"}
	b.Reset()
	require.NoError(t, writeClusterHTML(&b, []*cluster.Result{r}, "seed 1"))
	page = b.String()
	require.Contains(t, page, `<div id="verdict" class="fail"><b>cluster FAIL</b>`)
	require.Contains(t, page, "seed 1: FAIL")
	require.Contains(t, page, "<li>drain of n2 (epoch 3) completed while dispatcher disp-t2 was registered</li>")
}

// TestClusterHTMLFlag: --html to a file that cannot be written is one
// line and exit 2, before anything runs.
func TestClusterHTMLFlag(t *testing.T) {
	code, out, errOut := runCLI(t, "cluster", "--html", "/nonexistent/dir/page.html")
	require.Equal(t, exitUsage, code)
	require.Empty(t, out)
	require.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
	require.Contains(t, errOut, "checker cluster: --html")
}
