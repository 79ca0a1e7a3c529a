package storetest_test

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/store/storetest"
)

// TestResourcesBackToZeroOnEveryErrorPath is TiCDC PR #4366's batch
// discipline: for each store and each fault point of the data path, a
// failure is injected, the operation reports it, and every open batch,
// iterator and subscription is released. Under the bug LeakBatchOnError (the write
// batch not closed when the write fails) the batch faults leave a batch
// open and this test fails.
func TestResourcesBackToZeroOnEveryErrorPath(t *testing.T) {
	boom := errors.New("boom")
	for _, f := range store.Faults() {
		t.Run(f.String(), func(t *testing.T) {
			forEachStore(t, func(t *testing.T, s *storetest.EventStore) {
				require.True(t, s.RegisterDispatcher("d", store.Subscription{Table: 1}, counter{}))
				require.NoError(t, s.WriteEvents(1, []store.Event{ev(1, "a", "1"), ev(2, "b", "2")}))
				s.InjectFault(f, boom)
				var err error
				switch f {
				case store.FaultBatchSet, store.FaultBatchCommit:
					err = s.WriteEvents(1, []store.Event{ev(3, "c", "3"), ev(4, "d", "4")})
				default:
					err = store.ReadEvents(s, "d", 0, math.MaxUint64, func(store.Event) bool { return true })
				}
				require.ErrorIs(t, err, boom, "the fault at %s is reported", f)
				require.Zero(t, s.Resources().Batches, "open batches after a failed %s", f)
				require.Zero(t, s.Resources().Iterators, "open iterators after a failed %s", f)
				// the failed write wrote nothing; the store still works
				require.Equal(t, []string{"ts=1 a=1", "ts=2 b=2"}, read(t, s, "d", 0, math.MaxUint64))
				s.UnregisterDispatcher("d")
				require.Equal(t, store.Resources{}, s.Resources())
			})
		})
	}
}

// forEachStore runs test against a fresh in-memory and a fresh Pebble
// store with fault switches, and closes each afterwards.
func forEachStore(t *testing.T, test func(t *testing.T, s *storetest.EventStore)) {
	open := map[string]func() (*storetest.EventStore, error){
		"memory": func() (*storetest.EventStore, error) { return storetest.NewMemEventStore(), nil },
		"pebble": func() (*storetest.EventStore, error) { return storetest.NewPebbleEventStore("") },
	}
	for _, name := range []string{"memory", "pebble"} {
		t.Run(name, func(t *testing.T) {
			s, err := open[name]()
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			test(t, s)
			require.NoError(t, s.Close())
		})
	}
}

type counter struct{}

func (counter) Notify(uint64) {}

func ev(ts uint64, k, v string) store.Event {
	return store.Event{CommitTs: ts, Key: []byte(k), Value: []byte(v)}
}

// read returns the events of id's subscription in (after, upTo].
func read(t *testing.T, s store.DataStore, id store.DispatcherID, after, upTo uint64) []string {
	t.Helper()
	var out []string
	require.NoError(t, store.ReadEvents(s, id, after, upTo, func(e store.Event) bool {
		out = append(out, e.String())
		return true
	}))
	return out
}
