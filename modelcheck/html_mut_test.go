package modelcheck_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/drainproof/drainproof/modelcheck"
	"github.com/stretchr/testify/require"
)

// A loop start past the trace's last state marks no loop: the page is the
// trace's rows alone, with neither a loop-start marker nor a closing step.
func TestLoopStartPastTheTraceIsNoLoop(t *testing.T) {
	g := &grid{size: 8, bad: func(x, y int) bool { return x == 3 && y == 0 }}
	res := check(t, g, modelcheck.Options{})
	for _, start := range []int{len(res.Trace), len(res.Trace) + 3} {
		var b bytes.Buffer
		require.NoError(t, modelcheck.WriteTraceHTMLWith(&b, modelcheck.Model[point](g), res.Trace, modelcheck.HTMLTrace{Title: "t", LoopStart: start}))
		page := b.String()
		require.NotContains(t, page, `<span class="mark">`, "loop start %d", start)
		require.False(t, strings.Contains(page, "loop back") || strings.Contains(page, "Stuttering"), "loop start %d: a closing step", start)
	}
}
