package tracecheck_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/tracecheck"
)

// checkBoth checks data with the line cache and without it.
func checkBoth(t *testing.T, data []byte) (cached, parsed tracecheck.Result, cachedErr, parsedErr error) {
	t.Helper()
	cached, cachedErr = tracecheck.CheckBytes(data, "t.ndjson", nil, tracecheck.Options{})
	restore := tracecheck.SetLineCacheSize(0)
	defer restore()
	parsed, parsedErr = tracecheck.CheckBytes(data, "t.ndjson", nil, tracecheck.Options{})
	cached.Seconds, parsed.Seconds = 0, 0
	return cached, parsed, cachedErr, parsedErr
}

// TestLineCacheChangesNothing: a trace checked with repeated lines taken
// from the cache gets the result it gets with every line parsed: the
// same verdict, line, reason and candidates, or the same input error, on
// walks, on walks with a line dropped, swapped or repeated (rejected
// mostly), and with a malformed line after the repeats.
func TestLineCacheChangesNothing(t *testing.T) {
	verdicts := map[tracecheck.Verdict]int{}
	for name, cfg := range configs() {
		for seed := uint64(1); seed <= 12; seed++ {
			lines, _ := traceOf(t, cfg, seed, 300)
			k := int(seed*37) % (len(lines) - 2)
			dropped := append(clone(lines[:k]), lines[k+1:]...)
			swapped := clone(lines)
			swapped[k], swapped[k+1] = swapped[k+1], swapped[k]
			repeated := append(clone(lines[:k+1]), lines[k:]...)
			for _, tr := range [][]tracecheck.Line{lines, dropped, swapped, repeated} {
				c, p, cerr, perr := checkBoth(t, encode(t, cfg, tr))
				require.NoError(t, cerr)
				require.NoError(t, perr)
				require.Equal(t, p, c, "%s seed %d", name, seed)
				verdicts[c.Verdict]++
			}
			bad := append(encode(t, cfg, lines), []byte("{\"action\":\"NoSuchAction\"}\n")...)
			_, _, cerr, perr := checkBoth(t, bad)
			require.Error(t, cerr)
			require.Equal(t, perr.Error(), cerr.Error())
		}
	}
	require.Greater(t, verdicts[tracecheck.OK], 10, "%v", verdicts)
	require.Greater(t, verdicts[tracecheck.Rejected], 10, "%v", verdicts)
}
