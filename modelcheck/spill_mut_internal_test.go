package modelcheck

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The least fingerprint, minFP, is a state's like any other: a set that
// holds it still holds it once the set has moved to disk, and finds it
// there when it is met again.
func TestSpillKeepsTheLeastFingerprint(t *testing.T) {
	s := newSpillingSet(t)
	fps := []uint64{minFP, minFP + 1, 1 << 40, ^uint64(0)}
	for _, fp := range fps {
		_, isNew, err := s.insert(fp, 0, noParent, 0)
		require.NoError(t, err)
		require.True(t, isNew)
	}
	require.NoError(t, s.spillOut())
	require.Len(t, s.spill.run, len(fps), "every fingerprint is in the run")
	for _, fp := range fps {
		require.True(t, s.contains(fp, 0), "fingerprint %d", fp)
		_, isNew, err := s.insert(fp, 0, noParent, 0)
		require.NoError(t, err)
		require.False(t, isNew, "fingerprint %d met again", fp)
	}
}
