package drainmodel_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/drainmodel"
)

func cfg(name string) string { return filepath.Join("..", "..", "tla", name) }

// The correct model violates nothing anywhere; a bug model's row names
// what it breaks beyond the one property its cfg lists.
func TestViolations(t *testing.T) {
	ctx := context.Background()
	v, err := drainmodel.Violations(ctx, cfg("MCDrainRegistrationBrokers.cfg"), 2)
	require.NoError(t, err)
	require.Empty(t, v)
	v, err = drainmodel.Violations(ctx, cfg("MCDrainRegistrationBugDoubleDecrement.cfg"), 2)
	require.NoError(t, err)
	require.Contains(t, v, "TypeOK", "a negative count is a type error")
	require.Contains(t, v, "CountAccuracy")
	v, err = drainmodel.Violations(ctx, cfg("MCDrainRegistrationBugNoReReport.cfg"), 2)
	require.NoError(t, err)
	require.Equal(t, []string{"DrainCompletes"}, v)
	// A liveness bug that also breaks an invariant: the liveness run must
	// not stop at the invariant.
	v, err = drainmodel.Violations(ctx, cfg("MCDrainRegistrationBugDoubleIncrementLive.cfg"), 2)
	require.NoError(t, err)
	require.Equal(t, []string{"CountAccuracy", "DrainCompletes"}, v)
}

// Coverage finds the actions that change no state: BrokerInactivityCleanup
// exists only under DoubleDecrement, the LogCoordinator's actions only
// under the logcoord transport.
func TestIdleActions(t *testing.T) {
	ctx := context.Background()
	idle, err := drainmodel.IdleActions(ctx, []string{cfg("MCDrainRegistrationLiveHeartbeat.cfg")}, nil)
	require.NoError(t, err)
	require.Contains(t, idle, "BrokerInactivityCleanup")
	require.Contains(t, idle, "LogCoordExpire")
	require.NotContains(t, idle, "BrokerAdmit")
	idle, err = drainmodel.IdleActions(ctx, []string{cfg("MCDrainRegistrationLiveHeartbeat.cfg"), cfg("MCDrainRegistrationLiveLogCoord.cfg")},
		map[string]string{"BrokerInactivityCleanup": "bug only"})
	require.NoError(t, err)
	require.NotContains(t, idle, "LogCoordExpire")
	require.NotContains(t, idle, "BrokerInactivityCleanup")
}
