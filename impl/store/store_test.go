package store_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/impl/store"
)

// TestMain switches on the bug named by DRAINPROOF_BUG (build tag bugs)
// and checks for leaked goroutines (Pebble's included).
func TestMain(m *testing.M) {
	bugs.SetupTest("store")
	goleak.VerifyTestMain(m)
}

var (
	_ store.EventStore = (*store.MemEventStore)(nil)
	_ store.DataStore  = (*store.MemEventStore)(nil)
	_ store.DataStore  = (*store.PebbleEventStore)(nil)
)
