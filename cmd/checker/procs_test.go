package main

import (
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// A search of one worker runs on one processor, and the setting is given
// back after it; a search of as many workers as processors, or a
// GOMAXPROCS the user set, is left alone.
func TestSearchProcsGivesAWorkerOneProcessor(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set in the environment")
	}
	prev := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(prev)

	restore := searchProcs(1)
	require.Equal(t, 1, runtime.GOMAXPROCS(0))
	restore()
	require.Equal(t, 2, runtime.GOMAXPROCS(0))

	for _, w := range []int{0, 2, 4} {
		restore = searchProcs(w)
		require.Equal(t, 2, runtime.GOMAXPROCS(0), "workers %d", w)
		restore()
	}

	t.Setenv("GOMAXPROCS", "2")
	restore = searchProcs(1)
	require.Equal(t, 2, runtime.GOMAXPROCS(0), "the user's GOMAXPROCS wins")
	restore()
}
