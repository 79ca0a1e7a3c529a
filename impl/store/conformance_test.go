package store_test

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/store/storetest"
)

// TestConformance holds both event stores, and both with the test kit's
// switches around them, to the DataStore contract.
func TestConformance(t *testing.T) {
	stores := []struct {
		name string
		open func(t *testing.T) store.DataStore
	}{
		{"memory", func(*testing.T) store.DataStore { return store.NewMemEventStore() }},
		{"pebble", func(t *testing.T) store.DataStore {
			s, err := store.NewPebbleEventStore("")
			require.NoError(t, err)
			return s
		}},
		{"storetest memory", func(*testing.T) store.DataStore { return storetest.NewMemEventStore() }},
		{"storetest pebble", func(t *testing.T) store.DataStore {
			s, err := storetest.NewPebbleEventStore("")
			require.NoError(t, err)
			return s
		}},
	}
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) { storetest.TestDataStore(t, s.open) })
	}
}

// TestPebbleCloseRemovesTempDir: a Pebble store opened on "" removes its
// temporary directory at Close, and one opened on a directory keeps it.
func TestPebbleCloseRemovesTempDir(t *testing.T) {
	s, err := store.NewPebbleEventStore("")
	require.NoError(t, err)
	require.NoError(t, s.Close())
	_, err = os.Stat(s.Dir())
	require.True(t, errors.Is(err, os.ErrNotExist), "temporary directory %s left behind: %v", s.Dir(), err)

	dir := t.TempDir()
	s, err = store.NewPebbleEventStore(dir)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	_, err = os.Stat(dir)
	require.NoError(t, err, "a directory the caller gave is kept")
}
