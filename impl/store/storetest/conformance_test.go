package storetest_test

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/store/storetest"
)

// cappedEnv, when set, makes TestDataStorePassesAWholeStoreAndFailsACappedOne
// run the conformance suite against a capped store: the process it
// starts to see the suite fail.
const cappedEnv = "STORETEST_CAPPED_STORE"

// capped is an event store broken as a bounded buffer that forgets its
// limit would be: it keeps a table's first hundred events and drops the
// rest without an error.
type capped struct {
	store.DataStore
	mu   sync.Mutex
	kept map[store.TableID]int
}

func (c *capped) WriteEvents(table store.TableID, events []store.Event) error {
	c.mu.Lock()
	n := max(0, min(len(events), 100-c.kept[table]))
	c.kept[table] += n
	c.mu.Unlock()
	return c.DataStore.WriteEvents(table, events[:n])
}

// TestDataStorePassesAWholeStoreAndFailsACappedOne: the conformance
// suite passes the kit's in-memory event store, which keeps the
// DataStore contract, and fails a store that silently drops a table's
// writes past its hundredth event, in the one check that writes that
// many: the concurrent readers, which read every timestamp up to the
// resolved one. The failing suite runs in a process of its own (this
// test binary again), as a failing test cannot be run inside a passing
// one.
func TestDataStorePassesAWholeStoreAndFailsACappedOne(t *testing.T) {
	if os.Getenv(cappedEnv) != "" {
		storetest.TestDataStore(t, func(*testing.T) store.DataStore {
			return &capped{DataStore: store.NewMemEventStore(), kept: map[store.TableID]int{}}
		})
		return
	}
	storetest.TestDataStore(t, func(*testing.T) store.DataStore { return storetest.NewMemEventStore() })
	if t.Failed() {
		return // a suite that fails a whole store says nothing of a capped one
	}

	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), cappedEnv+"=1")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the suite passed a capped store:\n%s", out)
	var failed []string
	for _, line := range strings.Split(string(out), "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "--- FAIL: "); ok {
			failed = append(failed, strings.Fields(name)[0])
		}
	}
	require.ElementsMatch(t, []string{t.Name(), t.Name() + "/concurrent_writers_and_readers"}, failed, "%s", out)
	require.Contains(t, string(out), "read up to 100 of", "a reader stopped at the hundredth event")
}
