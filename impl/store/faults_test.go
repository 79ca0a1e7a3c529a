package store_test

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/impl/store"
)

// TestEveryFaultIsReportedAndReleased is the data path's error contract
// (TiCDC PR #4366's batch discipline) at the stores themselves: for
// each store and each fault point, the failure reaches the caller as the
// error injected, a failed write writes nothing, and the batch or
// iterator it opened is released; the store then works as before.
// (storetest holds its fault switches to the same contract.)
func TestEveryFaultIsReportedAndReleased(t *testing.T) {
	boom := errors.New("boom")
	for _, f := range store.Faults() {
		for _, kind := range []string{"memory", "pebble"} {
			t.Run(f.String()+"/"+kind, func(t *testing.T) {
				var armed atomic.Bool
				inject := store.WithFaultInjector(func(at store.Fault) error {
					if at == f && armed.CompareAndSwap(true, false) {
						return boom
					}
					return nil
				})
				var s store.DataStore = store.NewMemEventStore(inject)
				if kind == "pebble" {
					p, err := store.NewPebbleEventStore("", inject)
					require.NoError(t, err)
					s = p
				}
				defer s.Close()
				require.True(t, s.RegisterDispatcher("d", store.Subscription{Table: 1}, store.NotifierFunc(func() {})))
				require.NoError(t, s.WriteEvents(1, []store.Event{{CommitTs: 1, Key: []byte("a")}, {CommitTs: 2, Key: []byte("b")}}))
				read := func() ([]string, error) {
					var out []string
					err := store.ReadEvents(s, "d", 0, math.MaxUint64, func(e store.Event) bool {
						out = append(out, e.String())
						return true
					})
					return out, err
				}
				armed.Store(true)
				var err error
				switch f {
				case store.FaultBatchSet, store.FaultBatchCommit:
					err = s.WriteEvents(1, []store.Event{{CommitTs: 3, Key: []byte("c")}, {CommitTs: 4, Key: []byte("d")}})
				default:
					_, err = read()
				}
				require.ErrorIs(t, err, boom, "the fault at %s is the caller's error", f)
				require.Equal(t, store.Resources{Subscriptions: 1}, s.Resources(), "after a failed %s", f)
				got, err := read()
				require.NoError(t, err)
				require.Equal(t, []string{"ts=1 a=", "ts=2 b="}, got, "a failed write writes nothing")
				require.NoError(t, s.Close())
			})
		}
	}
}

// TestFaultPointsAreNamedAndNoneIsZero: each fault point prints its name,
// and the zero Fault is none of them, so an unset Fault fails no step.
func TestFaultPointsAreNamedAndNoneIsZero(t *testing.T) {
	var names []string
	for _, f := range store.Faults() {
		require.NotZero(t, f)
		names = append(names, f.String())
	}
	require.Equal(t, []string{"BatchSet", "BatchCommit", "IterOpen", "IterNext"}, names)
	require.Equal(t, "Fault(0)", store.Fault(0).String())
}

// TestTableRangesEndingInFF: a table's events are one key range whatever
// its ID, also where the range's end must carry over 0xff bytes (table
// -1's key prefix ends in seven of them, 255 and 511 in one, MaxInt64's
// is all 0xff after the 'e'): a read of the whole table sees all its
// events and none of another table's.
func TestTableRangesEndingInFF(t *testing.T) {
	for _, kind := range []string{"memory", "pebble"} {
		t.Run(kind, func(t *testing.T) {
			var s store.DataStore = store.NewMemEventStore()
			if kind == "pebble" {
				p, err := store.NewPebbleEventStore("")
				require.NoError(t, err)
				s = p
			}
			defer s.Close()
			tables := []store.TableID{math.MinInt64, -2, -1, 0, 255, 256, 511, 512, math.MaxInt64}
			for _, table := range tables {
				key := []byte{byte(table)}
				require.NoError(t, s.WriteEvents(table, []store.Event{{CommitTs: 1, Key: key}, {CommitTs: math.MaxUint64, Key: key}}))
				require.True(t, s.RegisterDispatcher(store.DispatcherID(fmt.Sprint(table)), store.Subscription{Table: table}, store.NotifierFunc(func() {})))
			}
			for _, table := range tables {
				var got []uint64
				require.NoError(t, store.ReadEvents(s, store.DispatcherID(fmt.Sprint(table)), 0, math.MaxUint64, func(e store.Event) bool {
					got = append(got, e.CommitTs)
					return true
				}))
				require.Equal(t, []uint64{1, math.MaxUint64}, got, "table %d", table)
			}
			require.NoError(t, s.Close())
		})
	}
}
