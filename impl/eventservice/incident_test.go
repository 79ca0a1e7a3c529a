package eventservice

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/store/storetest"
)

// TiCDC #5710 (a reset failure whose error was dropped pinned the
// checkpoint): a dispatcher whose heartbeats carry an epoch the broker
// does not have (here after a stale RESET, a no-op by R6) gets no
// checkpoint progress, and is not kept for ever: its heartbeats are not
// liveness, so the inactivity cleanup removes it after the timeout and
// its next heartbeat is answered Removed (it re-registers). A cleanup
// that took any heartbeat as liveness would keep the pinned dispatcher.
func TestStaleEpochDispatcherIsCleanedUp(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.InactivityTimeout = time.Minute })
	require.NoError(t, h.do(reg("d1", 1)))
	require.NoError(t, h.do(reset("c1", "d1", 2, 100)))
	require.NoError(t, h.do(reset("c1", "d1", 1, 500)), "R6: a stale RESET is a no-op")
	hb := func(cp uint64) HeartbeatResponse {
		resp, err := h.svc.Heartbeat(context.Background(), Heartbeat{Cluster: "c1", Progress: []Progress{{Dispatcher: "d1", Epoch: 1, CheckpointTs: cp}}})
		require.NoError(t, err)
		return resp
	}
	for i := range 3 {
		h.advance(30 * time.Second)
		require.Empty(t, hb(600+uint64(i)).Removed, "still registered before the cleanup")
	}
	b, _ := h.broker("c1")
	require.Equal(t, uint64(100), b.Dispatchers[0].CheckpointTs, "a heartbeat of another epoch does not move the checkpoint")
	n, err := h.svc.Cleanup(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, n, "silent at its epoch for 90 s > the timeout: removed")
	require.Equal(t, []DispatcherID{"d1"}, hb(700).Removed, "the dispatcher learns it must re-register")
	require.Zero(t, h.count())
}

// TiCDC #6199/#6333 (a STOPPING node with a blocked store call never
// finished its drain before the shutdown deadline): a registration blocked
// in RegisterTable stays counted, so the drain waits for it (safety, R2);
// the shutdown cancels the service's context, which ends the blocked call,
// and the failure path rolls the count back (F-R1).
func TestBlockedRegisterTableHoldsTheDrain(t *testing.T) {
	ss := storetest.NewMemSchemaStore()
	es := storetest.NewMemEventStore()
	var stopping atomic.Bool
	svc, err := New(Config{
		NewStores: func(ClusterID) (store.EventStore, store.SchemaStore) { return es, ss },
		Stopping:  stopping.Load,
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wait := svc.Start(ctx)
	gate := ss.BlockRegisterTable()
	defer gate.Release() // unblock the loop if the test fails
	errc := make(chan error, 1)
	go func() { errc <- svc.Do(context.Background(), reg("d1", 1)) }()
	<-gate.Entered()

	stopping.Store(true)
	n, closed := svc.Sample()
	require.True(t, closed)
	require.Equal(t, int64(1), n, "R2: the blocked registration is counted: the drain waits")
	time.Sleep(10 * time.Millisecond)
	n, _ = svc.Sample()
	require.Equal(t, int64(1), n, "it stays counted while the call is blocked")

	cancel() // the shutdown deadline
	select {
	case err := <-errc:
		require.Error(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the blocked RegisterTable did not end when the service's context was cancelled")
	}
	_ = wait()
	n, _ = svc.Sample()
	require.Zero(t, n, "F-R1: the cancelled call rolled the count back")
	require.Zero(t, ss.TotalRefs())
	require.False(t, es.Subscribed("d1"))
}
