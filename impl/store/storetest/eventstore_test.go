package storetest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/impl/retry"
	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/store/storetest"
)

// TestMain switches on the bug named by DRAINPROOF_BUG (build tag bugs)
// and checks for leaked goroutines (Pebble's included).
func TestMain(m *testing.M) {
	bugs.SetupTest("storetest")
	goleak.VerifyTestMain(m)
}

var (
	_ store.DataStore   = (*storetest.EventStore)(nil)
	_ store.SchemaStore = (*storetest.MemSchemaStore)(nil)
)

func TestEventStoreSubscribeNotifyUnregister(t *testing.T) {
	es := storetest.NewMemEventStore()
	calls := 0
	require.True(t, es.RegisterDispatcher("d1", store.Subscription{Table: 1}, store.NotifierFunc(func() { calls++ })))
	require.True(t, es.Subscribed("d1"))
	require.True(t, es.Notify("d1"))
	require.Equal(t, 1, calls)
	es.UnregisterDispatcher("d1")
	require.False(t, es.Subscribed("d1"))
	require.False(t, es.Notify("d1"), "no notifier after unregister") // R4
	require.Equal(t, 1, es.Unregisters())
	require.Empty(t, es.Subscribers())
}

func TestEventStoreRefuseAndClose(t *testing.T) {
	es := storetest.NewMemEventStore()
	es.Refuse(func(_ store.DispatcherID, s store.Subscription) bool { return s.OnlyReuse })
	require.False(t, es.RegisterDispatcher("probe", store.Subscription{OnlyReuse: true}, store.NotifierFunc(func() {})))
	require.True(t, es.RegisterDispatcher("local", store.Subscription{}, store.NotifierFunc(func() {})))
	es.Close()
	require.False(t, es.RegisterDispatcher("late", store.Subscription{}, store.NotifierFunc(func() {})))
	require.Equal(t, []store.DispatcherID{"local"}, es.Subscribers())
	require.Equal(t, 1, es.Registers())
}

func TestEventStoreBlockUnregister(t *testing.T) {
	es := storetest.NewMemEventStore()
	es.RegisterDispatcher("d1", store.Subscription{}, store.NotifierFunc(func() {}))
	g := es.BlockUnregister()
	done := make(chan struct{})
	go func() { es.UnregisterDispatcher("d1"); close(done) }()
	<-g.Entered()
	require.True(t, es.Subscribed("d1"), "held unregister has not detached yet")
	g.Release()
	<-done
	require.False(t, es.Subscribed("d1"))
}

func TestMemSchemaStoreFaults(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	tests := []struct {
		name    string
		install func(*storetest.MemSchemaStore)
		want    []error // results of three RegisterTable(7) calls
	}{
		{"none", func(*storetest.MemSchemaStore) {}, []error{nil, nil, nil}},
		{"once", func(s *storetest.MemSchemaStore) { s.FailOnce(boom) }, []error{boom, nil, nil}},
		{"always", func(s *storetest.MemSchemaStore) { s.FailAlways(nil) }, []error{storetest.ErrInjected, storetest.ErrInjected, storetest.ErrInjected}},
		{"predicate", func(s *storetest.MemSchemaStore) {
			s.FailIf(func(_ store.TableID, ts uint64) bool { return ts == 2 }, boom)
		}, []error{nil, boom, nil}},
		{"closed", func(s *storetest.MemSchemaStore) { s.Close() }, []error{store.ErrClosed, store.ErrClosed, store.ErrClosed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := storetest.NewMemSchemaStore()
			tt.install(s)
			okCount := 0
			for i, want := range tt.want {
				err := s.RegisterTable(ctx, 7, uint64(i+1))
				require.ErrorIs(t, err, want)
				if want == nil {
					require.NoError(t, err)
					okCount++
				}
			}
			// R9: a failed RegisterTable takes no reference.
			require.Equal(t, okCount, s.Refs(7))
			require.Equal(t, okCount, s.Registers())
			for range okCount {
				s.UnregisterTable(7)
			}
			require.Zero(t, s.TotalRefs())
		})
	}
}

func TestMemSchemaStoreBlockHonoursContext(t *testing.T) {
	s := storetest.NewMemSchemaStore()
	g := s.BlockRegisterTable()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() { errc <- s.RegisterTable(ctx, 1, 1) }()
	<-g.Entered()
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)
	require.Zero(t, s.Refs(1))

	go func() { errc <- s.RegisterTable(context.Background(), 1, 1) }()
	g.Release()
	require.NoError(t, <-errc)
	s.Unblock()
	require.NoError(t, s.RegisterTable(context.Background(), 1, 2))
	require.Equal(t, 2, s.Refs(1))
	s.Heal()
}

// TestMemSchemaStoreReleaseWithoutReference: a release takes one
// reference; releasing a table that holds no reference takes nothing (the count never goes below zero, so R9's
// balance is not hidden by a later RegisterTable) and is visible only as
// an Unregisters count above Registers.
func TestMemSchemaStoreReleaseWithoutReference(t *testing.T) {
	s := storetest.NewMemSchemaStore()
	s.UnregisterTable(7)
	require.Zero(t, s.Refs(7))
	require.NoError(t, s.RegisterTable(context.Background(), 7, 1))
	require.Equal(t, 1, s.Refs(7), "an earlier release without a reference cancelled this one")
	require.NoError(t, s.RegisterTable(context.Background(), 7, 2))
	s.UnregisterTable(7)
	require.Equal(t, 1, s.Refs(7), "one release takes one reference")
	s.UnregisterTable(7)
	require.Zero(t, s.TotalRefs())
	require.Equal(t, 2, s.Registers())
	require.Equal(t, 3, s.Unregisters())
}

// TestInjectFaultWithoutAnError: a fault injected without an error fails
// its step with ErrInjectedFault, once.
func TestInjectFaultWithoutAnError(t *testing.T) {
	s := storetest.NewMemEventStore()
	defer s.Close()
	s.InjectFault(store.FaultBatchCommit, nil)
	require.ErrorIs(t, s.WriteEvents(1, []store.Event{{CommitTs: 1}}), storetest.ErrInjectedFault)
	require.NoError(t, s.WriteEvents(1, []store.Event{{CommitTs: 1}}))
}

// TestOpenPebbleEventStoreFailsWithTheOpen: when the store cannot be
// opened (its directory still locked by a store of the previous process,
// and one attempt allowed) the kit's open returns that failure and no
// store.
func TestOpenPebbleEventStoreFailsWithTheOpen(t *testing.T) {
	dir := t.TempDir()
	held, err := store.NewPebbleEventStore(dir)
	require.NoError(t, err)
	defer held.Close()
	s, err := storetest.OpenPebbleEventStore(context.Background(), dir, store.WithOpenRetry(retry.Policy{MaxAttempts: 1}))
	require.ErrorIs(t, err, retry.ErrAttemptsExhausted)
	require.Nil(t, s)
}
