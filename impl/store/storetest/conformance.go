package storetest

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/impl/store"
)

// run runs test against a fresh store from open and closes it afterwards,
// requiring a clean close.
func run(t *testing.T, open func(t *testing.T) store.DataStore, test func(t *testing.T, s store.DataStore)) {
	t.Helper()
	s := open(t)
	t.Cleanup(func() { _ = s.Close() }) // a failed test still releases the store
	test(t, s)
	require.NoError(t, s.Close())
}

// counter is a Notifier that counts its calls.
type counter struct{ n atomic.Int64 }

func (c *counter) Notify(uint64) { c.n.Add(1) }

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

// TestDataStore runs the conformance suite of the [store.DataStore]
// contract (commit order and ranges, resolved timestamps, notifications,
// snapshot iterators, unknown subscribers, concurrent writers and
// readers, close, and notifiers that read the store) against stores
// returned by open, one fresh, empty, open store per call. Run it on any
// event store, as testing/fstest.TestFS is run on any file system.
func TestDataStore(t *testing.T, open func(t *testing.T) store.DataStore) {
	t.Run("commit order and ranges", func(t *testing.T) {
		run(t, open, func(t *testing.T, s store.DataStore) {
			require.True(t, s.RegisterDispatcher("d1", store.Subscription{Table: 7}, new(counter)))
			require.True(t, s.RegisterDispatcher("late", store.Subscription{Table: 7, StartTs: 20}, new(counter)))
			// batches out of order, events unsorted within a batch
			require.NoError(t, s.WriteEvents(7, []store.Event{ev(30, "b", "x"), ev(10, "a", "1"), ev(30, "a", "y")}))
			require.NoError(t, s.WriteEvents(7, []store.Event{ev(20, "k", "2")}))
			require.NoError(t, s.WriteEvents(8, []store.Event{ev(15, "other", "table")}))
			require.NoError(t, s.WriteEvents(-3, []store.Event{ev(15, "negative", "table")}))
			all := []string{"ts=10 a=1", "ts=20 k=2", "ts=30 a=y", "ts=30 b=x"}
			require.Equal(t, all, read(t, s, "d1", 0, math.MaxUint64))
			require.Equal(t, all[1:], read(t, s, "d1", 10, 30), "after is exclusive, upTo inclusive")
			require.Equal(t, all[:2], read(t, s, "d1", 0, 29))
			require.Empty(t, read(t, s, "d1", 30, 30))
			require.Empty(t, read(t, s, "d1", 40, 10))
			require.Empty(t, read(t, s, "d1", math.MaxUint64, math.MaxUint64), "nothing is after the largest timestamp")
			require.Equal(t, all[2:], read(t, s, "late", 0, math.MaxUint64), "raised to the subscription's StartTs")
			// a rewrite of (ts, key) replaces the value
			require.NoError(t, s.WriteEvents(7, []store.Event{ev(30, "a", "z")}))
			require.Equal(t, []string{"ts=30 a=z", "ts=30 b=x"}, read(t, s, "d1", 20, 30))
			require.True(t, s.RegisterDispatcher("neg", store.Subscription{Table: -3}, new(counter)))
			require.Equal(t, []string{"ts=15 negative=table"}, read(t, s, "neg", 0, math.MaxUint64))
			// stop early
			n := 0
			require.NoError(t, store.ReadEvents(s, "d1", 0, 100, func(store.Event) bool { n++; return n < 2 }))
			require.Equal(t, 2, n)
			for _, id := range []store.DispatcherID{"d1", "late", "neg"} {
				s.UnregisterDispatcher(id)
			}
			require.Equal(t, store.Resources{}, s.Resources())
		})
	})

	t.Run("resolved ts and behind-resolved writes", func(t *testing.T) {
		run(t, open, func(t *testing.T, s store.DataStore) {
			require.Zero(t, s.ResolvedTs(7))
			require.NoError(t, s.AdvanceResolvedTs(7, 50))
			require.NoError(t, s.AdvanceResolvedTs(7, 40), "an older resolved ts is ignored")
			require.EqualValues(t, 50, s.ResolvedTs(7))
			require.Zero(t, s.ResolvedTs(8), "per table")
			err := s.WriteEvents(7, []store.Event{ev(60, "ok", ""), ev(50, "late", "")})
			require.ErrorIs(t, err, store.ErrBehindResolved)
			require.True(t, s.RegisterDispatcher("d1", store.Subscription{Table: 7}, new(counter)))
			require.Empty(t, read(t, s, "d1", 0, math.MaxUint64), "a refused batch writes nothing")
			require.NoError(t, s.WriteEvents(7, []store.Event{ev(51, "ok", "")}))
			require.Equal(t, []string{"ts=51 ok="}, read(t, s, "d1", 0, math.MaxUint64))
			s.UnregisterDispatcher("d1")
		})
	})

	t.Run("notifications", func(t *testing.T) {
		run(t, open, func(t *testing.T, s store.DataStore) {
			var a, b, other counter
			require.True(t, s.RegisterDispatcher("a", store.Subscription{Table: 1}, &a))
			require.True(t, s.RegisterDispatcher("b", store.Subscription{Table: 1}, &b))
			require.True(t, s.RegisterDispatcher("o", store.Subscription{Table: 2}, &other))
			require.NoError(t, s.WriteEvents(1, []store.Event{ev(5, "k", "v")}))
			require.NoError(t, s.AdvanceResolvedTs(1, 10))
			require.NoError(t, s.AdvanceResolvedTs(1, 10)) // not newer: no call
			require.EqualValues(t, 2, a.n.Load())
			require.EqualValues(t, 2, b.n.Load())
			require.Zero(t, other.n.Load(), "another table's writes do not notify")
			require.Error(t, s.WriteEvents(1, []store.Event{ev(3, "k", "v")}))
			require.EqualValues(t, 2, a.n.Load(), "a refused write does not notify")
			s.UnregisterDispatcher("a")
			require.NoError(t, s.WriteEvents(1, []store.Event{ev(11, "k", "v")}))
			require.EqualValues(t, 2, a.n.Load(), "no notification after unregister (R4)")
			require.EqualValues(t, 3, b.n.Load())
			s.UnregisterDispatcher("b")
			s.UnregisterDispatcher("o")
		})
	})

	t.Run("iterator is a snapshot and owns its data", func(t *testing.T) {
		run(t, open, func(t *testing.T, s store.DataStore) {
			require.True(t, s.RegisterDispatcher("d", store.Subscription{Table: 1}, new(counter)))
			in := ev(1, "k", "v1")
			require.NoError(t, s.WriteEvents(1, []store.Event{in}))
			in.Value[0] = 'X' // the store copied it
			it, err := s.Iter("d", 0, math.MaxUint64)
			require.NoError(t, err)
			require.EqualValues(t, 1, s.Resources().Iterators)
			require.NoError(t, s.WriteEvents(1, []store.Event{ev(2, "k", "v2")}))
			require.True(t, it.Next())
			got := it.Event()
			require.Equal(t, "ts=1 k=v1", got.String())
			require.False(t, it.Next(), "written after the iterator opened")
			require.NoError(t, it.Err())
			require.NoError(t, it.Close())
			require.NoError(t, it.Close(), "a second Close is a no-op")
			got.Value[0] = 'Y'
			require.Equal(t, []string{"ts=1 k=v1", "ts=2 k=v2"}, read(t, s, "d", 0, math.MaxUint64))
			require.EqualValues(t, 0, s.Resources().Iterators)
			s.UnregisterDispatcher("d")
		})
	})

	t.Run("not subscribed", func(t *testing.T) {
		run(t, open, func(t *testing.T, s store.DataStore) {
			_, err := s.Iter("nobody", 0, 10)
			require.ErrorIs(t, err, store.ErrNotSubscribed)
			require.ErrorIs(t, store.ReadEvents(s, "nobody", 0, 10, func(store.Event) bool { return true }), store.ErrNotSubscribed)
		})
	})

	t.Run("concurrent writers and readers", func(t *testing.T) {
		run(t, open, func(t *testing.T, s store.DataStore) {
			const tables, perTable = 3, 200
			for tb := range tables {
				require.True(t, s.RegisterDispatcher(store.DispatcherID(fmt.Sprint("d", tb)), store.Subscription{Table: store.TableID(tb)}, new(counter)))
			}
			var wg sync.WaitGroup
			for tb := range tables {
				wg.Add(2)
				go func() { // the table's puller
					defer wg.Done()
					for ts := uint64(1); ts <= perTable; ts++ {
						if err := s.WriteEvents(store.TableID(tb), []store.Event{ev(ts, "k", "v")}); err != nil {
							t.Error(err)
							return
						}
						if err := s.AdvanceResolvedTs(store.TableID(tb), ts); err != nil {
							t.Error(err)
							return
						}
					}
				}()
				go func() { // its subscriber, reading up to the resolved ts
					defer wg.Done()
					id := store.DispatcherID(fmt.Sprint("d", tb))
					var pos uint64
					for pos < perTable {
						upTo := s.ResolvedTs(store.TableID(tb))
						err := store.ReadEvents(s, id, pos, upTo, func(e store.Event) bool {
							if e.CommitTs != pos+1 {
								t.Errorf("table %d: read %d after %d", tb, e.CommitTs, pos)
							}
							pos = e.CommitTs
							return true
						})
						if err != nil || pos != upTo {
							t.Errorf("table %d: read up to %d of %d: %v", tb, pos, upTo, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			for tb := range tables {
				s.UnregisterDispatcher(store.DispatcherID(fmt.Sprint("d", tb)))
			}
			require.Equal(t, store.Resources{}, s.Resources())
		})
	})
	t.Run("close", func(t *testing.T) { testClose(t, open(t)) })
	t.Run("notifier may read", func(t *testing.T) { run(t, open, testNotifierMayRead) })
}

// testClose: a closed store refuses registrations and data calls, and
// closes an iterator left open and says so.
func testClose(t *testing.T, s store.DataStore) {
	t.Cleanup(func() { _ = s.Close() })
	require.True(t, s.RegisterDispatcher("d", store.Subscription{Table: 1}, new(counter)))
	require.NoError(t, s.WriteEvents(1, []store.Event{ev(1, "k", "v")}))
	it, err := s.Iter("d", 0, 10)
	require.NoError(t, err)
	require.ErrorIs(t, s.Close(), store.ErrLeakedIterators)
	require.EqualValues(t, 0, s.Resources().Iterators)
	require.False(t, it.Next())
	require.NoError(t, it.Close())
	require.NoError(t, s.Close(), "closing again is a no-op")
	require.False(t, s.RegisterDispatcher("late", store.Subscription{Table: 1}, new(counter)))
	require.ErrorIs(t, s.WriteEvents(1, []store.Event{ev(2, "k", "v")}), store.ErrClosed)
	require.ErrorIs(t, s.AdvanceResolvedTs(1, 5), store.ErrClosed)
	_, err = s.Iter("d", 0, 10)
	require.ErrorIs(t, err, store.ErrClosed)
}

// reader is a Notifier that reads its subscription from inside Notify,
// as a broker's scan may.
type reader struct {
	s    store.DataStore
	id   store.DispatcherID
	seen []string
	err  error
}

func (r *reader) Notify(uint64) {
	r.seen = nil
	r.err = store.ReadEvents(r.s, r.id, 0, math.MaxUint64, func(e store.Event) bool {
		r.seen = append(r.seen, e.String())
		return true
	})
}

// testNotifierMayRead: notifications come with no store lock held, so a
// notifier reads the store (it sees the write it is notified of).
func testNotifierMayRead(t *testing.T, s store.DataStore) {
	r := &reader{s: s, id: "d"}
	require.True(t, s.RegisterDispatcher("d", store.Subscription{Table: 1}, r))
	require.NoError(t, s.WriteEvents(1, []store.Event{ev(1, "k", "v")}))
	require.NoError(t, r.err)
	require.Equal(t, []string{"ts=1 k=v"}, r.seen)
	require.NoError(t, s.AdvanceResolvedTs(1, 5))
	require.NoError(t, r.err)
	s.UnregisterDispatcher("d")
}
