package sim

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/impl/store"
)

func received(ts ...uint64) []delivery {
	out := make([]delivery, len(ts))
	for i, t := range ts {
		out[i] = delivery{ts: t}
	}
	return out
}

// TestCheckTable: the delivery check counts each kind of fault, and
// allows a re-delivery only after a crash, up to where the stream was.
func TestCheckTable(t *testing.T) {
	committed := []uint64{2, 4, 6, 8}
	resume := func(upTo uint64) delivery { return delivery{resume: true, dupUpTo: upTo} }
	tests := []struct {
		name string
		log  []delivery
		want Delivery
		lost []uint64
	}{
		{"clean", received(2, 4, 6, 8), Delivery{Committed: 4, Received: 4}, nil},
		{"gap", received(2, 6, 8), Delivery{Committed: 4, Received: 3, Lost: 1}, []uint64{4}},
		{"nothing", nil, Delivery{Committed: 4, Lost: 4}, committed},
		{"duplicate", received(2, 4, 4, 6, 8), Delivery{Committed: 4, Received: 5, Duplicated: 1}, nil},
		{"out of order", received(2, 6, 4, 8), Delivery{Committed: 4, Received: 4, OutOfOrder: 1}, nil},
		{"redelivered after a crash", append(append(received(2, 4, 6), resume(6)), received(4, 6, 8)...),
			Delivery{Committed: 4, Received: 6, Redelivered: 2}, nil},
		{"re-delivery past the crash's position", append(append(received(2, 4), resume(4)), received(4, 6, 8, 8)...),
			Delivery{Committed: 4, Received: 6, Redelivered: 1, Duplicated: 1}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, lost := checkTable(committed, tt.log)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.lost, lost)
		})
	}
}

// TestDrainedRestartLosesUnreadEvents: a restart authorised by a drain
// while a dispatcher is still registered with T cuts its stream; the
// check finds the events it had not read and names the drain. A crash
// instead re-delivers from the checkpoint and loses nothing.
func TestDrainedRestartLosesUnreadEvents(t *testing.T) {
	for _, st := range []StoreKind{StoreMemory, StorePebble} {
		for _, drained := range []bool{true, false} {
			c, err := NewCluster(ClusterConfig{Dispatchers: 2, Store: st})
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() }) // closing again is harmless
			_, isPebble := c.proc.es[0].DataStore.(*store.PebbleEventStore)
			require.Equal(t, st == StorePebble, isPebble)
			require.NoError(t, c.Register(0, false))
			require.NoError(t, c.BrokerRegisterTable())
			require.True(t, c.Registered(0))
			for range 3 {
				c.Commit(0)
			}
			require.NoError(t, c.Pull(0))
			n, err := c.Consume(0, 1) // reads ts 1 through T's store
			require.NoError(t, err)
			require.Equal(t, 1, n)
			if drained {
				_, err = c.RestartDrained(DrainRef{Number: 1, Epoch: 1, Step: 42})
			} else {
				_, err = c.Restart()
			}
			require.NoError(t, err)
			c.Commit(0)
			d, err := c.Check()
			require.NoError(t, err)
			require.NoError(t, c.Close())
			if drained {
				require.Equal(t, 2, d.Lost, "%s: ts 2 and 3 were not read", st)
				require.Equal(t, "table 1 commit ts 2, lost by drain 1 (epoch 1, restart at step 42)", d.FirstLost)
			} else {
				require.Zero(t, d.Lost, "%s: a crash resumes from the checkpoint", st)
				require.Equal(t, 1, d.Redelivered, "%s: ts 1 again", st)
			}
			require.Equal(t, 4, d.Committed)
		}
	}
}

// TestDataPathPerCluster: with two upstream clusters, each table's events
// go into the event store of its own cluster in T, where its dispatcher's
// subscription reads them, and never into the other cluster's; a drained
// restart loses the unread events of both clusters' dispatchers.
func TestDataPathPerCluster(t *testing.T) {
	for _, st := range []StoreKind{StoreMemory, StorePebble} {
		c, err := NewCluster(ClusterConfig{Dispatchers: 3, TableTriggers: 1, Clusters: 2, Store: st})
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		require.Len(t, c.proc.es, 2)
		for d := range 2 { // d0 is c1's, d1 is c2's
			require.Equal(t, d, c.ClusterOf(d))
			require.NoError(t, c.Register(d, false))
			require.NoError(t, c.BrokerRegisterTable())
			c.Commit(d)
			c.Commit(d)
		}
		require.NoError(t, c.Pull(0))
		for d := range 2 {
			own, other := c.proc.es[d], c.proc.es[1-d]
			require.True(t, own.Subscribed(Dispatcher(d)), "%s: d%d subscribed in its cluster's store", st, d+1)
			require.False(t, other.Subscribed(Dispatcher(d)), "%s: d%d subscribed in the other store", st, d+1)
			require.NotZero(t, own.ResolvedTs(table(d)), "%s: table %d pulled into its cluster's store", st, table(d))
			require.Zero(t, other.ResolvedTs(table(d)), "%s: table %d pulled into the other store", st, table(d))
			var got []uint64
			require.NoError(t, store.ReadEvents(own, Dispatcher(d), 0, own.ResolvedTs(table(d)),
				func(e store.Event) bool { got = append(got, e.CommitTs); return true }))
			require.Equal(t, c.data.tables[d].committed, got, "%s: table %d's events in its cluster's store", st, table(d))
			n, err := c.Consume(d, 1)
			require.NoError(t, err)
			require.Equal(t, 1, n)
		}
		_, err = c.RestartDrained(DrainRef{Number: 1, Epoch: 1, Step: 7})
		require.NoError(t, err)
		d, err := c.Check()
		require.NoError(t, err)
		require.NoError(t, c.Close())
		require.Equal(t, Delivery{Committed: 4, Received: 2, Lost: 2,
			FirstLost: "table 1 commit ts 2, lost by drain 1 (epoch 1, restart at step 7)"}, d, "%s", st)
	}
}

func TestParseStore(t *testing.T) {
	for _, s := range []string{"memory", "pebble"} {
		k, err := ParseStore(s)
		require.NoError(t, err)
		require.Equal(t, s, string(k))
	}
	_, err := ParseStore("disk")
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "memory or pebble"))
}
