package tracecheck_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/internal/tracecheck"
	"github.com/drainproof/drainproof/spec"
)

// traceOf generates a seeded walk of cfg's model and writes it as a trace.
func traceOf(t testing.TB, cfg spec.Config, seed uint64, steps int) ([]tracecheck.Line, *spec.Model) {
	t.Helper()
	m, err := spec.New(cfg)
	require.NoError(t, err)
	lines, err := tracecheck.Generate(m, seed, steps)
	require.NoError(t, err)
	return lines, m
}

func encode(t testing.TB, cfg spec.Config, lines []tracecheck.Line) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, tracecheck.Write(&buf, tracecheck.HeaderFor(cfg, "test"), lines))
	return buf.Bytes()
}

func check(t testing.TB, data []byte) tracecheck.Result {
	t.Helper()
	res, err := tracecheck.Check(bytes.NewReader(data), "t.ndjson", nil, tracecheck.Options{})
	require.NoError(t, err)
	return res
}

func configs() map[string]spec.Config {
	hb := tracecheck.TraceConfig(spec.DefaultConfig())
	lc := hb
	lc.Transport = spec.TransportLogCoord
	three := hb
	three.Dispatchers, three.TableTriggers = []string{"d1", "d2", "d3"}, []string{"d3"}
	return map[string]spec.Config{"heartbeat": hb, "logcoord": lc, "three": three}
}

func TestGeneratedTracesAccepted(t *testing.T) {
	for name, cfg := range configs() {
		t.Run(name, func(t *testing.T) {
			for seed := uint64(1); seed <= 40; seed++ {
				lines, _ := traceOf(t, cfg, seed, 300)
				res := check(t, encode(t, cfg, lines))
				require.Equal(t, tracecheck.OK, res.Verdict, "seed %d: %+v", seed, res)
				require.Equal(t, len(lines), res.Lines)
			}
		})
	}
}
