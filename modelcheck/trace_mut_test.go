package modelcheck_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/drainproof/drainproof/modelcheck"
	"github.com/stretchr/testify/require"
)

// WriteLasso ends a lasso with TLC's closing line, numbered after the
// last step: "Back to state N: <label>" with N the loop's first step
// counted from 1, "Back to state N" from WriteTrace, "Stuttering" for an
// empty label.
func TestWriteLassoClosingLine(t *testing.T) {
	g := &grid{size: 8, bad: func(x, y int) bool { return x == 3 && y == 0 }}
	res := check(t, g, modelcheck.Options{})
	require.Len(t, res.Trace, 4)
	last := func(f func(*bytes.Buffer) error) string {
		var b bytes.Buffer
		require.NoError(t, f(&b))
		lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
		return strings.TrimSpace(lines[len(lines)-1])
	}
	m := modelcheck.Model[point](g)
	require.Equal(t, "5  Back to state 3: Back2", last(func(b *bytes.Buffer) error { return modelcheck.WriteLasso(b, m, res.Trace, 2, "Back2") }))
	require.Equal(t, "5  Back to state 1: Back0", last(func(b *bytes.Buffer) error { return modelcheck.WriteLasso(b, m, res.Trace, 0, "Back0") }))
	require.Equal(t, "5  Stuttering", last(func(b *bytes.Buffer) error { return modelcheck.WriteLasso(b, m, res.Trace, 2, "") }))
	require.Equal(t, "5  Back to state 3", last(func(b *bytes.Buffer) error { return modelcheck.WriteTrace(b, m, res.Trace, 2) }))
}
