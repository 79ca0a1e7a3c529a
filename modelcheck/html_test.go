package modelcheck_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/drainproof/drainproof/modelcheck"
	"github.com/stretchr/testify/require"
)

// The page puts the focus variables first, shows the definition and
// where the property fails, collapses the columns no step changes, and
// marks a lasso's loop.
func TestWriteTraceHTMLWith(t *testing.T) {
	g := &grid{size: 8, bad: func(x, y int) bool { return x == 3 && y == 0 }}
	res := check(t, g, modelcheck.Options{})
	require.Len(t, res.Trace, 4) // x moves, y stays 0
	var b bytes.Buffer
	require.NoError(t, modelcheck.WriteTraceHTMLWith(&b, modelcheck.Model[point](g), res.Trace, modelcheck.HTMLTrace{
		Title: "Safe violated", Summary: "4 states", LoopStart: 2, LoopLabel: "Back2", Fails: "fails at step 4",
		Definition: "Safe == ~(x = 3 /\\ y = 0)", Focus: []string{"y"},
	}))
	page := b.String()
	head := page[strings.Index(page, "<table"):]
	head = head[:strings.Index(head, "</tr>")]
	require.Less(t, strings.Index(head, ">y<"), strings.Index(head, ">x<"), "the focus variable first: %s", head)
	require.Contains(t, head, `class="focus"`)
	require.Contains(t, page, "Safe == ~(x = 3 /\\ y = 0)")
	require.Contains(t, page, "fails at step 4")
	require.Contains(t, page, "↻ From state 3 the behaviour goes round a loop forever: steps 4–5, the last of which (Back2) leads back to state 3.")
	require.Contains(t, page, `<tr class="loop back last"><td class="n">5</td><td class="step">Back to state 3: Back2</td><td class="same">0</td><td class="changed">2</td></tr>`,
		"the closing step is the last row, with the state it returns to")
	require.Equal(t, 1, strings.Count(page, `<span class="mark">`), "one loop-start marker")
	require.NotContains(t, page, "unchanged columns", "y is constant but in focus: nothing to collapse")

	b.Reset()
	require.NoError(t, modelcheck.WriteTraceHTMLWith(&b, modelcheck.Model[point](g), res.Trace, modelcheck.HTMLTrace{Title: "t", LoopStart: 3}))
	require.Contains(t, b.String(), "From state 4 on nothing changes: the behaviour stutters there forever (step 5, Stuttering).")
	require.Contains(t, b.String(), `<td class="n">5</td><td class="step">Stuttering</td>`)

	b.Reset()
	require.NoError(t, modelcheck.WriteTraceHTMLWith(&b, modelcheck.Model[point](g), res.Trace, modelcheck.HTMLTrace{Title: "t", LoopStart: -1}))
	page = b.String()
	require.Contains(t, page, "show the 1 unchanged columns")
	require.Equal(t, 1+4, strings.Count(page, "data-const>"), "y's header and its four cells")
	require.NotContains(t, page, "repeat forever")
	require.NotContains(t, page, `id="definition"`)
}
