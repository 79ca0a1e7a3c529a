package modelcheck_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/drainproof/drainproof/modelcheck"
	"github.com/stretchr/testify/require"
)

// slowRing is a ring of n states whose Next pauses now and then, so a
// search and its liveness check each last long enough for several
// progress reports.
type slowRing struct{ ring }

func (r *slowRing) Next(x int, emit func(string, int)) {
	if x%256 == 0 {
		time.Sleep(time.Millisecond)
	}
	r.ring.Next(x, emit)
}

// The progress reports say what a user reads them for, in the search and
// in the liveness check: the queue lies between zero and the states found,
// and the rate is the states found since the last report over the time
// since it (the liveness check counts its graph's states afresh).
func TestProgressReportsRateAndQueue(t *testing.T) {
	var mu sync.Mutex
	var reports []modelcheck.Progress
	opts := modelcheck.Options{Workers: 1, ProgressEvery: 2 * time.Millisecond,
		Progress: func(p modelcheck.Progress) {
			mu.Lock()
			defer mu.Unlock()
			reports = append(reports, p)
		}}
	res, err := modelcheck.Check[int](context.Background(), &slowRing{ring{n: 30000, goal: 7, fair: "WF"}}, opts)
	require.NoError(t, err)
	require.Equal(t, modelcheck.OK, res.Outcome)
	mu.Lock()
	defer mu.Unlock()
	phases := map[string]int{}
	var prev modelcheck.Progress
	for i, p := range reports {
		phases[p.Phase]++
		require.GreaterOrEqual(t, p.Queue, int64(0), "report %d: %+v", i, p)
		require.LessOrEqual(t, p.Queue, p.Distinct, "report %d: the queue holds more states than were found: %+v", i, p)
		since := prev.Distinct
		if p.Distinct < since { // the liveness check counts afresh
			since = 0
		}
		want := float64(p.Distinct-since) / (p.Elapsed - prev.Elapsed).Seconds()
		require.InEpsilon(t, want+1, p.StatesPerSecond+1, 1e-9, "report %d: %+v after %+v", i, p, prev)
		prev = p
	}
	require.GreaterOrEqual(t, phases["bfs"], 3, "reports of the search: %v", phases)
	require.GreaterOrEqual(t, phases["liveness"], 3, "reports of the liveness check: %v", phases)
}

// A coverage report lists the actions of the given order first, in that
// order, and then the actions the order does not name, by name, whatever
// order they came in.
func TestSortCoverageOrdersUnnamedActionsLastByName(t *testing.T) {
	cov := []modelcheck.ActionCoverage{{Action: "Beta"}, {Action: "Yak"}, {Action: "Alpha"}, {Action: "Zed"}, {Action: "Aardvark"}}
	got := modelcheck.SortCoverage(cov, []string{"Zed", "Yak"})
	var names []string
	for _, c := range got {
		names = append(names, c.Action)
	}
	require.Equal(t, []string{"Zed", "Yak", "Aardvark", "Alpha", "Beta"}, names)
}
