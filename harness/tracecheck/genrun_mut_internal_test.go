package tracecheck

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The dependency WriteRun gives an upgrade restart on the coordinator's
// last line names that line; a coordinator that has written no line yet
// (clock 0, which no line has) gives none. WriteRun's walks (Generate's,
// with crash restarts) never reach an upgrade restart (it needs a
// completed drain), so this is where the edge's stamp is stated.
func TestStampOfNamesTheProcessesLastLine(t *testing.T) {
	require.Equal(t, `{"p":"coord","c":7}`, stampOf("coord", 7))
	require.Equal(t, `{"p":"coord","c":1}`, stampOf("coord", 1))
	require.Empty(t, stampOf("coord", 0))
}
