package store

import (
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// TestPebbleReadFailuresEndTheIteration: a read that fails under an
// iterator ends it with that error, reported once, and no event: a data
// block that cannot be read (in Next) and a value that cannot be read
// (Pebble reads a value kept in a blob file only when it is asked for
// it, in event's ValueAndErr). The store's own Pebble keeps values in
// its tables; this one separates them into blob files so that the value
// read can fail.
func TestPebbleReadFailuresEndTheIteration(t *testing.T) {
	boom := errors.New("boom")
	for _, suffix := range []string{".sst", ".blob"} {
		t.Run(suffix, func(t *testing.T) {
			var armed atomic.Bool
			mem := vfs.NewMem()
			fs := errorfs.Wrap(mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
				if armed.Load() && op.Kind == errorfs.OpFileReadAt && strings.HasSuffix(op.Path, suffix) {
					return boom
				}
				return nil
			}))
			opts := &pebble.Options{FS: fs, Logger: quietLogger{}, FormatMajorVersion: pebble.FormatNewest,
				CacheSize: 1} // no block cache: every read goes to the files
			opts.Experimental.ValueSeparationPolicy = func() pebble.ValueSeparationPolicy {
				return pebble.ValueSeparationPolicy{Enabled: true, MinimumSize: 1, MaxBlobReferenceDepth: 10}
			}
			db, err := pebble.Open("db", opts)
			require.NoError(t, err)
			s := &PebbleEventStore{engine: newEngine(&pebbleData{db: db, dir: "db"}, nil)}
			defer func() { require.NoError(t, s.Close()) }()
			require.True(t, s.RegisterDispatcher("d", Subscription{Table: 1}, NotifierFunc(func() {})))
			value := []byte(strings.Repeat("v", 100))
			require.NoError(t, s.WriteEvents(1, []Event{{CommitTs: 1, Key: []byte("a"), Value: value},
				{CommitTs: 2, Key: []byte("b"), Value: value}}))
			require.NoError(t, db.Flush())
			names, err := mem.List("db")
			require.NoError(t, err)
			require.True(t, slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(n, suffix) }),
				"no %s file in %v", suffix, names)
			it, err := s.Iter("d", 0, 10)
			require.NoError(t, err)
			armed.Store(true)
			require.False(t, it.Next(), "the first read fails")
			require.ErrorIs(t, it.Err(), boom)
			require.Equal(t, 1, strings.Count(it.Err().Error(), "boom"), "reported once: %v", it.Err())
			require.Equal(t, Event{}, it.Event())
			require.False(t, it.Next(), "the iteration stays ended")
			_ = it.Close() // Pebble's Close returns the iterator's error again
			require.Zero(t, s.Resources().Iterators, "the iterator is released")
			armed.Store(false)
		})
	}
}
