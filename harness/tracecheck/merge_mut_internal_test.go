package tracecheck

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A process's trace of at most smallTrace bytes is read into memory whole
// when the run's budget still holds it, and the budget is reduced by its
// size; one byte more than either bound and it is read line by line,
// leaving the budget as it was. A trace exactly the size of either
// bound is held.
func TestSmallTraceHeldWithinTheBudget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "T.1.ndjson")
	text := `{"drainproof_trace":2,"model":{},"process":"T.1"}` + "\n" + `{"p":"T.1","c":1,"action":"NodeDrain"}` + "\n"
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	size := len(text)
	for _, c := range []struct {
		small, budget int
		held          bool
	}{
		{size, size, true},
		{size + 1, size + 1, true},
		{size - 1, size, false},
		{size, size - 1, false},
		{1 << 20, 1 << 20, true},
	} {
		restore := SetSmallTrace(c.small)
		budget := c.budget
		pt, h, err := openProc(path, 0, &budget)
		restore()
		require.NoError(t, err)
		require.Equal(t, "T.1", h.Process)
		if c.held {
			require.Equal(t, []byte(text), pt.data, "smallTrace %d, budget %d: held in memory", c.small, c.budget)
			require.Nil(t, pt.f, "a trace held in memory keeps no file open")
			require.Equal(t, c.budget-size, budget, "the budget is reduced by the trace's size")
		} else {
			require.Nil(t, pt.data, "smallTrace %d, budget %d: read line by line", c.small, c.budget)
			require.NotNil(t, pt.f)
			require.Equal(t, c.budget, budget, "a trace read line by line takes none of the budget")
		}
		ok, err := pt.next()
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, uint64(1), pt.head.clock, "the line after the header is read either way")
		pt.close()
	}
}
